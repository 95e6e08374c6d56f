package drivertest

import (
	"testing"
	"time"

	"hrsync/model"
	"hrsync/store"
)

func testBacklogPersonalizations(t *testing.T, d Backend) {
	eachStore(t, d, func(t *testing.T, s *store.Store) {
		states := map[string]store.PersonalizationState{
			"e1": store.PersonalizationPending, "e2": store.PersonalizationRetry, "e3": store.PersonalizationRetry,
			"e4": store.PersonalizationDone, "e5": store.PersonalizationFailed, "e6": store.PersonalizationError,
		}
		for ext, state := range states {
			must(t, s.SavePersonalization(ctx(t), personalization(ext, "c1", state)))
		}
		other := personalization("e1", "c1", store.PersonalizationPending)
		other.Tenant = "beta"
		must(t, s.SavePersonalization(ctx(t), other))
		b, err := s.Backlog(ctx(t), "acme")
		must(t, err)
		if want := (store.Backlog{PersonalizationsPending: 3, PersonalizationsFailed: 2}); b != want {
			t.Fatalf("backlog = %+v, want %+v (pending+retry, failed+error; done left out)", b, want)
		}
		b, err = s.Backlog(ctx(t), "beta")
		must(t, err)
		if want := (store.Backlog{PersonalizationsPending: 1}); b != want {
			t.Fatalf("beta's backlog = %+v, want %+v", b, want)
		}
	})
}

func testLastSuccessesAndHeldGrants(t *testing.T, d Backend) {
	eachBackend(t, d, func(t *testing.T, b backend) {
		clock := at(1, 0)
		s := Open(t, b.dsn, store.Options{Schema: b.schema, Migrate: true, Now: func() time.Time { return clock }})
		cycle := ""
		finish := func(id string, job model.Job, tenant string, outcome model.RunOutcome, dry bool, when time.Time) {
			t.Helper()
			clock = when
			must(t, s.StartRun(ctx(t), store.Run{ID: id, Job: job, Tenant: tenant, DryRun: dry, StartedAt: when, Cycle: cycle}))
			must(t, s.FinishRun(ctx(t), store.RunResult{ID: id, Outcome: outcome}))
		}
		finish("r1", model.JobPeople, "acme", model.OutcomeOK, false, at(2, 0))
		finish("r2", model.JobPeople, "acme", model.OutcomeAttention, false, at(3, 0))
		finish("r3", model.JobPeople, "acme", model.OutcomeFailed, false, at(4, 0))
		finish("r4", model.JobPeople, "acme", model.OutcomeOK, true, at(5, 0)) // a dry run
		finish("r5", model.JobOrders, "acme", model.OutcomeOK, false, at(6, 0))
		finish("r6", model.JobPeople, "beta", model.OutcomeFailed, false, at(7, 0))
		// A cycle of two exports, one ok and one failed, is no success;
		// a cycle whose exports all ended ok or attention is.
		cycle = "mixed"
		finish("r7", model.JobPeople, "beta", model.OutcomeOK, false, at(8, 0))
		finish("r8", model.JobPeople, "beta", model.OutcomeFailed, false, at(8, 1))
		cycle = "good"
		finish("r9", model.JobOrders, "acme", model.OutcomeAttention, false, at(9, 0))
		finish("r10", model.JobOrders, "acme", model.OutcomeOK, false, at(9, 1))
		cycle = ""
		got, err := s.LastSuccesses(ctx(t))
		must(t, err)
		want := map[store.JobTenant]time.Time{
			{Job: model.JobPeople, Tenant: "acme"}: at(3, 0), // attention counts; failed and dry runs do not
			{Job: model.JobOrders, Tenant: "acme"}: at(9, 1),
		}
		if len(got) != len(want) {
			t.Fatalf("last successes = %v, want %v", got, want)
		}
		for k, w := range want {
			if !got[k].Equal(w) {
				t.Errorf("%v: %v, want %v", k, got[k], w)
			}
		}

		s2 := b.open(t)
		grantIn(t, s2, "acme", "e1", model.GrantUnknown)
		grantIn(t, s2, "acme", "e2", model.GrantPending)
		grantIn(t, s2, "acme", "e3", model.GrantApplied)
		grantIn(t, s2, "beta", "e1", model.GrantApplied)
		held, err := s2.HeldGrantCounts(ctx(t))
		must(t, err)
		if len(held) != 1 || held["acme"] != 2 {
			t.Errorf("held grants = %v, want acme 2 (unknown and pending), none for beta", held)
		}
	})
}
