package drivertest

import (
	"testing"

	"hrsync/model"
	"hrsync/store"
)

// testRunCycle: the cycle a run belongs to is kept with it and read back by
// LastRuns; a run started without one has none.
func testRunCycle(t *testing.T, d Backend) {
	eachStore(t, d, func(t *testing.T, s *store.Store) {
		for i, r := range []store.Run{
			{ID: "a", Job: model.JobPeople, Tenant: "acme", Cycle: "c1", StartedAt: at(1, 0)},
			{ID: "b", Job: model.JobPeople, Tenant: "acme", Cycle: "c1", StartedAt: at(1, 1)},
			{ID: "c", Job: model.JobOrders, Tenant: "acme", StartedAt: at(1, 2)},
		} {
			must(t, s.StartRun(ctx(t), r))
			must(t, s.FinishRun(ctx(t), store.RunResult{ID: r.ID, Outcome: model.FinishedOutcomes()[i]}))
		}
		runs, err := s.LastRuns(ctx(t), 10)
		must(t, err)
		got := map[string]string{}
		for _, r := range runs {
			got[r.ID] = r.Cycle
		}
		if len(runs) != 3 || got["a"] != "c1" || got["b"] != "c1" || got["c"] != "" {
			t.Errorf("cycles read back %v, want a and b of c1, c of none", got)
		}
	})
}
