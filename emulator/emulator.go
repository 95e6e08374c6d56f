// Package emulator is an in-memory emulator of the gifting platform's
// partner API (../shared/spec/external-commerce-api.md, with the assumptions
// of ../shared/DESIGN.md and the contract api/openapi.yaml). It serves the
// five endpoints over real HTTP, starts with a deterministic built-in
// dataset, and offers test endpoints under /_emulator/ (and the same
// operations as Go methods) to read its state, place and ship orders,
// inject faults, read the request log and reset. docs/emulator.md describes
// it for people; docs/personalization.md defines the derived fields.
package emulator

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"hrsync/api"
)

// Defaults for the zero values of Options.
const (
	DefaultOrdersMaxRows = 500
	DefaultMaxBodyBytes  = 8 << 20
	// DefaultMaxFieldChars is the longest string field of a person a
	// createPeople call may carry, in characters (400 beyond).
	DefaultMaxFieldChars = 10000
	// DefaultMaxBalance is the largest addBalance or amount of a
	// createPeople call (400 beyond).
	DefaultMaxBalance = 1_000_000
	// DefaultRequestLogSize is how many requests the log keeps (the oldest go first).
	DefaultRequestLogSize = 10000
)

// DefaultPersonalizeDelay is the processing time of a personalize call when
// Options.PersonalizeDelay is nil: 15 to 20 seconds, as the spec says.
func DefaultPersonalizeDelay() DelayRange {
	return DelayRange{Min: 15 * time.Second, Max: 20 * time.Second}
}

// DelayRange is a processing time drawn uniformly in [Min, Max] with the
// emulator's seeded random source. Min equal to Max is a fixed delay; the
// zero DelayRange is no delay.
type DelayRange struct {
	Min, Max time.Duration
}

// String renders the range as ParseDelayRange reads it ("1s" or "15s-20s").
func (d DelayRange) String() string {
	if d.Min == d.Max {
		return d.Min.String()
	}
	return d.Min.String() + "-" + d.Max.String()
}

// ParseDelayRange reads a delay such as "1s", "250ms", "0" or a range
// "15s-20s".
func ParseDelayRange(s string) (DelayRange, error) {
	s = strings.TrimSpace(s)
	first, second, isRange := strings.Cut(s, "-")
	lo, err := time.ParseDuration(strings.TrimSpace(first))
	if err != nil {
		return DelayRange{}, fmt.Errorf("parse delay %q: %w", s, err)
	}
	hi := lo
	if isRange {
		if hi, err = time.ParseDuration(strings.TrimSpace(second)); err != nil {
			return DelayRange{}, fmt.Errorf("parse delay %q: %w", s, err)
		}
	}
	d := DelayRange{Min: lo, Max: hi}
	if err := d.validate(); err != nil {
		return DelayRange{}, err
	}
	return d, nil
}

func (d DelayRange) validate() error {
	if d.Min < 0 || d.Max < d.Min {
		return fmt.Errorf("delay %s: want 0 <= min <= max", d)
	}
	return nil
}

// Options configures an Emulator. The zero value of each field has a
// documented default.
type Options struct {
	// Tokens maps each accepted bearer token to the company ids it may act
	// for. A token with no companies sees the built-in dataset's company.
	// With no tokens at all, every API call answers 401.
	Tokens map[string][]string
	// PersonalizeDelay is how long a first personalize call blocks; nil
	// means DefaultPersonalizeDelay (15-20 s), &DelayRange{} means none.
	PersonalizeDelay *DelayRange
	// OrdersMaxRows caps the rows of one orders list answer (count still
	// tells the total); 0 means DefaultOrdersMaxRows.
	OrdersMaxRows int
	// Clock tells the time: grant and order times, the request log, and the
	// "now" of personalization. Nil means time.Now.
	Clock func() time.Time
	// Seed seeds the random source of personalize delays and fault rates,
	// so that a sequence of calls behaves the same on every run.
	Seed int64
	// MaxBodyBytes bounds request bodies (413 beyond); 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxFieldChars bounds each string field of a person in a createPeople
	// call, in characters (400 naming the field beyond); 0 means
	// DefaultMaxFieldChars.
	MaxFieldChars int
	// MaxBalance bounds each addBalance and the amount of a createPeople
	// call (400 naming the field beyond); 0 means DefaultMaxBalance.
	MaxBalance float64
	// Logger receives one line per API request (never a token); nil means none.
	Logger *zap.Logger
}

// Emulator is the partner API in memory. It is an http.Handler, safe for
// concurrent use. Create it with New.
type Emulator struct {
	opts    Options
	delay   DelayRange
	catalog *catalog // read-only after New
	apiMux  *http.ServeMux
	admin   *http.ServeMux

	mu       sync.Mutex // guards everything below
	limits   Limits
	st       *state
	rng      *rand.Rand
	faults   []*Fault
	faultSeq int

	// logMu guards log alone, so that a request is recorded while its
	// handler holds mu (taken after mu, never before it).
	logMu sync.Mutex
	log   []RequestLogEntry
}

// New returns an emulator loaded with the built-in dataset.
func New(opts Options) (*Emulator, error) {
	if opts.OrdersMaxRows == 0 {
		opts.OrdersMaxRows = DefaultOrdersMaxRows
	}
	if opts.OrdersMaxRows < 0 {
		return nil, fmt.Errorf("orders max rows %d: want > 0", opts.OrdersMaxRows)
	}
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.MaxBodyBytes < 0 {
		return nil, fmt.Errorf("max body bytes %d: want > 0", opts.MaxBodyBytes)
	}
	if opts.MaxFieldChars == 0 {
		opts.MaxFieldChars = DefaultMaxFieldChars
	}
	if opts.MaxBalance == 0 {
		opts.MaxBalance = DefaultMaxBalance
	}
	start := Limits{MaxBodyBytes: opts.MaxBodyBytes, MaxFieldChars: opts.MaxFieldChars, MaxBalance: opts.MaxBalance}
	if err := start.validate(); err != nil {
		return nil, err
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	delay := DefaultPersonalizeDelay()
	if opts.PersonalizeDelay != nil {
		delay = *opts.PersonalizeDelay
	}
	if err := delay.validate(); err != nil {
		return nil, err
	}
	tokens := make(map[string][]string, len(opts.Tokens))
	for tok, companies := range opts.Tokens {
		if tok == "" {
			return nil, errors.New("empty token")
		}
		if len(companies) == 0 {
			companies = []string{DatasetCompanyID}
		}
		tokens[tok] = append([]string(nil), companies...)
	}
	opts.Tokens = tokens

	e := &Emulator{opts: opts, delay: delay, catalog: builtinCatalog()}
	e.resetLocked()
	e.apiMux = http.NewServeMux()
	e.apiMux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no endpoint %s %s", r.Method, r.URL.Path))
	})
	api.HandlerWithOptions(apiHandlers{e}, api.StdHTTPServerOptions{
		BaseRouter:       e.apiMux,
		ErrorHandlerFunc: paramError,
	})
	e.admin = e.adminMux()
	return e, nil
}

// resetLocked loads the built-in dataset and forgets faults, the request
// log and personalizations. The caller holds e.mu, or owns e exclusively.
func (e *Emulator) resetLocked() {
	e.st = newState(e.catalog, e.opts.Clock())
	e.rng = rand.New(rand.NewPCG( //nolint:gosec // a seeded, repeatable source for delays and fault rates, not for secrets
		uint64(e.opts.Seed), uint64(e.opts.Seed)^0x9e3779b97f4a7c15))
	e.faults = nil
	e.faultSeq = 0
	e.ClearRequests()
	e.limits = Limits{MaxBodyBytes: e.opts.MaxBodyBytes, MaxFieldChars: e.opts.MaxFieldChars, MaxBalance: e.opts.MaxBalance}
}

// Reset puts the emulator back to the built-in dataset: people, balances,
// orders and personalizations as at start, no faults, an empty request
// log, the limits of its Options, and the random source reseeded.
func (e *Emulator) Reset() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.resetLocked()
}

// ctxKey keys the values the emulator puts in a request's context.
type ctxKey int

const companiesKey ctxKey = 1

// operationID maps a generated route's pattern to its operationId.
func operationID(pattern string) string {
	switch pattern {
	case "POST /api/ext/v1/collection/{collectionId}/orders/get":
		return "listOrders"
	case "POST /api/ext/v1/collection/{collectionId}/personalize":
		return "personalizeCollection"
	case "GET /api/ext/v1/collection/{collectionId}/product/{productId}":
		return "getProduct"
	case "POST /api/ext/v1/people":
		return "createPeople"
	case "GET /api/ext/v1/collection/{collectionId}/orders/{orderId}":
		return "getOrderStatus"
	}
	return ""
}

// OperationIDs lists the operationIds a fault may name (besides "*").
func OperationIDs() []string {
	return []string{"createPeople", "listOrders", "getOrderStatus", "getProduct", "personalizeCollection"}
}

// ServeHTTP serves the partner API under /api/ext/v1/ and the test
// endpoints under /_emulator/.
func (e *Emulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/_emulator" || strings.HasPrefix(r.URL.Path, "/_emulator/") {
		r.Body = http.MaxBytesReader(w, r.Body, e.opts.MaxBodyBytes)
		e.admin.ServeHTTP(w, r)
		return
	}
	start := e.opts.Clock()
	r.Body = http.MaxBytesReader(w, r.Body, e.Limits().MaxBodyBytes)
	_, pattern := e.apiMux.Handler(r)
	op := operationID(pattern)
	fault := e.pickFault(op)
	entry := RequestLogEntry{
		Time:           start,
		Method:         r.Method,
		Path:           r.URL.Path,
		OperationID:    op,
		IdempotencyKey: r.Header.Get("Idempotency-Key"),
	}
	if fault != nil {
		entry.Fault = fault.describe()
	}
	sw := &statusWriter{ResponseWriter: w}
	logged := false
	// finish records the request once: when its status is written, before
	// the answer leaves; just before a dropped connection is closed; or at
	// the end (the caller may look at the log as soon as it sees an answer
	// or the connection close).
	sw.finish = func() {
		if logged {
			return
		}
		logged = true
		entry.Status, entry.Dropped = sw.status, sw.hijacked
		e.record(entry)
		e.opts.Logger.Info("request",
			zap.String("method", entry.Method), zap.String("path", entry.Path),
			zap.String("operation", op), zap.Int("status", entry.Status),
			zap.String("idempotency_key", entry.IdempotencyKey), zap.String("fault", entry.Fault),
			zap.Bool("dropped", entry.Dropped), zap.Duration("took", e.opts.Clock().Sub(start)))
	}
	if fault != nil {
		e.serveWithFault(sw, r, fault)
	} else {
		e.serveAPI(sw, r)
	}
	sw.finish()
}

// serveAPI authenticates the request and routes it to its operation.
func (e *Emulator) serveAPI(w http.ResponseWriter, r *http.Request) {
	companies, ok := e.authenticate(r)
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="partner-api"`)
		writeError(w, http.StatusUnauthorized, "unauthorized", "missing or unknown bearer token")
		return
	}
	e.apiMux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), companiesKey, companies)))
}

// authenticate returns the companies the request's bearer token sees.
func (e *Emulator) authenticate(r *http.Request) ([]string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return nil, false
	}
	companies, ok := e.opts.Tokens[strings.TrimSpace(token)]
	return companies, ok
}

// resolveCompany picks the company a request acts for: the one it names,
// when the token sees it (403 otherwise), or the token's only company.
func resolveCompany(ctx context.Context, requested *string) (string, *apiError) {
	companies, _ := ctx.Value(companiesKey).([]string)
	if requested != nil && *requested != "" {
		for _, c := range companies {
			if c == *requested {
				return c, nil
			}
		}
		return "", &apiError{status: http.StatusForbidden, code: "forbidden", msg: "the token may not act for this companyId"}
	}
	if len(companies) == 1 {
		return companies[0], nil
	}
	return "", errInvalid("companyId is required: the token sees more than one company")
}

// RequestLogEntry is one API request the emulator served (never its token
// nor its body).
type RequestLogEntry struct {
	Time           time.Time `json:"time"`
	Method         string    `json:"method"`
	Path           string    `json:"path"`
	OperationID    string    `json:"operationId,omitempty"`
	Status         int       `json:"status"` // 0 when the connection was dropped
	IdempotencyKey string    `json:"idempotencyKey,omitempty"`
	Fault          string    `json:"fault,omitempty"` // the injected fault, e.g. "#1 after status 503"
	Dropped        bool      `json:"dropped,omitempty"`
}

func (e *Emulator) record(entry RequestLogEntry) {
	e.logMu.Lock()
	defer e.logMu.Unlock()
	if len(e.log) >= DefaultRequestLogSize {
		e.log = append(e.log[:0], e.log[len(e.log)-DefaultRequestLogSize+1:]...)
	}
	e.log = append(e.log, entry)
}

// Requests returns the request log, oldest first.
func (e *Emulator) Requests() []RequestLogEntry {
	e.logMu.Lock()
	defer e.logMu.Unlock()
	return append([]RequestLogEntry(nil), e.log...)
}

// ClearRequests empties the request log.
func (e *Emulator) ClearRequests() {
	e.logMu.Lock()
	defer e.logMu.Unlock()
	e.log = nil
}

// statusWriter remembers the status written and whether the connection was
// taken over.
type statusWriter struct {
	http.ResponseWriter
	status   int
	hijacked bool
	finish   func() // records the request in the log, once
}

// WriteHeader records the request with its status before the answer
// leaves: a client never sees an answer the log does not hold yet.
func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
		s.finish()
	}
	s.ResponseWriter.WriteHeader(code)
}

// Write answers 200 when no status was written, recorded as WriteHeader
// does.
func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
		s.finish()
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// sleep waits for d or until ctx is done, and tells whether it waited in full.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
