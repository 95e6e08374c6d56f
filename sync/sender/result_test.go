package sender

import (
	"strings"
	"testing"

	"hrsync/apiclient"
	"hrsync/model"
	"hrsync/store"
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

func TestNewChecksItsOptions(t *testing.T) {
	if _, err := New(Options{BatchSize: -1}, nil, nil, nil); err == nil {
		t.Fatal("options without tenant, job or collection accepted")
	} else {
		for _, want := range []string{"tenant is required", "job is required", "collection id is required", "must not be negative"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		}
	}
	s, err := New(Options{Tenant: "acme", Job: model.JobGrants, Rule: "birthday", CollectionID: "c"}, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.BatchSize() != 100 || s.opts.Concurrency != 4 || s.opts.FinishTimeout == 0 {
		t.Errorf("defaults: batch %d, concurrency %d, finish timeout %v", s.BatchSize(), s.opts.Concurrency, s.opts.FinishTimeout)
	}
	if sc := s.Scope(); sc != (store.Scope{Job: model.JobGrants, Rule: "birthday"}) {
		t.Errorf("scope %+v", sc)
	}
}
