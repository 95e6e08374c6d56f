package drivertest

import (
	"testing"

	"hrsync/model"
	"hrsync/store"
)

func testFailInterrupted(t *testing.T, d Backend) {
	eachStore(t, d, func(t *testing.T, s *store.Store) {
		must(t, s.StartRun(ctx(t), store.Run{ID: "crashed", Job: model.JobPeople, Tenant: "acme"}))
		must(t, s.StartRun(ctx(t), store.Run{ID: "other-job", Job: model.JobOrders, Tenant: "acme"}))
		must(t, s.StartRun(ctx(t), store.Run{ID: "other-tenant", Job: model.JobPeople, Tenant: "globex"}))
		must(t, s.StartRun(ctx(t), store.Run{ID: "finished", Job: model.JobPeople, Tenant: "acme"}))
		must(t, s.FinishRun(ctx(t), store.RunResult{ID: "finished", Outcome: model.OutcomeOK}))

		n, err := s.FailInterrupted(ctx(t), model.JobPeople, "acme")
		must(t, err)
		if n != 1 {
			t.Fatalf("marked %d runs, want 1", n)
		}
		runs, err := s.LastRuns(ctx(t), 10)
		must(t, err)
		want := map[string]model.RunOutcome{
			"crashed": model.OutcomeFailed, "other-job": model.OutcomeRunning,
			"other-tenant": model.OutcomeRunning, "finished": model.OutcomeOK,
		}
		for _, r := range runs {
			if r.Outcome != want[r.ID] {
				t.Errorf("run %s is %s, want %s", r.ID, r.Outcome, want[r.ID])
			}
			if r.ID == "crashed" && (r.FinishedAt.IsZero() || r.Error == "") {
				t.Errorf("the interrupted run has no finish time or reason: %+v", r)
			}
		}
		if n, err := s.FailInterrupted(ctx(t), model.JobPeople, "acme"); err != nil || n != 0 {
			t.Errorf("second call marked %d (%v), want 0", n, err)
		}
	})
}
