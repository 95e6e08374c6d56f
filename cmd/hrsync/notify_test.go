package main

import (
	"fmt"
	"strings"
	"testing"

	"hrsync/config"
	"hrsync/internal/notify"
	"hrsync/internal/runner"
	"hrsync/model"
	"hrsync/sync/people"
)

func TestNotifyWants(t *testing.T) {
	n := notify.New(notify.Options{})
	for _, tenant := range []string{"problems", "always", "never"} {
		n.Add(tenant, &notify.Webhook{URL: "http://127.0.0.1:1"})
	}
	c := &cycleNotifier{n: n, on: map[string]string{"problems": config.NotifyProblems, "always": config.NotifyAlways,
		"never": config.NotifyNever, "silent": config.NotifyAlways}}
	want := map[string]map[model.RunOutcome]bool{
		"problems": {model.OutcomeOK: false, model.OutcomeAttention: true, model.OutcomeSafeguard: true, model.OutcomeFailed: true, model.OutcomeLocked: false,
			model.OutcomeInterrupted: false},
		"always": {model.OutcomeOK: true, model.OutcomeAttention: true, model.OutcomeSafeguard: true, model.OutcomeFailed: true, model.OutcomeLocked: false,
			model.OutcomeInterrupted: false},
		"never":  {model.OutcomeOK: false, model.OutcomeAttention: false, model.OutcomeFailed: false},
		"silent": {model.OutcomeFailed: false}, // no channel
	}
	for tenant, outcomes := range want {
		for o, w := range outcomes {
			if got := c.wants(tenant, o); got != w {
				t.Errorf("%s, %s: notified %v, want %v", tenant, o, got, w)
			}
		}
	}
}

// TestNotifyApproval: a tenant told about problems is told about an ok
// people cycle that took an approved export past the safeguards, and not
// about another ok cycle; a tenant told never is not told either.
func TestNotifyApproval(t *testing.T) {
	n := notify.New(notify.Options{})
	for _, tenant := range []string{"problems", "never"} {
		n.Add(tenant, &notify.Webhook{URL: "http://127.0.0.1:1"})
	}
	c := &cycleNotifier{n: n, on: map[string]string{"problems": config.NotifyProblems, "never": config.NotifyNever}}
	approved := runner.Result{Outcome: model.OutcomeOK, Report: &people.Report{Exports: []people.ExportReport{
		{Outcome: model.OutcomeOK, Approval: &people.Approval{By: "hr-admin", StoppedRun: "r1"}}}}}
	plain := runner.Result{Outcome: model.OutcomeOK, Report: &people.Report{Exports: []people.ExportReport{{Outcome: model.OutcomeOK}}}}
	for _, tc := range []struct {
		tenant string
		res    runner.Result
		want   bool
	}{{"problems", approved, true}, {"problems", plain, false}, {"never", approved, false}} {
		if got := c.wants(tc.tenant, tc.res.Outcome) || c.wantsApproval(tc.tenant, tc.res); got != tc.want {
			t.Errorf("%s, approved %v: told %v, want %v", tc.tenant, tc.res.Report.(*people.Report).Approved(), got, tc.want)
		}
	}
}

// TestNotifyEvent: a people cycle's event says in the HTML report's words
// what happened and what to do, with no command, and names its files,
// stops, rejected rows (bounded) and held externalIds.
func TestNotifyEvent(t *testing.T) {
	rep := &people.Report{Tenant: "acme", HeldGrants: 1, HeldExternalIDs: []string{"P7"}, Exports: []people.ExportReport{{
		Source: "employees.csv", Outcome: model.OutcomeSafeguard, ArchivedAs: "failed/employees.csv",
		Reports:    []string{"failed/employees.csv.report.html"},
		Safeguards: []people.Trip{{Name: "maxDepartedRatio", Message: "30 of 100 would depart"}},
	}}}
	for i := range notify.MaxRejections + 3 {
		rep.Exports[0].Rejections = append(rep.Exports[0].Rejections, model.Rejection{Line: i + 2, Field: "email", Reason: fmt.Sprint("bad ", i)})
	}
	c := &cycleNotifier{}
	res := runner.Result{Outcome: model.OutcomeSafeguard, Cause: "employees.csv: stopped", Next: "check it", Report: rep}
	e := c.event(runner.Key{Job: model.JobPeople, Tenant: "acme"}, res, nil)
	if e.Outcome != "safeguard" || !strings.HasPrefix(e.Cause, "employees.csv: A safeguard stopped this export before anything was changed") ||
		!strings.HasPrefix(e.Next, "Check the export against the HR system") || strings.Contains(e.Next, "hrsync run") ||
		len(e.Files) != 1 || e.Files[0].ArchivedAs != "failed/employees.csv" || len(e.Files[0].Reports) != 1 {
		t.Errorf("event %+v", e)
	}
	if len(e.Stops) != 1 {
		t.Errorf("stops %q", e.Stops)
	}
	if len(e.Rejections) != notify.MaxRejections || e.MoreRejections != 3 || e.Held[0] != "P7" {
		t.Errorf("%d rejections and %d more, held %v", len(e.Rejections), e.MoreRejections, e.Held)
	}
}
