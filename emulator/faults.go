package emulator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// When a fault strikes relative to the request taking effect.
const (
	// Before: the request is not applied; the fault is the whole answer.
	Before = "before"
	// After: the request is applied, then the fault replaces (or delays)
	// its answer, so the caller cannot tell whether it took effect.
	After = "after"
)

// Duration is a time.Duration that reads and writes JSON as a Go duration
// string ("250ms", "2s").
type Duration time.Duration

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads a duration string such as "250ms".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a duration string such as \"250ms\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("parse duration: %w", err)
	}
	*d = Duration(v)
	return nil
}

// Fault is an injected failure of the partner API. It strikes calls to
// one operation (by operationId) or to all ("*"); either every call, the
// next Count calls, or each call with probability Rate (drawn from the
// seeded random source), or both (at most Count calls, each with
// probability Rate). A fault adds Latency, then answers Status (with
// Retry-After when RetryAfter is set) or drops the connection (Drop);
// Latency alone delays the real answer. Faults are checked in the order
// they were added; the first that strikes wins.
type Fault struct {
	// ID is assigned by AddFault.
	ID int `json:"id"`
	// Operation is an operationId (createPeople, listOrders, getOrderStatus,
	// getProduct, personalizeCollection) or "*".
	Operation string `json:"operation"`
	// When is Before (the default) or After.
	When string `json:"when,omitempty"`
	// Status is the HTTP status to answer, 400-599; 0 for none.
	Status int `json:"status,omitempty"`
	// RetryAfter, when set, is sent as the Retry-After header (seconds).
	RetryAfter *int `json:"retryAfter,omitempty"`
	// Latency is waited before answering.
	Latency Duration `json:"latency,omitempty"`
	// Drop closes the connection without answering.
	Drop bool `json:"drop,omitempty"`
	// Rate in (0, 1] is the probability of striking each matching call;
	// 0 means 1 (every call).
	Rate float64 `json:"rate,omitempty"`
	// Count > 0 limits the fault to that many strikes, after which it is
	// removed; 0 means no limit.
	Count int `json:"count,omitempty"`
	// Hits counts the calls the fault struck.
	Hits int `json:"hits"`
}

func (f *Fault) validate() error {
	if f.Operation != "*" && !slices.Contains(OperationIDs(), f.Operation) {
		return fmt.Errorf("operation %q: want one of %s or \"*\"", f.Operation, strings.Join(OperationIDs(), ", "))
	}
	switch {
	case f.When == "":
		f.When = Before
	case f.When != Before && f.When != After:
		return fmt.Errorf("when %q: want %q or %q", f.When, Before, After)
	}
	switch {
	case f.Status != 0 && (f.Status < 400 || f.Status > 599):
		return fmt.Errorf("status %d: want 400-599", f.Status)
	case f.Status != 0 && f.Drop:
		return errors.New("status and drop: want one of them")
	case f.Status == 0 && !f.Drop && f.Latency <= 0:
		return errors.New("a fault needs a status, drop or latency")
	case f.Latency < 0 || time.Duration(f.Latency) > 10*time.Minute:
		return fmt.Errorf("latency %s: want 0-10m", time.Duration(f.Latency))
	case f.RetryAfter != nil && *f.RetryAfter < 0:
		return fmt.Errorf("retryAfter %d: want >= 0", *f.RetryAfter)
	case f.Rate < 0 || f.Rate > 1:
		return fmt.Errorf("rate %v: want 0-1", f.Rate)
	case f.Count < 0:
		return fmt.Errorf("count %d: want >= 0", f.Count)
	}
	return nil
}

func (f *Fault) describe() string {
	var what []string
	if f.Latency > 0 {
		what = append(what, "latency "+time.Duration(f.Latency).String())
	}
	if f.Status != 0 {
		what = append(what, fmt.Sprintf("status %d", f.Status))
	}
	if f.Drop {
		what = append(what, "drop")
	}
	return fmt.Sprintf("#%d %s %s", f.ID, f.When, strings.Join(what, " "))
}

// AddFault validates a fault, gives it an id and adds it after the others.
func (e *Emulator) AddFault(f Fault) (Fault, error) {
	f.Hits = 0
	if err := f.validate(); err != nil {
		return Fault{}, fmt.Errorf("fault: %w", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.faultSeq++
	f.ID = e.faultSeq
	e.faults = append(e.faults, &f)
	return f, nil
}

// Faults lists the active faults (a fault whose Count is used up is gone).
func (e *Emulator) Faults() []Fault {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Fault, 0, len(e.faults))
	for _, f := range e.faults {
		out = append(out, *f)
	}
	return out
}

// RemoveFault removes one fault and tells whether it was there.
func (e *Emulator) RemoveFault(id int) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, f := range e.faults {
		if f.ID == id {
			e.faults = slices.Delete(e.faults, i, i+1)
			return true
		}
	}
	return false
}

// ClearFaults removes every fault.
func (e *Emulator) ClearFaults() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.faults = nil
}

// pickFault returns a copy of the fault that strikes this call of op, if any.
func (e *Emulator) pickFault(op string) *Fault {
	if op == "" {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, f := range e.faults {
		if f.Operation != "*" && f.Operation != op {
			continue
		}
		if f.Rate > 0 && f.Rate < 1 && e.rng.Float64() >= f.Rate {
			continue
		}
		f.Hits++
		hit := *f
		if f.Count > 0 && f.Hits >= f.Count {
			e.faults = slices.Delete(e.faults, i, i+1)
		}
		return &hit
	}
	return nil
}

// serveWithFault serves one API call that a fault strikes.
func (e *Emulator) serveWithFault(w *statusWriter, r *http.Request, f *Fault) {
	ctx := r.Context()
	if f.When == Before {
		if !sleep(ctx, time.Duration(f.Latency)) {
			writeError(w, http.StatusServiceUnavailable, "unavailable", "request ended during injected latency")
			return
		}
		if f.Status == 0 && !f.Drop {
			e.serveAPI(w, r)
			return
		}
		answerFault(w, f)
		return
	}
	buf := &bufferedWriter{header: http.Header{}}
	e.serveAPI(buf, r)
	if !sleep(ctx, time.Duration(f.Latency)) {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "request ended during injected latency")
		return
	}
	if f.Status == 0 && !f.Drop {
		for k, v := range buf.header {
			w.Header()[k] = v
		}
		w.WriteHeader(buf.statusOr200())
		_, _ = w.Write(buf.body.Bytes())
		return
	}
	answerFault(w, f)
}

// answerFault answers the fault's status, or drops the connection.
func answerFault(w *statusWriter, f *Fault) {
	if f.Drop {
		drop(w)
		return
	}
	writeAPIError(w, &apiError{status: f.Status, code: codeFor(f.Status),
		msg: fmt.Sprintf("injected fault #%d", f.ID), retryAfter: f.RetryAfter})
}

// drop closes the connection without an answer: by hijacking it when the
// server allows that (HTTP/1.x), else by aborting the handler.
func drop(w *statusWriter) {
	conn, _, err := http.NewResponseController(w.ResponseWriter).Hijack()
	w.hijacked = true
	if w.finish != nil {
		w.finish()
	}
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

// bufferedWriter holds an answer so that a fault can replace it after the
// request took effect.
type bufferedWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedWriter) Header() http.Header { return b.header }

func (b *bufferedWriter) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}

func (b *bufferedWriter) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

func (b *bufferedWriter) statusOr200() int {
	if b.status == 0 {
		return http.StatusOK
	}
	return b.status
}
