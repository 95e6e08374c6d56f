package drivertest

import (
	"testing"

	"hrsync/model"
	"hrsync/store"
)

// scopedIntent is a call of job for people ids already in state (the
// grants job's kind: no person rows), each with a grant of rule.
func scopedIntent(job model.Job, run, tenant, key, rule string, ids ...string) store.BatchIntent {
	in := store.BatchIntent{RunID: run, Tenant: tenant, Job: job, IdempotencyKey: key, RequestSHA: "sha-" + key, ItemCount: len(ids)}
	for _, id := range ids {
		in.Grants = append(in.Grants, model.Grant{ExternalID: id, Reason: rule, Occurrence: "2026", Amount: 25})
	}
	return in
}

func grantOf(t *testing.T, s *store.Store, tenant, ext, rule string) model.Grant {
	t.Helper()
	g, err := s.Grant(ctx(t), model.GrantKey(tenant, ext, rule, "2026"))
	must(t, err)
	return g
}

func journalState(t *testing.T, s *store.Store, id int64) store.JournalState {
	t.Helper()
	j, err := s.Journal(ctx(t), store.JournalFilter{Tenant: "acme"})
	must(t, err)
	for _, e := range j {
		if e.ID == id {
			return e.State
		}
	}
	t.Fatalf("no journal entry %d", id)
	return ""
}

// TestScopeKeepsJobsApart runs the people sync's and the grants job's
// recovery steps over one tenant whose ledger holds both jobs' grants and
// calls, some in flight: each job's HoldInterrupted, UnknownBatches and
// BeginResend act on its own scope only, and never on a call the other job
// has in flight.
func testScopeKeepsJobsApart(t *testing.T, d Backend) {
	eachStore(t, d, func(t *testing.T, s *store.Store) {
		calls := setUpScopeCalls(t, s)
		testScopePeopleAndRules(t, s, calls)
		testScopeGrantsJob(t, s, calls)
	})
}

// scopeCalls are the calls setUpScopeCalls leaves in the ledger, and the
// scopes the steps of testScopeKeepsJobsApart act in.
type scopeCalls struct {
	people, grants, birthday store.Scope
	pID, g1, g2, g3, g4      int64
}

func setUpScopeCalls(t *testing.T, s *store.Store) scopeCalls {
	t.Helper()
	people := store.Scope{Job: model.JobPeople}
	grants := store.Scope{Job: model.JobGrants}
	birthday := store.Scope{Job: model.JobGrants, Rule: "birthday"}
	must(t, s.SavePeople(ctx(t), "acme", []store.PersonRow{
		person("a", 1), person("b", 2), person("c", 3), person("d", 4), person("e", 5), person("f", 6),
	}))
	startRun(t, s, "p1", "acme")
	must(t, s.StartRun(ctx(t), store.Run{ID: "g1", Job: model.JobGrants, Tenant: "acme"}))

	// The people sync crashed with a call in flight (a's initial grant).
	in := scopedIntent(model.JobPeople, "p1", "acme", "kp", "initial", "a")
	pID, err := s.BeginBatch(ctx(t), in)
	must(t, err)
	// The grants job: b's birthday in flight now; c's birthday and d's
	// anniversary held (no answer); e's birthday and f's anniversary
	// held in one call.
	g1, err := s.BeginBatch(ctx(t), scopedIntent(model.JobGrants, "g1", "acme", "kg1", "birthday", "b"))
	must(t, err)
	g2, err := s.BeginBatch(ctx(t), scopedIntent(model.JobGrants, "g1", "acme", "kg2", "birthday", "c"))
	must(t, err)
	g3, err := s.BeginBatch(ctx(t), scopedIntent(model.JobGrants, "g1", "acme", "kg3", "anniversary", "d"))
	must(t, err)
	mixed := scopedIntent(model.JobGrants, "g1", "acme", "kg4", "birthday", "e")
	mixed.Grants = append(mixed.Grants, model.Grant{ExternalID: "f", Reason: "anniversary", Occurrence: "2026", Amount: 100})
	g4, err := s.BeginBatch(ctx(t), mixed)
	must(t, err)
	for _, id := range []int64{g2, g3, g4} {
		must(t, s.FinishBatch(ctx(t), id, store.BatchOutcome{State: store.JournalUnknown, ErrorMessage: "timeout"}))
	}
	return scopeCalls{people: people, grants: grants, birthday: birthday, pID: pID, g1: g1, g2: g2, g3: g3, g4: g4}
}

// TestGrantScopeMigration upgrades a state written by version 5: every
// grant and call is the people sync's, nothing is lost (on SQLite the runs
// table is rebuilt, and the rejections that cascade from runs stay), a
// grants run is admitted, and foreign keys are still enforced.
func testGrantScopeMigration(t *testing.T, d Backend) {
	eachBackend(t, d, func(t *testing.T, b backend) {
		raw := migratedTo(t, b, 5)
		for _, q := range []string{
			`INSERT INTO runs (id, job, tenant, started_at) VALUES ('r1', 'people', 'acme', '2026-01-01 00:00:00')`,
			`INSERT INTO rejections (run_id, source, line, field, reason) VALUES ('r1', 'a.csv', 3, 'email', 'invalid')`,
			`INSERT INTO people (tenant, external_id, email, first_name, last_name, fingerprint, first_seen_at, last_seen_at)
				VALUES ('acme', 'a', 'a@example.test', 'A', 'B', 1, '2026-01-01 00:00:00', '2026-01-01 00:00:00')`,
			`INSERT INTO api_journal (run_id, tenant, operation, idempotency_key, request_sha, item_count, state, started_at)
				VALUES ('r1', 'acme', 'createPeople', 'k1', 'sha', 1, 'sent', '2026-01-01 00:00:00')`,
			`INSERT INTO grants (grant_key, tenant, external_id, reason, occurrence, amount, state, attempts, journal_id, created_at, updated_at)
				VALUES ('acme/a/initial/1', 'acme', 'a', 'initial', '1', 10, 'pending', 1,
				(SELECT MAX(id) FROM api_journal), '2026-01-01 00:00:00', '2026-01-01 00:00:00')`,
		} {
			if _, err := raw.ExecContext(ctx(t), q); err != nil {
				t.Fatalf("at version 5: %v\n%s", err, q)
			}
		}

		s := b.open(t) // migrates to the latest version
		rej, err := s.Rejections(ctx(t), "r1")
		must(t, err)
		if len(rej) != 1 || rej[0].Line != 3 {
			t.Errorf("rejections after the migration: %+v, want the one row", rej)
		}
		g, err := s.Grant(ctx(t), "acme/a/initial/1")
		must(t, err)
		if g.Job != string(model.JobPeople) || g.State != model.GrantPending {
			t.Errorf("grant %+v, want the people job's, still pending", g)
		}
		if n, err := s.HoldInterrupted(ctx(t), "acme", store.Scope{Job: model.JobGrants}); err != nil || n != 0 {
			t.Errorf("the grants job held %d (%v) of the people sync's", n, err)
		}
		if n, err := s.HoldInterrupted(ctx(t), "acme", store.Scope{Job: model.JobPeople, Rule: "initial"}); err != nil || n != 1 {
			t.Errorf("the people sync held %d (%v), want its grant", n, err)
		}
		must(t, s.StartRun(ctx(t), store.Run{ID: "g1", Job: model.JobGrants, Tenant: "acme"}))
		// Since 00011, runs.job admits any job's name: a new job needs no migration.
		if err := s.StartRun(ctx(t), store.Run{ID: "x1", Job: "nope", Tenant: "acme"}); err != nil {
			t.Errorf("a run of a job the migrations do not list: %v, want it recorded", err)
		}
		_, err = s.BeginBatch(ctx(t), scopedIntent(model.JobGrants, "g1", "acme", "kg", "birthday", "ghost"))
		if err == nil {
			t.Error("a grant for a person the state does not know was admitted: foreign keys are off")
		}
	})
}

func testScopeGrantsJob(t *testing.T, s *store.Store, c scopeCalls) {
	grants, pID, g3 := c.grants, c.pID, c.g3
	t.Run("the grants job resends its held call and holds its own interrupted one", func(t *testing.T) {
		id, err := s.BeginResend(ctx(t), g3, "g1", grants)
		must(t, err)
		if g := grantOf(t, s, "acme", "d", "anniversary"); g.State != model.GrantPending || g.Attempts != 2 {
			t.Errorf("d's grant %+v, want pending again on its second attempt", g)
		}
		must(t, s.FinishBatch(ctx(t), id, store.BatchOutcome{State: store.JournalSucceeded, HTTPStatus: 201}))
		n, err := s.HoldInterrupted(ctx(t), "acme", grants)
		must(t, err)
		if n != 1 || grantOf(t, s, "acme", "b", "birthday").State != model.GrantUnknown {
			t.Errorf("held %d, want b's grant", n)
		}
		if g := grantOf(t, s, "acme", "a", "initial"); g.State != model.GrantUnknown || g.Attempts != 1 {
			t.Errorf("the people sync's grant %+v changed", g)
		}
	})
	t.Run("the ledger and the journal filter by job and rule", func(t *testing.T) {
		gs, err := s.ListGrants(ctx(t), store.GrantFilter{Tenant: "acme", Job: model.JobGrants, Reason: "anniversary"})
		must(t, err)
		if len(gs) != 2 || gs[0].ExternalID != "d" || gs[1].ExternalID != "f" {
			t.Errorf("anniversary grants %+v, want d and f", gs)
		}
		j, err := s.Journal(ctx(t), store.JournalFilter{Tenant: "acme", Job: model.JobPeople})
		must(t, err)
		if len(j) != 1 || j[0].ID != pID {
			t.Errorf("people journal %+v", j)
		}
	})
	t.Run("a job never sends a key the other job recorded", func(t *testing.T) {
		startRun(t, s, "p3", "acme")
		id, err := s.BeginBatch(ctx(t), scopedIntent(model.JobPeople, "p3", "acme", "kp3", "welcome", "f"))
		must(t, err)
		must(t, s.FinishBatch(ctx(t), id, store.BatchOutcome{State: store.JournalNotApplied, HTTPStatus: 429}))
		_, err = s.BeginBatch(ctx(t), scopedIntent(model.JobGrants, "g1", "acme", "kg5", "welcome", "f"))
		wantErr(t, err, store.ErrGrantConflict)
	})
	t.Run("a scope needs its job", func(t *testing.T) {
		if _, err := s.HoldInterrupted(ctx(t), "acme", store.Scope{}); err == nil {
			t.Error("HoldInterrupted without a job accepted")
		}
		if _, err := s.UnknownBatches(ctx(t), "acme", store.Scope{Rule: "birthday"}); err == nil {
			t.Error("UnknownBatches without a job accepted")
		}
	})
}

func testScopePeopleAndRules(t *testing.T, s *store.Store, c scopeCalls) {
	people, pID, g1, g2 := c.people, c.pID, c.g1, c.g2
	t.Run("the people sync holds only its own interrupted call", func(t *testing.T) {
		n, err := s.HoldInterrupted(ctx(t), "acme", people)
		must(t, err)
		if n != 1 {
			t.Fatalf("held %d grants, want a's only", n)
		}
		if g := grantOf(t, s, "acme", "a", "initial"); g.State != model.GrantUnknown || g.Job != "people" {
			t.Errorf("a's grant %+v, want unknown, of the people job", g)
		}
		if g := grantOf(t, s, "acme", "b", "birthday"); g.State != model.GrantPending {
			t.Errorf("the grants job's call in flight was flipped: b's grant is %s", g.State)
		}
		if st := journalState(t, s, pID); st != store.JournalUnknown {
			t.Errorf("the people call is %s, want unknown", st)
		}
		if st := journalState(t, s, g1); st != store.JournalSent {
			t.Errorf("the grants job's call in flight is %s, want still sent", st)
		}
	})
	t.Run("the people sync lists only its own held calls", func(t *testing.T) {
		held, err := s.UnknownBatches(ctx(t), "acme", people)
		must(t, err)
		if len(held) != 1 || held[0].Journal.ID != pID || held[0].Journal.Job != model.JobPeople ||
			len(held[0].Grants) != 1 || held[0].Grants[0].ExternalID != "a" {
			t.Fatalf("held batches %+v, want the people call of a only", held)
		}
	})
	t.Run("the people sync cannot resend the grants job's call", func(t *testing.T) {
		startRun(t, s, "p2", "acme")
		_, err := s.BeginResend(ctx(t), g2, "p2", people)
		wantErr(t, err, store.ErrJournalState)
		if g := grantOf(t, s, "acme", "c", "birthday"); g.State != model.GrantUnknown || g.Attempts != 1 {
			t.Errorf("c's grant %+v, want still held after one attempt", g)
		}
		if n := journalCount(t, s, "acme"); n != 5 {
			t.Errorf("%d journal entries, want the 5 calls and no resend", n)
		}
	})
	testScopeRules(t, s, c)
}

func testScopeRules(t *testing.T, s *store.Store, c scopeCalls) {
	birthday, g1, g2, g4 := c.birthday, c.g1, c.g2, c.g4
	t.Run("a rule's scope lists only that rule's held calls", func(t *testing.T) {
		held, err := s.UnknownBatches(ctx(t), "acme", birthday)
		must(t, err)
		got := map[string]int64{}
		for _, b := range held {
			for _, g := range b.Grants {
				got[g.ExternalID] = b.Journal.ID
			}
		}
		if len(got) != 2 || got["c"] != g2 || got["e"] != g4 {
			t.Errorf("birthday's held grants %v, want c (call %d) and e (call %d)", got, g2, g4)
		}
	})
	t.Run("a call holding another rule's grant is not resent in a rule's scope", func(t *testing.T) {
		_, err := s.BeginResend(ctx(t), g4, "g1", birthday)
		wantErr(t, err, store.ErrJournalState)
		if g := grantOf(t, s, "acme", "e", "birthday"); g.State != model.GrantUnknown {
			t.Errorf("e's grant is %s, want still held", g.State)
		}
	})
	t.Run("a rule's scope does not hold another rule's call in flight", func(t *testing.T) {
		n, err := s.HoldInterrupted(ctx(t), "acme", store.Scope{Job: model.JobGrants, Rule: "anniversary"})
		must(t, err)
		if n != 0 || journalState(t, s, g1) != store.JournalSent {
			t.Errorf("held %d grants, call in flight %s; want none held and the birthday call still sent", n, journalState(t, s, g1))
		}
	})
}
