package apiclient

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Outcome says what is known about a request's effect on the platform.
type Outcome int

const (
	// OutcomeUnknown means the request may or may not have been applied (a
	// timeout after it was sent, a 5xx, a connection lost after sending).
	// It is the zero value, so an Outcome nobody set errs on the safe side.
	OutcomeUnknown Outcome = iota
	// OutcomeNotApplied means the platform certainly did not apply the request
	// (it was never sent, or the platform refused it: 4xx, 429, 503 with
	// Retry-After). Sending it again cannot apply it twice.
	OutcomeNotApplied
	// OutcomeApplied means the platform answered success, yet the call failed
	// afterwards (its answer could not be read).
	OutcomeApplied
)

// String names the outcome.
func (o Outcome) String() string {
	switch o {
	case OutcomeNotApplied:
		return "not applied"
	case OutcomeApplied:
		return "applied"
	case OutcomeUnknown:
		return "outcome unknown"
	default:
		return fmt.Sprintf("outcome(%d)", int(o))
	}
}

// Sentinel causes an *Error can wrap.
var (
	// ErrInvalidRequest: the call's arguments were refused before anything was sent.
	ErrInvalidRequest = errors.New("invalid request")
	// ErrUnexpectedStatus: the platform answered a status the contract does
	// not give the operation.
	ErrUnexpectedStatus = errors.New("unexpected status")
	// ErrBadResponse: a success answer whose body could not be read or
	// decoded, or that answers another question than the one asked (an
	// order's status that names another order).
	ErrBadResponse = errors.New("bad response")
	// ErrOrdersOverflow: one user on one day has more orders than the
	// platform returns in one answer, so some cannot be listed.
	ErrOrdersOverflow = errors.New("orders overflow a single request")
)

// Error is the one error type the Client returns, for every operation and
// every failure (invalid arguments, transport, HTTP status, decoding).
type Error struct {
	// Op is the operation that failed.
	Op Operation
	// Status is the HTTP status of the last answer, 0 when there was none.
	Status int
	// Code and Message come from the platform's JSON error body, if any.
	Code    string
	Message string
	// Retryable reports whether the failure is transient, so that trying
	// again later may succeed. For a write it says nothing about safety:
	// only an Outcome of OutcomeNotApplied makes a resend safe.
	Retryable bool
	// Outcome says whether the request is known to have been applied.
	Outcome Outcome
	// Attempts is the number of HTTP attempts made, 0 if none was.
	Attempts int
	// RetryAfter is the wait the platform asked for in its last answer
	// (before capping), 0 when it asked for none.
	RetryAfter time.Duration
	// Err is the underlying cause, if any: a transport error, a context
	// error, or one of the sentinels of this package.
	Err error

	retryAfterSet bool // the answer carried a Retry-After the client understood
}

// Error describes the failure. It never holds the token or a request body.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(string(e.Op))
	if e.Status != 0 {
		fmt.Fprintf(&b, ": status %d", e.Status)
	}
	if e.Code != "" {
		fmt.Fprintf(&b, ": %s", e.Code)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	fmt.Fprintf(&b, " (%s", e.Outcome)
	if e.Attempts > 1 {
		fmt.Fprintf(&b, ", %d attempts", e.Attempts)
	}
	b.WriteString(")")
	return b.String()
}

// Unwrap returns the cause, so errors.Is(err, context.DeadlineExceeded) and
// the like see through an *Error.
func (e *Error) Unwrap() error { return e.Err }

// AsError returns the *Error in err's chain, if there is one.
func AsError(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// IsOutcomeUnknown reports whether err leaves unknown whether the request
// was applied. A non-nil error that is not an *Error counts as unknown:
// nothing proves otherwise. A nil error is not unknown.
func IsOutcomeUnknown(err error) bool {
	if err == nil {
		return false
	}
	e, ok := AsError(err)
	return !ok || e.Outcome == OutcomeUnknown
}

// IsNotApplied reports whether err proves the request was not applied, so
// that sending it again cannot apply it twice.
func IsNotApplied(err error) bool {
	e, ok := AsError(err)
	return ok && e.Outcome == OutcomeNotApplied
}

// IsRetryable reports whether err is transient (see Error.Retryable).
func IsRetryable(err error) bool {
	e, ok := AsError(err)
	return ok && e.Retryable
}

// StatusCode returns the HTTP status carried by err, 0 if none.
func StatusCode(err error) int {
	if e, ok := AsError(err); ok {
		return e.Status
	}
	return 0
}
