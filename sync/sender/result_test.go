package sender

import (
	"testing"

	"hrsync/apiclient"
)

func TestResultMergeAndFatal(t *testing.T) {
	a := newResult()
	a.add(batchOutcome{calls: 2, applied: 3, granted: 30, unknown: 1,
		errs: []error{&apiclient.Error{Status: 500, Outcome: apiclient.OutcomeUnknown, Message: "boom"}}})
	b := newResult()
	b.add(batchOutcome{calls: 1, notApplied: 2, refusals: []Refusal{{ExternalID: "E1"}},
		errs: []error{&apiclient.Error{Status: 401, Outcome: apiclient.OutcomeNotApplied, Message: "who"}}})
	b.Resent, b.Skipped = 4, 5
	if c, fatal := a.Fatal(); fatal {
		t.Errorf("a 500 is fatal: %s", c)
	}
	a.Merge(b)
	if a.Calls != 3 || a.Applied != 3 || a.Granted != 30 || a.Unknown != 1 || a.NotApplied != 2 ||
		a.Resent != 4 || a.Skipped != 5 || a.Refused != 1 || len(a.Refusals) != 1 || len(a.Errors) != 2 {
		t.Errorf("merged %+v", a)
	}
	if a.Failures[apiclient.ClassServerError] != 1 || a.Failures[apiclient.ClassUnauthorized] != 1 {
		t.Errorf("failures %v", a.Failures)
	}
	if c, fatal := a.Fatal(); !fatal || c != apiclient.ClassUnauthorized {
		t.Errorf("fatal %q %v, want unauthorized", c, fatal)
	}
	a.Merge(b) // the same error twice is listed once
	if len(a.Errors) != 2 || a.Failures[apiclient.ClassUnauthorized] != 2 {
		t.Errorf("errors %v, failures %v", a.Errors, a.Failures)
	}
	for i := range 30 {
		a.addError(string(rune('a' + i)))
	}
	if len(a.Errors) != maxErrors {
		t.Errorf("%d errors listed, want at most %d", len(a.Errors), maxErrors)
	}
}
