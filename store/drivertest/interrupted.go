package drivertest

import (
	"slices"
	"testing"

	"hrsync/model"
	"hrsync/store"
)

// testCloseInterrupted: the runs of a job and tenant that a process left
// running are closed as interrupted by whoever takes the job's lock next
// (LockJob, CloseInterrupted), and only those: a run whose lock another
// Store (another replica) holds stays running, as do the runs of other
// jobs and tenants.
func testCloseInterrupted(t *testing.T, d Backend) {
	eachBackend(t, d, func(t *testing.T, b backend) {
		// Two Store values with pools of their own, as two replicas have.
		s, other := b.open(t), b.open(t)
		must(t, s.StartRun(ctx(t), store.Run{ID: "crashed", Job: model.JobOrders, Tenant: "acme"}))
		must(t, s.StartRun(ctx(t), store.Run{ID: "other-job", Job: model.JobPeople, Tenant: "acme"}))
		must(t, s.StartRun(ctx(t), store.Run{ID: "other-tenant", Job: model.JobOrders, Tenant: "globex"}))
		must(t, s.StartRun(ctx(t), store.Run{ID: "finished", Job: model.JobOrders, Tenant: "acme"}))
		must(t, s.FinishRun(ctx(t), store.RunResult{ID: "finished", Outcome: model.OutcomeOK}))
		running, err := s.RunningJobs(ctx(t))
		must(t, err)
		wantRunning := []store.JobTenant{{Job: model.JobOrders, Tenant: "acme"}, {Job: model.JobOrders, Tenant: "globex"},
			{Job: model.JobPeople, Tenant: "acme"}}
		if !slices.Equal(running, wantRunning) {
			t.Errorf("running jobs %v, want %v", running, wantRunning)
		}

		// A live replica runs people of acme: it holds the job's lock.
		live, closed, err := other.LockJob(ctx(t), model.JobPeople, "acme")
		must(t, err)
		if closed != 1 {
			t.Fatalf("the first holder of people/acme closed %d runs, want 1 (the run left before it)", closed)
		}
		must(t, other.StartRun(ctx(t), store.Run{ID: "live", Job: model.JobPeople, Tenant: "acme"}))
		_, err = s.CloseInterrupted(ctx(t), model.JobPeople, "acme")
		wantErr(t, err, model.ErrLocked)
		_, _, err = s.LockJob(ctx(t), model.JobPeople, "acme")
		wantErr(t, err, model.ErrLocked)

		n, err := s.CloseInterrupted(ctx(t), model.JobOrders, "acme")
		must(t, err)
		if n != 1 {
			t.Fatalf("closed %d orders/acme runs, want 1", n)
		}
		want := map[string]model.RunOutcome{
			"crashed": model.OutcomeInterrupted, "other-job": model.OutcomeInterrupted, "live": model.OutcomeRunning,
			"other-tenant": model.OutcomeRunning, "finished": model.OutcomeOK,
		}
		checkOutcomes(t, s, want)
		must(t, live())

		// Once the replica is gone (its lock with it), its run is closed.
		release, n, err := s.LockJob(ctx(t), model.JobPeople, "acme")
		must(t, err)
		must(t, release())
		if n != 1 {
			t.Errorf("closed %d people/acme runs after the replica went, want 1", n)
		}
		want["live"] = model.OutcomeInterrupted
		checkOutcomes(t, s, want)
		if n, err := s.CloseInterrupted(ctx(t), model.JobOrders, "acme"); err != nil || n != 0 {
			t.Errorf("second close marked %d (%v), want 0", n, err)
		}
	})
}

// checkOutcomes checks the outcome of each run of want, and that the
// interrupted ones carry a finish time and the reason.
func checkOutcomes(t *testing.T, s *store.Store, want map[string]model.RunOutcome) {
	t.Helper()
	runs, err := s.LastRuns(ctx(t), 20)
	must(t, err)
	if len(runs) != len(want) {
		t.Errorf("%d runs, want %d", len(runs), len(want))
	}
	for _, r := range runs {
		if r.Outcome != want[r.ID] {
			t.Errorf("run %s is %s, want %s", r.ID, r.Outcome, want[r.ID])
		}
		if r.Outcome == model.OutcomeInterrupted && (r.FinishedAt.IsZero() || r.Error != store.InterruptedError) {
			t.Errorf("the interrupted run has no finish time or reason: %+v", r)
		}
	}
}
