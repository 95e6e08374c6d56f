package people

import (
	"strings"
	"testing"

	"hrsync/apiclient"
	"hrsync/model"
	"hrsync/sources"
	"hrsync/sync/sender"
)

func TestJudgeApply(t *testing.T) {
	refused := map[apiclient.Class]int{apiclient.ClassRefused: 2}
	for _, c := range []struct {
		name     string
		plan     Plan
		res      Result
		want     model.RunOutcome
		causeHas []string
	}{
		{"everything created", Plan{}, Result{Result: sender.Result{Calls: 2, Applied: 150, Granted: 3750}}, model.OutcomeOK,
			[]string{"150 people created, 3750.00 granted"}},
		{"nothing to create", Plan{}, Result{}, model.OutcomeOK, []string{"nothing to create"}},
		{"a refused token fails the run even after a success", Plan{},
			Result{Result: sender.Result{Calls: 2, Applied: 100, NotApplied: 100, Failures: map[apiclient.Class]int{apiclient.ClassUnauthorized: 1}}},
			model.OutcomeFailed, []string{"401 unauthorized) on 1 of 2 createPeople calls", "100 people created, 0.00 granted before that"}},
		{"every call refused", Plan{}, Result{Result: sender.Result{Calls: 2, NotApplied: 150, Failures: refused}}, model.OutcomeFailed,
			[]string{"refused the request as invalid on 2 createPeople calls (every call of the run); nothing was granted"}},
		{"some people refused", Plan{}, Result{Result: sender.Result{Calls: 3, Applied: 100, NotApplied: 50, Failures: map[apiclient.Class]int{apiclient.ClassRefused: 1}}},
			model.OutcomeAttention, []string{"100 people created", "50 people not created (the platform refused the request as invalid)"}},
		{"unknown outcomes are held, not failed", Plan{}, Result{Result: sender.Result{Calls: 1, Unknown: 100, Failures: map[apiclient.Class]int{apiclient.ClassServerError: 1}}},
			model.OutcomeAttention, []string{"100 grants held"}},
		{"rejected rows count rows, not their problems", Plan{Stats: sources.Stats{Rows: 13, Accepted: 10, Rejected: 3},
			Rejections: []model.Rejection{{Line: 2, Field: "email"}, {Line: 2, Field: "startDate"}, {Line: 5}, {Line: 9}}},
			Result{Result: sender.Result{Calls: 1, Applied: 10, Granted: 250}},
			model.OutcomeAttention, []string{"10 people created, 250.00 granted; 3 rows rejected"}},
		{"people refused on their own have their outcome", Plan{}, Result{Result: sender.Result{Calls: 7, Applied: 98, Granted: 2450, Refused: 2,
			Refusals: []Refusal{
				{ExternalID: "E7", Reason: "refused by the platform: 400 invalid_input: addBalance: above the maximum of 1000000"},
				{ExternalID: "E9", Reason: "refused by the platform: 400 invalid_input: addBalance: above the maximum of 1000000"},
			}}},
			model.OutcomeAttention, []string{"98 people created, 2450.00 granted; 2 people refused by the platform " +
				"(400 invalid_input: addBalance: above the maximum of 1000000): E7, E9"}},
		{"refused alone with nothing else created is attention, not failed", Plan{}, Result{Result: sender.Result{Calls: 3, Refused: 1,
			Refusals: []Refusal{{ExternalID: "E1", Reason: "refused by the platform: 413 payload_too_large"}}}},
			model.OutcomeAttention, []string{"0 people created", "1 person refused by the platform (413 payload_too_large): E1"}},
		{"many refusals name five", Plan{}, Result{Result: sender.Result{Calls: 20, Applied: 1, Refused: 7, Refusals: []Refusal{
			{ExternalID: "A", Reason: "x"}, {ExternalID: "B", Reason: "y"}, {ExternalID: "C"}, {ExternalID: "D"},
			{ExternalID: "E"}, {ExternalID: "F"}, {ExternalID: "G"}}}},
			model.OutcomeAttention, []string{"7 people refused by the platform (x; and other reasons): A, B, C, D, E and 2 more"}},
		{"money is never in scientific notation", Plan{}, Result{Result: sender.Result{Calls: 1, Applied: 1, Granted: 1102475}}, model.OutcomeOK,
			[]string{"1102475.00 granted"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := judgeApply(&c.plan, &c.res, 0)
			if v.outcome != c.want {
				t.Errorf("outcome %s, want %s (cause %q)", v.outcome, c.want, v.cause)
			}
			for _, want := range c.causeHas {
				if !strings.Contains(v.cause, want) {
					t.Errorf("cause %q does not say %q", v.cause, want)
				}
			}
			if v.outcome != model.OutcomeOK && v.next == "" {
				t.Errorf("no next step for %s", v.outcome)
			}
		})
	}
}

// TestHeldGrantsNeedAttention: grants held from earlier runs make a cycle
// that would end ok need attention, with a cause that names them, never
// an empty one, whether it read an export or none.
func TestHeldGrantsNeedAttention(t *testing.T) {
	clean := Result{Result: sender.Result{Calls: 1, Applied: 5, Granted: 125}}
	if v := judgeApply(&Plan{}, &clean, 3); v.outcome != model.OutcomeAttention ||
		v.cause != "5 people created, 125.00 granted; 3 grants held from earlier runs" || v.next != heldNext || v.err() == nil {
		t.Errorf("a clean export while 3 grants are held: %+v", v)
	}
	if v := judgeApply(&Plan{}, &clean, 0); v.outcome != model.OutcomeOK || v.err() != nil {
		t.Errorf("a clean export with no grant held: %+v", v)
	}
	failed := verdict{outcome: model.OutcomeFailed, cause: "refused"}
	if v := withHeld(failed, 3); v != failed {
		t.Errorf("held grants changed a failed verdict: %+v", v)
	}
	for _, c := range []struct {
		name      string
		rep       Report
		want      model.RunOutcome
		wantCause string
	}{
		{"no export", Report{}, model.OutcomeOK, "no export ready"},
		{"no export, grants held", Report{HeldGrants: 2}, model.OutcomeAttention, "no export ready; 2 grants held from earlier runs"},
		{"an ok export, grants held since", Report{HeldGrants: 1, Exports: []ExportReport{{Source: "a.csv", Outcome: model.OutcomeOK, Cause: "done"}}},
			model.OutcomeAttention, "1 grant held from earlier runs"},
	} {
		outcome, cause, next := c.rep.Summary()
		if outcome != c.want || cause != c.wantCause || (outcome == model.OutcomeAttention) != (next == heldNext) {
			t.Errorf("%s: %s %q %q, want %s %q", c.name, outcome, cause, next, c.want, c.wantCause)
		}
	}
}
