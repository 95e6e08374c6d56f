package drivertest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"hrsync/model"
	"hrsync/store"
)

func startRun(t *testing.T, s *store.Store, id, tenant string) {
	t.Helper()
	must(t, s.StartRun(ctx(t), store.Run{ID: id, Job: model.JobPeople, Tenant: tenant, StartedAt: at(1, 0)}))
}

func welcome(tenant, ext string, amount float64) model.Grant {
	return model.Grant{Tenant: tenant, ExternalID: ext, Reason: "welcome", Occurrence: "2025", Amount: amount}
}

// peopleScope is the scope of the people sync's grants and calls.
func peopleScope() store.Scope { return store.Scope{Job: model.JobPeople} }

// intent builds a batch creating people ids, each with a welcome grant of 50.
func intent(run, tenant, key string, ids ...string) store.BatchIntent {
	in := store.BatchIntent{RunID: run, Tenant: tenant, Job: model.JobPeople, IdempotencyKey: key, RequestSHA: "sha-" + key}
	for i, id := range ids {
		in.People = append(in.People, person(id, i))
		in.Grants = append(in.Grants, welcome(tenant, id, 50))
	}
	return in
}

func grantState(t *testing.T, s *store.Store, tenant, ext string) model.Grant {
	t.Helper()
	g, err := s.Grant(ctx(t), model.GrantKey(tenant, ext, "welcome", "2025"))
	must(t, err)
	return g
}

func journalCount(t *testing.T, s *store.Store, tenant string) int {
	t.Helper()
	j, err := s.Journal(ctx(t), store.JournalFilter{Tenant: tenant})
	must(t, err)
	return len(j)
}

// grantIn makes the welcome grant of tenant/ext reach state st through the
// store's own operations, and returns its key.
func grantIn(t *testing.T, s *store.Store, tenant, ext string, st model.GrantState) string {
	t.Helper()
	run := "run-" + tenant + "-" + ext
	startRun(t, s, run, tenant)
	id, err := s.BeginBatch(ctx(t), intent(run, tenant, "k-"+ext, ext))
	must(t, err)
	key := model.GrantKey(tenant, ext, "welcome", "2025")
	switch st {
	case model.GrantPending:
	case model.GrantApplied:
		must(t, s.FinishBatch(ctx(t), id, store.BatchOutcome{State: store.JournalSucceeded, HTTPStatus: 201}))
	case model.GrantNotApplied:
		must(t, s.FinishBatch(ctx(t), id, store.BatchOutcome{State: store.JournalNotApplied, HTTPStatus: 400}))
	case model.GrantUnknown:
		must(t, s.FinishBatch(ctx(t), id, store.BatchOutcome{State: store.JournalUnknown, HTTPStatus: 504}))
	case model.GrantVoided:
		must(t, s.FinishBatch(ctx(t), id, store.BatchOutcome{State: store.JournalUnknown}))
		must(t, s.VoidGrant(ctx(t), key, "operator: never send"))
	default:
		t.Fatalf("no way to reach state %s", st)
	}
	if g := grantState(t, s, tenant, ext); g.State != st {
		t.Fatalf("grant is %s, want %s", g.State, st)
	}
	return key
}

func testBatches(t *testing.T, d Backend) {
	eachStore(t, d, func(t *testing.T, s *store.Store) {
		t.Run("intent before the call, outcome after", func(t *testing.T) {
			startRun(t, s, "r-ok", "ok")
			in := intent("r-ok", "ok", "idem-1", "e1", "e2")
			id, err := s.BeginBatch(ctx(t), in)
			must(t, err)

			j, err := s.Journal(ctx(t), store.JournalFilter{RunID: "r-ok"})
			must(t, err)
			if len(j) != 1 || j[0].ID != id || j[0].State != store.JournalSent || j[0].IdempotencyKey != "idem-1" ||
				j[0].RequestSHA != "sha-idem-1" || j[0].ItemCount != 2 || j[0].Operation != store.OpCreatePeople ||
				!j[0].FinishedAt.IsZero() {
				t.Fatalf("journal after intent = %+v", j)
			}
			for _, ext := range []string{"e1", "e2"} {
				g := grantState(t, s, "ok", ext)
				if g.State != model.GrantPending || g.Attempts != 1 || g.Amount != 50 {
					t.Fatalf("grant %s after intent = %+v", ext, g)
				}
				p, ok, err := s.Person(ctx(t), "ok", ext)
				must(t, err)
				if !ok || p.RemoteID != "" || !p.CreatedOnPlatformAt.IsZero() {
					t.Fatalf("person %s after intent = %+v, %v", ext, p, ok)
				}
			}

			must(t, s.FinishBatch(ctx(t), id, store.BatchOutcome{
				State: store.JournalSucceeded, HTTPStatus: 201,
				RemoteIDs: map[string]string{"e1": "rem-1", "e2": "rem-2"}, FinishedAt: at(4, 0),
			}))
			j, err = s.Journal(ctx(t), store.JournalFilter{RunID: "r-ok"})
			must(t, err)
			if j[0].State != store.JournalSucceeded || j[0].HTTPStatus != 201 || !j[0].FinishedAt.Equal(at(4, 0)) {
				t.Fatalf("journal after outcome = %+v", j[0])
			}
			for i, ext := range []string{"e1", "e2"} {
				if g := grantState(t, s, "ok", ext); g.State != model.GrantApplied {
					t.Fatalf("grant %s = %s, want applied", ext, g.State)
				}
				p, _, err := s.Person(ctx(t), "ok", ext)
				must(t, err)
				if p.RemoteID != fmt.Sprintf("rem-%d", i+1) || !p.CreatedOnPlatformAt.Equal(at(4, 0)) {
					t.Fatalf("person %s after outcome = %+v", ext, p)
				}
			}
			totals, err := s.GrantTotals(ctx(t), "ok")
			must(t, err)
			if len(totals) != 2 || totals["e1"] != 50 || totals["e2"] != 50 {
				t.Fatalf("totals = %v", totals)
			}
		})

		t.Run("a failed call records why, and the batch can be finished only once", func(t *testing.T) {
			startRun(t, s, "r-fail", "fail")
			id, err := s.BeginBatch(ctx(t), intent("r-fail", "fail", "idem-f", "f1"))
			must(t, err)
			must(t, s.FinishBatch(ctx(t), id, store.BatchOutcome{
				State: store.JournalNotApplied, HTTPStatus: 400, ErrorCode: "invalid_input", ErrorMessage: "bad email",
			}))
			g := grantState(t, s, "fail", "f1")
			if g.State != model.GrantNotApplied || !strings.Contains(g.LastError, "400") || !strings.Contains(g.LastError, "invalid_input") {
				t.Fatalf("grant = %+v", g)
			}
			wantErr(t, s.FinishBatch(ctx(t), id, store.BatchOutcome{State: store.JournalSucceeded}), store.ErrJournalState)
			// An unknown outcome, once recorded, is not overwritten either.
			uk, err := s.BeginBatch(ctx(t), intent("r-fail", "fail", "idem-u", "f2"))
			must(t, err)
			must(t, s.FinishBatch(ctx(t), uk, store.BatchOutcome{State: store.JournalUnknown, ErrorMessage: "timeout"}))
			wantErr(t, s.FinishBatch(ctx(t), uk, store.BatchOutcome{State: store.JournalSucceeded}), store.ErrJournalState)
			if g := grantState(t, s, "fail", "f2"); g.State != model.GrantUnknown {
				t.Fatalf("grant f2 = %s, want unknown", g.State)
			}
			wantErr(t, s.FinishBatch(ctx(t), 987654, store.BatchOutcome{State: store.JournalSucceeded}), store.ErrNotFound)
			if err := s.FinishBatch(ctx(t), id, store.BatchOutcome{State: store.JournalSent}); err == nil {
				t.Fatal("outcome state sent accepted")
			}
			totals, err := s.GrantTotals(ctx(t), "fail")
			must(t, err)
			if len(totals) != 0 {
				t.Fatalf("totals of a failed batch = %v", totals)
			}
		})

		t.Run("a grant is sent again only from not_applied", func(t *testing.T) {
			for _, st := range []model.GrantState{
				model.GrantPending, model.GrantApplied, model.GrantUnknown, model.GrantVoided, model.GrantNotApplied,
			} {
				t.Run(string(st), func(t *testing.T) {
					tenant := "again-" + string(st)
					key := grantIn(t, s, tenant, "x", st)
					before := journalCount(t, s, tenant)
					startRun(t, s, "r2-"+tenant, tenant)
					in := intent("r2-"+tenant, tenant, "second", "y", "x")
					in.Grants[1].Amount = 75
					id, err := s.BeginBatch(ctx(t), in)
					if st == model.GrantNotApplied {
						must(t, err)
						g := grantState(t, s, tenant, "x")
						if g.State != model.GrantPending || g.Attempts != 2 || g.Amount != 75 || g.LastError != "" {
							t.Fatalf("resent grant = %+v", g)
						}
						j, err := s.Journal(ctx(t), store.JournalFilter{Tenant: tenant, States: []store.JournalState{store.JournalSent}})
						must(t, err)
						if len(j) != 1 || j[0].ID != id {
							t.Fatalf("sent entries = %+v", j)
						}
						return
					}
					wantErr(t, err, store.ErrGrantConflict)
					var ce *store.GrantConflictError
					if !errors.As(err, &ce) || ce.Key != key || ce.State != st {
						t.Fatalf("error = %v, want a conflict naming %s in %s", err, key, st)
					}
					if !strings.Contains(err.Error(), key) {
						t.Fatalf("error %q does not name the key", err)
					}
					// Nothing of the refused batch was written.
					if n := journalCount(t, s, tenant); n != before {
						t.Fatalf("journal grew from %d to %d", before, n)
					}
					if _, ok, err := s.Person(ctx(t), tenant, "y"); err != nil || ok {
						t.Fatalf("person y written by a refused batch (%v)", err)
					}
					if g := grantState(t, s, tenant, "x"); g.State != st || g.Attempts != 1 {
						t.Fatalf("grant changed by a refused batch: %+v", g)
					}
				})
			}
		})

		t.Run("a unique violation on the grant's identity is reported, not swallowed", func(t *testing.T) {
			grantIn(t, s, "uniq", "u", model.GrantApplied)
			startRun(t, s, "r-uniq", "uniq")
			in := intent("r-uniq", "uniq", "other-key", "u")
			in.Grants[0].Key = "a-different-key-for-the-same-grant"
			_, err := s.BeginBatch(ctx(t), in)
			wantErr(t, err, store.ErrGrantConflict)
			if n := journalCount(t, s, "uniq"); n != 1 {
				t.Fatalf("journal has %d entries, want 1", n)
			}
		})

		t.Run("two concurrent intents for one grant: exactly one wins", func(t *testing.T) {
			startRun(t, s, "r-race", "race")
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i := range errs {
				wg.Go(func() {
					_, errs[i] = s.BeginBatch(ctx(t), intent("r-race", "race", fmt.Sprintf("k%d", i), "z"))
				})
			}
			wg.Wait()
			ok, conflict := 0, 0
			for _, err := range errs {
				switch {
				case err == nil:
					ok++
				case errors.Is(err, store.ErrGrantConflict):
					conflict++
				default:
					t.Fatalf("unexpected error: %v", err)
				}
			}
			if ok != 1 || conflict != 1 {
				t.Fatalf("ok = %d, conflicts = %d", ok, conflict)
			}
		})

		t.Run("invalid intents are refused", func(t *testing.T) {
			startRun(t, s, "r-bad", "bad")
			for name, in := range map[string]store.BatchIntent{
				"no key": {RunID: "r-bad", Tenant: "bad", Job: model.JobPeople},
				"no job": {RunID: "r-bad", Tenant: "bad", IdempotencyKey: "k", Grants: []model.Grant{welcome("bad", "a", 1)}},
				"other job": {RunID: "r-bad", Tenant: "bad", Job: model.JobPeople, IdempotencyKey: "k", People: []store.PersonRow{person("a", 1)},
					Grants: []model.Grant{{ExternalID: "a", Job: "grants", Reason: "welcome", Occurrence: "1", Amount: 1}}},
				"other tenant": {RunID: "r-bad", Tenant: "bad", Job: model.JobPeople, IdempotencyKey: "k", Grants: []model.Grant{welcome("else", "a", 1)}},
				"twice":        {RunID: "r-bad", Tenant: "bad", Job: model.JobPeople, IdempotencyKey: "k", Grants: []model.Grant{welcome("bad", "a", 1), welcome("bad", "a", 2)}},
				"no person":    {RunID: "r-bad", Tenant: "bad", Job: model.JobPeople, IdempotencyKey: "k", Grants: []model.Grant{welcome("bad", "ghost", 1)}},
				"unknown run":  intent("no-such-run", "bad", "k", "a"),
			} {
				if _, err := s.BeginBatch(ctx(t), in); err == nil {
					t.Errorf("%s: accepted", name)
				}
			}
			if n := journalCount(t, s, "bad"); n != 0 {
				t.Fatalf("journal has %d entries", n)
			}
		})
	})
}

func testHoldInterrupted(t *testing.T, d Backend) {
	eachStore(t, d, func(t *testing.T, s *store.Store) {
		startRun(t, s, "crashed", "hold")
		id1, err := s.BeginBatch(ctx(t), intent("crashed", "hold", "k1", "a", "b"))
		must(t, err)
		id2, err := s.BeginBatch(ctx(t), intent("crashed", "hold", "k2", "c"))
		must(t, err)
		must(t, s.FinishBatch(ctx(t), id2, store.BatchOutcome{State: store.JournalSucceeded, HTTPStatus: 201}))
		grantIn(t, s, "hold-other", "o", model.GrantPending)

		n, err := s.HoldInterrupted(ctx(t), "hold", peopleScope())
		must(t, err)
		t.Run("pending grants become unknown and are counted", func(t *testing.T) {
			if n != 2 {
				t.Fatalf("held %d grants, want 2", n)
			}
			for _, ext := range []string{"a", "b"} {
				g := grantState(t, s, "hold", ext)
				if g.State != model.GrantUnknown || g.LastError == "" {
					t.Fatalf("grant %s = %+v", ext, g)
				}
			}
			if g := grantState(t, s, "hold", "c"); g.State != model.GrantApplied {
				t.Fatalf("finished grant moved to %s", g.State)
			}
		})
		t.Run("sent journal entries become unknown", func(t *testing.T) {
			j, err := s.Journal(ctx(t), store.JournalFilter{Tenant: "hold"})
			must(t, err)
			if len(j) != 2 || j[0].ID != id1 || j[0].State != store.JournalUnknown || j[1].State != store.JournalSucceeded {
				t.Fatalf("journal = %+v", j)
			}
		})
		t.Run("other tenants are untouched", func(t *testing.T) {
			if g := grantState(t, s, "hold-other", "o"); g.State != model.GrantPending {
				t.Fatalf("other tenant's grant = %s", g.State)
			}
		})
		t.Run("running it again holds nothing more", func(t *testing.T) {
			n, err := s.HoldInterrupted(ctx(t), "hold", peopleScope())
			must(t, err)
			if n != 0 {
				t.Fatalf("held %d", n)
			}
		})
		t.Run("held grants are never sent again by a new batch", func(t *testing.T) {
			startRun(t, s, "next", "hold")
			_, err := s.BeginBatch(ctx(t), intent("next", "hold", "k3", "a"))
			wantErr(t, err, store.ErrGrantConflict)
		})
		t.Run("a late outcome still resolves the held batch", func(t *testing.T) {
			must(t, s.FinishBatch(ctx(t), id1, store.BatchOutcome{State: store.JournalSucceeded, HTTPStatus: 201}))
			for _, ext := range []string{"a", "b"} {
				if g := grantState(t, s, "hold", ext); g.State != model.GrantApplied {
					t.Fatalf("grant %s = %s", ext, g.State)
				}
			}
		})
	})
}

func testGrantTransitions(t *testing.T, d Backend) {
	type op struct {
		name string
		to   model.GrantState
		do   func(s *store.Store, t *testing.T, key string) error
	}
	ops := []op{
		{"release", model.GrantNotApplied, func(s *store.Store, t *testing.T, k string) error {
			return s.ReleaseGrant(ctx(t), k, "checked: not applied")
		}},
		{"void", model.GrantVoided, func(s *store.Store, t *testing.T, k string) error { return s.VoidGrant(ctx(t), k, "do not send") }},
		{"confirm", model.GrantApplied, func(s *store.Store, t *testing.T, k string) error {
			return s.ConfirmGrant(ctx(t), k, "seen on platform")
		}},
	}
	allowed := map[string]map[model.GrantState]bool{
		"release": {model.GrantUnknown: true},
		"void":    {model.GrantUnknown: true, model.GrantNotApplied: true},
		"confirm": {model.GrantUnknown: true},
	}
	states := []model.GrantState{model.GrantPending, model.GrantApplied, model.GrantNotApplied, model.GrantUnknown, model.GrantVoided}
	eachStore(t, d, func(t *testing.T, s *store.Store) {
		for _, o := range ops {
			for _, from := range states {
				t.Run(o.name+" from "+string(from), func(t *testing.T) {
					tenant := "tr-" + o.name + "-" + string(from)
					key := grantIn(t, s, tenant, "p", from)
					err := o.do(s, t, key)
					g := grantState(t, s, tenant, "p")
					if allowed[o.name][from] {
						must(t, err)
						if g.State != o.to {
							t.Fatalf("state = %s, want %s", g.State, o.to)
						}
						return
					}
					wantErr(t, err, store.ErrGrantState)
					var te *store.TransitionError
					if !errors.As(err, &te) || te.Key != key || te.From != from || te.To != o.to {
						t.Fatalf("error = %v", err)
					}
					for _, part := range []string{key, string(from), string(o.to)} {
						if !strings.Contains(err.Error(), part) {
							t.Fatalf("error %q does not name %q", err, part)
						}
					}
					if g.State != from {
						t.Fatalf("refused transition moved the grant to %s", g.State)
					}
				})
			}
		}
		t.Run("unknown key", func(t *testing.T) {
			wantErr(t, s.ReleaseGrant(ctx(t), "no/such/grant/key", ""), store.ErrNotFound)
		})
		t.Run("a released grant is sent again and can apply", func(t *testing.T) {
			key := grantIn(t, s, "rel", "p", model.GrantUnknown)
			must(t, s.ReleaseGrant(ctx(t), key, "checked"))
			startRun(t, s, "rel-2", "rel")
			id, err := s.BeginBatch(ctx(t), intent("rel-2", "rel", "k-again", "p"))
			must(t, err)
			must(t, s.FinishBatch(ctx(t), id, store.BatchOutcome{State: store.JournalSucceeded}))
			g := grantState(t, s, "rel", "p")
			if g.State != model.GrantApplied || g.Attempts != 2 {
				t.Fatalf("grant = %+v", g)
			}
		})
		t.Run("list grants by tenant, state and person", func(t *testing.T) {
			grantIn(t, s, "list", "a", model.GrantApplied)
			grantIn(t, s, "list", "b", model.GrantUnknown)
			grantIn(t, s, "list", "c", model.GrantNotApplied)
			all, err := s.ListGrants(ctx(t), store.GrantFilter{Tenant: "list"})
			must(t, err)
			if len(all) != 3 || all[0].ExternalID != "a" || all[2].ExternalID != "c" {
				t.Fatalf("all = %+v", all)
			}
			held, err := s.ListGrants(ctx(t), store.GrantFilter{Tenant: "list", States: []model.GrantState{model.GrantUnknown, model.GrantNotApplied}})
			must(t, err)
			if len(held) != 2 || held[0].ExternalID != "b" || held[1].ExternalID != "c" {
				t.Fatalf("held = %+v", held)
			}
			one, err := s.ListGrants(ctx(t), store.GrantFilter{Tenant: "list", ExternalID: "a"})
			must(t, err)
			if len(one) != 1 || one[0].State != model.GrantApplied || one[0].Reason != "welcome" || one[0].Occurrence != "2025" {
				t.Fatalf("one = %+v", one)
			}
			limited, err := s.ListGrants(ctx(t), store.GrantFilter{Tenant: "list", Limit: 2})
			must(t, err)
			if len(limited) != 2 {
				t.Fatalf("limited = %d", len(limited))
			}
		})
	})
}

func testUnknownBatchesAndResend(t *testing.T, d Backend) {
	eachStore(t, d, func(t *testing.T, s *store.Store) {
		startRun(t, s, "r1", "idem")
		id1, err := s.BeginBatch(ctx(t), intent("r1", "idem", "key-1", "a", "b"))
		must(t, err)
		id2, err := s.BeginBatch(ctx(t), intent("r1", "idem", "key-2", "c"))
		must(t, err)
		id3, err := s.BeginBatch(ctx(t), intent("r1", "idem", "key-3", "d"))
		must(t, err)
		must(t, s.FinishBatch(ctx(t), id1, store.BatchOutcome{State: store.JournalUnknown, ErrorMessage: "timeout"}))
		must(t, s.FinishBatch(ctx(t), id3, store.BatchOutcome{State: store.JournalSucceeded}))
		n, err := s.HoldInterrupted(ctx(t), "idem", peopleScope()) // batch 2 was never answered
		must(t, err)
		if n != 1 {
			t.Fatalf("held %d", n)
		}

		held, err := s.UnknownBatches(ctx(t), "idem", peopleScope())
		must(t, err)
		t.Run("held grants are grouped by their batch with its key", func(t *testing.T) {
			if len(held) != 2 {
				t.Fatalf("held batches = %+v", held)
			}
			if held[0].Journal.ID != id1 || held[0].Journal.IdempotencyKey != "key-1" || len(held[0].Grants) != 2 ||
				held[0].Grants[0].ExternalID != "a" || held[0].Grants[1].ExternalID != "b" {
				t.Fatalf("first = %+v", held[0])
			}
			if held[1].Journal.ID != id2 || held[1].Journal.IdempotencyKey != "key-2" || len(held[1].Grants) != 1 {
				t.Fatalf("second = %+v", held[1])
			}
		})
		t.Run("a held batch is resent with the same key and request", func(t *testing.T) {
			startRun(t, s, "r2", "idem")
			id, err := s.BeginResend(ctx(t), id1, "r2", peopleScope())
			must(t, err)
			j, err := s.Journal(ctx(t), store.JournalFilter{RunID: "r2"})
			must(t, err)
			if len(j) != 1 || j[0].ID != id || j[0].IdempotencyKey != "key-1" || j[0].RequestSHA != "sha-key-1" ||
				j[0].ItemCount != 2 || j[0].ResendOf != id1 || j[0].State != store.JournalSent {
				t.Fatalf("resend entry = %+v", j)
			}
			for _, ext := range []string{"a", "b"} {
				if g := grantState(t, s, "idem", ext); g.State != model.GrantPending || g.Attempts != 2 {
					t.Fatalf("grant %s = %+v", ext, g)
				}
			}
			must(t, s.FinishBatch(ctx(t), id, store.BatchOutcome{State: store.JournalSucceeded, HTTPStatus: 201}))
			totals, err := s.GrantTotals(ctx(t), "idem")
			must(t, err)
			if len(totals) != 3 || totals["a"] != 50 || totals["b"] != 50 || totals["d"] != 50 {
				t.Fatalf("totals = %v", totals)
			}
			left, err := s.UnknownBatches(ctx(t), "idem", peopleScope())
			must(t, err)
			if len(left) != 1 || left[0].Journal.ID != id2 {
				t.Fatalf("left = %+v", left)
			}
		})
		t.Run("only a held batch with held grants can be resent", func(t *testing.T) {
			startRun(t, s, "r3", "idem")
			_, err := s.BeginResend(ctx(t), id3, "r3", peopleScope()) // succeeded
			wantErr(t, err, store.ErrJournalState)
			_, err = s.BeginResend(ctx(t), id1, "r3", peopleScope()) // its grants were resent already
			wantErr(t, err, store.ErrJournalState)
			_, err = s.BeginResend(ctx(t), 424242, "r3", peopleScope())
			wantErr(t, err, store.ErrNotFound)
		})
	})
}

// TestUnaccountedPeopleAreHeld covers a success answer that does not account
// for every person sent: their grants are held as unknown, never applied,
// listed for the operator, and never offered for a resend with the key.
func testUnaccountedPeopleAreHeld(t *testing.T, d Backend) {
	eachStore(t, d, func(t *testing.T, s *store.Store) {
		startRun(t, s, "r1", "acc")
		id, err := s.BeginBatch(ctx(t), intent("r1", "acc", "key-acc", "a", "b", "c"))
		must(t, err)
		must(t, s.FinishBatch(ctx(t), id, store.BatchOutcome{
			State: store.JournalSucceeded, HTTPStatus: 201, ErrorMessage: "the answer accounted for 2 of 3 people",
			RemoteIDs: map[string]string{"a": "rid-a", "c": "rid-c"}, Unaccounted: []string{"b"},
		}))

		t.Run("the accounted people are applied with their remote ids", func(t *testing.T) {
			for _, ext := range []string{"a", "c"} {
				if g := grantState(t, s, "acc", ext); g.State != model.GrantApplied || g.LastError != "" {
					t.Errorf("grant %s = %+v, want applied", ext, g)
				}
				p, ok, err := s.Person(ctx(t), "acc", ext)
				must(t, err)
				if !ok || p.RemoteID != "rid-"+ext {
					t.Errorf("person %s: remote id %q, want rid-%s", ext, p.RemoteID, ext)
				}
			}
			totals, err := s.GrantTotals(ctx(t), "acc")
			must(t, err)
			if len(totals) != 2 || totals["b"] != 0 {
				t.Errorf("totals = %v, want a and c only", totals)
			}
		})
		t.Run("the unaccounted person is held and listed", func(t *testing.T) {
			g := grantState(t, s, "acc", "b")
			if g.State != model.GrantUnknown || !strings.Contains(g.LastError, "did not return this person") {
				t.Fatalf("grant b = %+v, want unknown with a reason", g)
			}
			listed, err := s.ListGrants(ctx(t), store.GrantFilter{Tenant: "acc", States: []model.GrantState{model.GrantUnknown}})
			must(t, err)
			if len(listed) != 1 || listed[0].ExternalID != "b" {
				t.Fatalf("held grants listed = %+v, want b", listed)
			}
			p, _, err := s.Person(ctx(t), "acc", "b")
			must(t, err)
			if p.RemoteID != "" {
				t.Errorf("person b has remote id %q, want none", p.RemoteID)
			}
			j, err := s.Journal(ctx(t), store.JournalFilter{Tenant: "acc"})
			must(t, err)
			if len(j) != 1 || j[0].State != store.JournalSucceeded || j[0].ErrorMessage == "" {
				t.Fatalf("journal = %+v, want one succeeded entry that says why", j)
			}
		})
		t.Run("it is not offered for a resend with the key", func(t *testing.T) {
			held, err := s.UnknownBatches(ctx(t), "acc", peopleScope())
			must(t, err)
			if len(held) != 0 {
				t.Fatalf("unknown batches = %+v, want none", held)
			}
			startRun(t, s, "r2", "acc")
			_, err = s.BeginResend(ctx(t), id, "r2", peopleScope())
			wantErr(t, err, store.ErrJournalState)
		})
		t.Run("the operator settles it", func(t *testing.T) {
			must(t, s.ConfirmGrant(ctx(t), model.GrantKey("acc", "b", "welcome", "2025"), "seen on the platform"))
			if g := grantState(t, s, "acc", "b"); g.State != model.GrantApplied {
				t.Fatalf("grant b = %+v after confirm", g)
			}
		})
		t.Run("only a success answer can leave people unaccounted", func(t *testing.T) {
			startRun(t, s, "r3", "acc")
			id, err := s.BeginBatch(ctx(t), intent("r3", "acc", "key-bad", "d"))
			must(t, err)
			err = s.FinishBatch(ctx(t), id, store.BatchOutcome{State: store.JournalUnknown, Unaccounted: []string{"d"}})
			if err == nil || !strings.Contains(err.Error(), "only a success answer") {
				t.Fatalf("error = %v", err)
			}
			if g := grantState(t, s, "acc", "d"); g.State != model.GrantPending {
				t.Fatalf("grant d = %+v, want still pending", g)
			}
		})
		t.Run("a late answer to an interrupted call holds only the unaccounted", func(t *testing.T) {
			startRun(t, s, "r4", "late")
			id, err := s.BeginBatch(ctx(t), intent("r4", "late", "key-late", "x", "y"))
			must(t, err)
			n, err := s.HoldInterrupted(ctx(t), "late", peopleScope())
			must(t, err)
			if n != 2 {
				t.Fatalf("held %d, want 2", n)
			}
			must(t, s.FinishBatch(ctx(t), id, store.BatchOutcome{State: store.JournalSucceeded,
				RemoteIDs: map[string]string{"x": "rid-x"}, Unaccounted: []string{"y"}}))
			if g := grantState(t, s, "late", "x"); g.State != model.GrantApplied {
				t.Errorf("grant x = %+v, want applied", g)
			}
			if g := grantState(t, s, "late", "y"); g.State != model.GrantUnknown {
				t.Errorf("grant y = %+v, want unknown", g)
			}
			held, err := s.UnknownBatches(ctx(t), "late", peopleScope())
			must(t, err)
			if len(held) != 0 {
				t.Fatalf("unknown batches = %+v, want none", held)
			}
		})
	})
}
