package people

import (
	"strings"
	"testing"

	"hrsync/apiclient"
	"hrsync/model"
	"hrsync/store"
)

func TestJudgeApply(t *testing.T) {
	refused := map[apiclient.Class]int{apiclient.ClassRefused: 2}
	for _, c := range []struct {
		name     string
		plan     Plan
		res      Result
		want     store.RunOutcome
		causeHas []string
	}{
		{"everything created", Plan{}, Result{Calls: 2, Created: 150, Granted: 3750}, store.OutcomeOK,
			[]string{"150 people created, 3750.00 granted"}},
		{"nothing to create", Plan{}, Result{}, store.OutcomeOK, []string{"nothing to create"}},
		{"a refused token fails the run even after a success", Plan{},
			Result{Calls: 2, Created: 100, NotApplied: 100, Failures: map[apiclient.Class]int{apiclient.ClassUnauthorized: 1}},
			store.OutcomeFailed, []string{"401 unauthorized) on 1 of 2 createPeople calls", "100 people created, 0.00 granted before that"}},
		{"every call refused", Plan{}, Result{Calls: 2, NotApplied: 150, Failures: refused}, store.OutcomeFailed,
			[]string{"refused the request as invalid on 2 createPeople calls (every call of the run); nothing was granted"}},
		{"some people refused", Plan{}, Result{Calls: 3, Created: 100, NotApplied: 50, Failures: map[apiclient.Class]int{apiclient.ClassRefused: 1}},
			store.OutcomeAttention, []string{"100 people created", "50 people not created (the platform refused the request as invalid)"}},
		{"unknown outcomes are held, not failed", Plan{}, Result{Calls: 1, Unknown: 100, Failures: map[apiclient.Class]int{apiclient.ClassServerError: 1}},
			store.OutcomeAttention, []string{"100 grants held"}},
		{"rejected rows", Plan{Rejections: make([]model.Rejection, 3)}, Result{Calls: 1, Created: 10, Granted: 250},
			store.OutcomeAttention, []string{"10 people created, 250.00 granted; 3 rows rejected"}},
		{"money is never in scientific notation", Plan{}, Result{Calls: 1, Created: 1, Granted: 1102475}, store.OutcomeOK,
			[]string{"1102475.00 granted"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := judgeApply(&c.plan, &c.res)
			if v.outcome != c.want {
				t.Errorf("outcome %s, want %s (cause %q)", v.outcome, c.want, v.cause)
			}
			for _, want := range c.causeHas {
				if !strings.Contains(v.cause, want) {
					t.Errorf("cause %q does not say %q", v.cause, want)
				}
			}
			if v.outcome != store.OutcomeOK && v.next == "" {
				t.Errorf("no next step for %s", v.outcome)
			}
		})
	}
}
