package apiclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
)

func TestErrorText(t *testing.T) {
	tests := []struct {
		name string
		err  *Error
		want string
	}{
		{"status with code and message", &Error{Op: OpCreatePeople, Status: 422, Code: "not_personalizable", Message: "no", Outcome: OutcomeNotApplied, Attempts: 1},
			"createPeople: status 422: not_personalizable: no (not applied)"},
		{"transport error after retries", &Error{Op: OpGetProduct, Err: io.ErrUnexpectedEOF, Outcome: OutcomeUnknown, Attempts: 3},
			"getProduct: unexpected EOF (outcome unknown, 3 attempts)"},
		{"applied", &Error{Op: OpListOrders, Status: 200, Err: ErrBadResponse, Outcome: OutcomeApplied, Attempts: 1},
			"listOrders: status 200: bad response (applied)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("unknown outcome value", func(t *testing.T) {
		if got := Outcome(9).String(); got != "outcome(9)" {
			t.Errorf("String() = %q", got)
		}
	})
}

func TestErrorHelpers(t *testing.T) {
	unknown := &Error{Op: OpCreatePeople, Status: 500, Retryable: true, Outcome: OutcomeUnknown}
	notApplied := &Error{Op: OpCreatePeople, Status: 429, Retryable: true, Outcome: OutcomeNotApplied}
	timeout := &Error{Op: OpPersonalize, Outcome: OutcomeUnknown, Err: fmt.Errorf("no answer: %w", context.DeadlineExceeded)}
	tests := []struct {
		name                                string
		err                                 error
		wantUnknown, wantNotApplied, wantRe bool
		wantStatus                          int
	}{
		{"nil", nil, false, false, false, 0},
		{"unknown", unknown, true, false, true, 500},
		{"not applied", notApplied, false, true, true, 429},
		{"wrapped", fmt.Errorf("create batch 3: %w", notApplied), false, true, true, 429},
		{"foreign error counts as unknown", errors.New("something else"), true, false, false, 0},
		{"timeout", timeout, true, false, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsOutcomeUnknown(tt.err); got != tt.wantUnknown {
				t.Errorf("IsOutcomeUnknown = %t", got)
			}
			if got := IsNotApplied(tt.err); got != tt.wantNotApplied {
				t.Errorf("IsNotApplied = %t", got)
			}
			if got := IsRetryable(tt.err); got != tt.wantRe {
				t.Errorf("IsRetryable = %t", got)
			}
			if got := StatusCode(tt.err); got != tt.wantStatus {
				t.Errorf("StatusCode = %d", got)
			}
		})
	}
	t.Run("cause visible to errors.Is", func(t *testing.T) {
		if !errors.Is(fmt.Errorf("outer: %w", timeout), context.DeadlineExceeded) {
			t.Error("errors.Is does not see the deadline")
		}
	})
}
