package apiclient

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sethvargo/go-retry"
)

// newBackoff returns the waits between the attempts of one call: exponential
// from base, capped at max, with full jitter (each wait is uniform in
// [0, min(max, base*2^(n-1)))), which spreads concurrent callers apart.
func newBackoff(base, max time.Duration) retry.Backoff {
	return retry.WithFullJitter(retry.WithCappedDuration(max, retry.NewExponential(base)))
}

// maxRetryAfterSeconds keeps a huge Retry-After from overflowing a Duration.
const maxRetryAfterSeconds = math.MaxInt64 / int64(time.Second)

// parseRetryAfter reads a Retry-After value: a number of seconds, or an HTTP
// date (RFC 9110, section 10.2.3) taken relative to now. A date in the past
// means no wait. ok is false when the value is absent or not understood, so
// that the caller falls back to its own backoff.
func parseRetryAfter(v string, now time.Time) (wait time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if isDigits(v) {
		secs, err := strconv.ParseInt(v, 10, 64)
		if err != nil || secs > maxRetryAfterSeconds {
			// Too many digits for an int64: a wait longer than any cap.
			return time.Duration(math.MaxInt64), true
		}
		return time.Duration(secs) * time.Second, true
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(at.Sub(now), 0), true
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// classifyStatus says, for an answer with a status the operation does not
// treat as success, whether trying again may help and whether the request
// is known not to have been applied.
func classifyStatus(status int, hasRetryAfter bool) (retryable bool, outcome Outcome) {
	switch {
	case status == http.StatusTooManyRequests:
		// Refused by the rate limiter, before any processing.
		return true, OutcomeNotApplied
	case status == http.StatusRequestTimeout:
		// The server gave up reading the request: it never had all of it.
		return true, OutcomeNotApplied
	case status == http.StatusServiceUnavailable && hasRetryAfter:
		// The contract: 503 with Retry-After means "not processed, come back".
		return true, OutcomeNotApplied
	case status >= 500:
		// A fault at the platform: the request may or may not have been applied.
		return true, OutcomeUnknown
	case status >= 400:
		// Refused: invalid input, auth, unknown resource, not personalizable.
		return false, OutcomeNotApplied
	default:
		// A 1xx, 2xx or 3xx the operation does not expect: the platform
		// received the request and did something we cannot interpret.
		return false, OutcomeUnknown
	}
}

// classifyTransport says the same for an exchange that produced no answer.
// sent is whether a connection to the platform was obtained for the
// request: without one nothing was sent, so nothing can have been applied.
// With one, the bytes may have reached the platform, which may have acted.
func classifyTransport(sent bool) (retryable bool, outcome Outcome) {
	if !sent {
		return true, OutcomeNotApplied
	}
	return true, OutcomeUnknown
}

// mayRetry decides whether a failed attempt is tried again. Reads are tried
// again whenever the failure is transient. Writes are tried again only when
// the request is known not to have been applied, so a resend cannot apply
// it twice.
func mayRetry(write bool, e *Error) bool {
	if !e.Retryable {
		return false
	}
	return !write || e.Outcome == OutcomeNotApplied
}

// sleepCtx waits d, or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
