package apiclient

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestClassOf(t *testing.T) {
	for _, c := range []struct {
		name  string
		err   error
		want  Class
		fatal bool
	}{
		{"nil", nil, "", false},
		{"401", &Error{Status: 401, Outcome: OutcomeNotApplied}, ClassUnauthorized, true},
		{"403, wrapped", fmt.Errorf("call: %w", &Error{Status: 403, Outcome: OutcomeNotApplied}), ClassForbidden, true},
		{"429", &Error{Status: 429, Outcome: OutcomeNotApplied}, ClassRateLimited, false},
		{"503 with Retry-After", &Error{Status: 503, Outcome: OutcomeNotApplied}, ClassRateLimited, false},
		{"503 without", &Error{Status: 503, Outcome: OutcomeUnknown}, ClassServerError, false},
		{"500", &Error{Status: 500, Outcome: OutcomeUnknown}, ClassServerError, false},
		{"400", &Error{Status: 400, Outcome: OutcomeNotApplied}, ClassRefused, false},
		{"413", &Error{Status: 413, Outcome: OutcomeNotApplied}, ClassRefused, false},
		{"invalid arguments", &Error{Outcome: OutcomeNotApplied, Err: fmt.Errorf("%w: no collection", ErrInvalidRequest)}, ClassRefused, false},
		{"undecodable answer", &Error{Status: 201, Outcome: OutcomeApplied, Err: ErrBadResponse}, ClassBadAnswer, false},
		{"connection refused", &Error{Outcome: OutcomeNotApplied, Err: errors.New("dial tcp: connect: connection refused")}, ClassUnreachable, false},
		{"timeout after sending", &Error{Outcome: OutcomeUnknown, Err: context.DeadlineExceeded}, ClassUnreachable, false},
		{"cancelled", &Error{Outcome: OutcomeNotApplied, Err: context.Canceled}, ClassStopped, false},
		{"not a client error", errors.New("boom"), ClassOther, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ClassOf(c.err)
			if got != c.want || got.Fatal() != c.fatal {
				t.Errorf("ClassOf = %q (fatal %v), want %q (fatal %v)", got, got.Fatal(), c.want, c.fatal)
			}
			if c.err != nil && (got.Describe() == "" || got.NextStep() == "") {
				t.Errorf("class %q has no words for an operator", got)
			}
		})
	}
}
