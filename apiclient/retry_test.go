package apiclient

import (
	"net/http"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 3, 14, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		value  string
		want   time.Duration
		wantOK bool
	}{
		{"seconds", "5", 5 * time.Second, true},
		{"zero seconds", "0", 0, true},
		{"seconds with spaces", " 120 ", 2 * time.Minute, true},
		{"huge seconds saturate", "99999999999999999999999", time.Duration(1<<63 - 1), true},
		{"HTTP date ahead", "Fri, 14 Mar 2025 12:00:30 GMT", 30 * time.Second, true},
		{"RFC 850 date ahead", "Friday, 14-Mar-25 12:01:00 GMT", time.Minute, true},
		{"asctime date ahead", "Fri Mar 14 12:00:10 2025", 10 * time.Second, true},
		{"HTTP date in the past", "Fri, 14 Mar 2025 11:00:00 GMT", 0, true},
		{"empty", "", 0, false},
		{"negative seconds", "-1", 0, false},
		{"fraction", "1.5", 0, false},
		{"garbage", "soon", 0, false},
		{"ISO date is not an HTTP date", "2025-03-14T12:00:30Z", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseRetryAfter(tt.value, now)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("parseRetryAfter(%q) = %s, %t; want %s, %t", tt.value, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestBackoffBounds(t *testing.T) {
	tests := []struct {
		name      string
		base, max time.Duration
	}{
		{"milliseconds", time.Millisecond, 20 * time.Millisecond},
		{"defaults", DefaultBackoffBase, DefaultBackoffMax},
		{"base equals max", time.Second, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Many draws, so that both ends of the jitter range are exercised.
			for round := range 200 {
				b := newBackoff(tt.base, tt.max)
				for n := 1; n <= 30; n++ {
					got, stop := b.Next()
					if stop {
						t.Fatalf("round %d: backoff stopped at wait %d", round, n)
					}
					ceiling := min(tt.max, tt.base<<(n-1))
					if got < 0 || got >= ceiling {
						t.Fatalf("round %d: wait %d = %s, want in [0, %s)", round, n, got, ceiling)
					}
				}
			}
		})
	}
	t.Run("jitter spreads the waits", func(t *testing.T) {
		seen := map[time.Duration]bool{}
		for range 50 {
			b := newBackoff(time.Second, time.Minute)
			_, _ = b.Next()
			w, _ := b.Next() // in [0, 2s)
			seen[w] = true
		}
		if len(seen) < 2 {
			t.Errorf("50 second waits were all equal (%v): no jitter", seen)
		}
	})
}

func TestClassifyStatus(t *testing.T) {
	tests := []struct {
		name          string
		status        int
		retryAfter    bool
		wantRetryable bool
		wantOutcome   Outcome
	}{
		{"400 invalid input", http.StatusBadRequest, false, false, OutcomeNotApplied},
		{"401 bad token", http.StatusUnauthorized, false, false, OutcomeNotApplied},
		{"403 company not allowed", http.StatusForbidden, false, false, OutcomeNotApplied},
		{"404 unknown collection", http.StatusNotFound, false, false, OutcomeNotApplied},
		{"408 request timeout", http.StatusRequestTimeout, false, true, OutcomeNotApplied},
		{"422 not personalizable", http.StatusUnprocessableEntity, false, false, OutcomeNotApplied},
		{"429 with Retry-After", http.StatusTooManyRequests, true, true, OutcomeNotApplied},
		{"429 without Retry-After", http.StatusTooManyRequests, false, true, OutcomeNotApplied},
		{"500", http.StatusInternalServerError, false, true, OutcomeUnknown},
		{"500 with Retry-After", http.StatusInternalServerError, true, true, OutcomeUnknown},
		{"502", http.StatusBadGateway, false, true, OutcomeUnknown},
		{"503 with Retry-After", http.StatusServiceUnavailable, true, true, OutcomeNotApplied},
		{"503 without Retry-After", http.StatusServiceUnavailable, false, true, OutcomeUnknown},
		{"504", http.StatusGatewayTimeout, false, true, OutcomeUnknown},
		{"202 not expected", http.StatusAccepted, false, false, OutcomeUnknown},
		{"302 not followed", http.StatusFound, false, false, OutcomeUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, o := classifyStatus(tt.status, tt.retryAfter)
			if r != tt.wantRetryable || o != tt.wantOutcome {
				t.Errorf("classifyStatus(%d, %t) = %t, %s; want %t, %s", tt.status, tt.retryAfter, r, o, tt.wantRetryable, tt.wantOutcome)
			}
		})
	}
	t.Run("transport error before a connection", func(t *testing.T) {
		if r, o := classifyTransport(false); !r || o != OutcomeNotApplied {
			t.Errorf("classifyTransport(false) = %t, %s", r, o)
		}
	})
	t.Run("transport error after a connection", func(t *testing.T) {
		if r, o := classifyTransport(true); !r || o != OutcomeUnknown {
			t.Errorf("classifyTransport(true) = %t, %s", r, o)
		}
	})
}

func TestMayRetry(t *testing.T) {
	tests := []struct {
		name      string
		write     bool
		err       Error
		wantRetry bool
	}{
		{"read, transient, unknown", false, Error{Retryable: true, Outcome: OutcomeUnknown}, true},
		{"read, transient, not applied", false, Error{Retryable: true, Outcome: OutcomeNotApplied}, true},
		{"read, permanent", false, Error{Retryable: false, Outcome: OutcomeNotApplied}, false},
		{"write, transient, not applied (429, 503+Retry-After, dial)", true, Error{Retryable: true, Outcome: OutcomeNotApplied}, true},
		{"write, transient, unknown (500, timeout after send)", true, Error{Retryable: true, Outcome: OutcomeUnknown}, false},
		{"write, permanent", true, Error{Retryable: false, Outcome: OutcomeNotApplied}, false},
		{"write, applied", true, Error{Retryable: false, Outcome: OutcomeApplied}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mayRetry(tt.write, &tt.err); got != tt.wantRetry {
				t.Errorf("mayRetry = %t, want %t", got, tt.wantRetry)
			}
		})
	}
}
