package drivertest

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"hrsync/model"
	"hrsync/store"
)

func personalization(ext, coll string, state store.PersonalizationState) store.Personalization {
	return store.Personalization{
		Tenant: "acme", ExternalID: ext, CollectionID: coll, Fingerprint: -42, State: state,
		PlatformStatus: "Pending", Sha: "abc123",
		Fields:   json.RawMessage(`{"name":{"first":"Ada","initials":"AT"},"work":{"department":"Sales","location":"Lisbon"},"anniversary":{"month":3,"ordinal":"0th","elapsed":"0 months"}}`),
		Attempts: 1, FirstRequestedAt: at(1, 0),
	}
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	must(t, json.Unmarshal(a, &x))
	must(t, json.Unmarshal(b, &y))
	return reflect.DeepEqual(x, y)
}

func testPersonalizations(t *testing.T, d Backend) {
	eachStore(t, d, func(t *testing.T, s *store.Store) {
		t.Run("a saved outcome reads back field for field", func(t *testing.T) {
			p := personalization("e1", "c1", store.PersonalizationPending)
			must(t, s.SavePersonalization(ctx(t), p))
			got, err := s.Personalizations(ctx(t), "acme")
			must(t, err)
			g, ok := got[store.PersonalizationKey{ExternalID: "e1", CollectionID: "c1"}]
			if !ok || len(got) != 1 {
				t.Fatalf("read %d rows, want e1/c1 only: %+v", len(got), got)
			}
			if !sameJSON(t, g.Fields, p.Fields) {
				t.Errorf("fields = %s, want %s", g.Fields, p.Fields)
			}
			if g.Fingerprint != -42 || g.State != store.PersonalizationPending || g.PlatformStatus != "Pending" ||
				g.Sha != "abc123" || g.Attempts != 1 || !g.FirstRequestedAt.Equal(at(1, 0)) || g.UpdatedAt.IsZero() ||
				!g.DoneAt.IsZero() || !g.NextAttemptAt.IsZero() {
				t.Errorf("read back %+v", g)
			}
		})
		t.Run("saving again replaces the row", func(t *testing.T) {
			p := personalization("e1", "c1", store.PersonalizationRetry)
			p.Fields, p.Sha, p.PlatformStatus = nil, "", ""
			p.Failures, p.LastError, p.NextAttemptAt = 2, "status 500", at(2, 0)
			must(t, s.SavePersonalization(ctx(t), p))
			got, err := s.Personalizations(ctx(t), "acme")
			must(t, err)
			g := got[store.PersonalizationKey{ExternalID: "e1", CollectionID: "c1"}]
			if g.State != store.PersonalizationRetry || g.Failures != 2 || g.LastError != "status 500" ||
				!g.NextAttemptAt.Equal(at(2, 0)) || g.Sha != "" || !sameJSON(t, g.Fields, []byte("{}")) {
				t.Errorf("read back %+v", g)
			}
		})
		t.Run("rows are kept per tenant", func(t *testing.T) {
			p := personalization("e1", "c1", store.PersonalizationDone)
			p.Tenant = "other"
			must(t, s.SavePersonalization(ctx(t), p))
			got, err := s.Personalizations(ctx(t), "other")
			must(t, err)
			if len(got) != 1 || got[store.PersonalizationKey{ExternalID: "e1", CollectionID: "c1"}].State != store.PersonalizationDone {
				t.Errorf("other tenant reads %+v", got)
			}
		})
		t.Run("bad input is refused", func(t *testing.T) {
			bad := personalization("e2", "c1", "unknown")
			if err := s.SavePersonalization(ctx(t), bad); err == nil {
				t.Error("unknown state accepted")
			}
			bad = personalization("e2", "c1", store.PersonalizationDone)
			bad.Fields = json.RawMessage(`[1,2]`)
			if err := s.SavePersonalization(ctx(t), bad); err == nil {
				t.Error("fields that are not an object accepted")
			}
			bad = personalization("", "c1", store.PersonalizationDone)
			if err := s.SavePersonalization(ctx(t), bad); err == nil {
				t.Error("empty external id accepted")
			}
		})
		t.Run("counts per tenant, collection and state", func(t *testing.T) {
			must(t, s.SavePersonalization(ctx(t), personalization("e2", "c1", store.PersonalizationDone)))
			must(t, s.SavePersonalization(ctx(t), personalization("e3", "c1", store.PersonalizationDone)))
			must(t, s.SavePersonalization(ctx(t), personalization("e2", "c2", store.PersonalizationFailed)))
			got, err := s.PersonalizationCounts(ctx(t))
			must(t, err)
			want := []store.PersonalizationCount{
				{Tenant: "acme", CollectionID: "c1", State: store.PersonalizationDone, Count: 2},
				{Tenant: "acme", CollectionID: "c1", State: store.PersonalizationRetry, Count: 1},
				{Tenant: "acme", CollectionID: "c2", State: store.PersonalizationFailed, Count: 1},
				{Tenant: "other", CollectionID: "c1", State: store.PersonalizationDone, Count: 1},
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("counts = %+v\nwant %+v", got, want)
			}
		})
	})
}

func testPersonalizationReportView(t *testing.T, d Backend) {
	eachBackend(t, d, func(t *testing.T, b backend) {
		s := b.open(t)
		must(t, s.SavePeople(ctx(t), "acme", []store.PersonRow{person("e1", 1)}))
		must(t, s.SavePersonalization(ctx(t), personalization("e1", "c1", store.PersonalizationDone)))
		t.Run("flattens the derived fields and joins to people", func(t *testing.T) {
			var email, initials, dept, ordinal, state string
			err := b.raw(t).QueryRowContext(ctx(t), `SELECT pe.email, r.initials, r.department, r.anniversary_ordinal, r.state
				FROM personalization_report r JOIN people pe ON pe.tenant = r.tenant AND pe.external_id = r.external_id
				WHERE r.tenant = 'acme' AND r.collection_id = 'c1'`).Scan(&email, &initials, &dept, &ordinal, &state)
			must(t, err)
			if email == "" || initials != "AT" || dept != "Sales" || ordinal != "0th" || state != "done" {
				t.Errorf("view row: email %q initials %q department %q ordinal %q state %q", email, initials, dept, ordinal, state)
			}
		})
	})
}

func testRefusedCollections(t *testing.T, d Backend) {
	eachStore(t, d, func(t *testing.T, s *store.Store) {
		t.Run("a refusal is remembered, replaced and cleared", func(t *testing.T) {
			must(t, s.MarkNotPersonalizable(ctx(t), "acme", store.RefusedCollection{CollectionID: "c2", Reason: "first", RefusedAt: at(1, 0)}))
			must(t, s.MarkNotPersonalizable(ctx(t), "acme", store.RefusedCollection{CollectionID: "c2", Reason: "second", RefusedAt: at(2, 0)}))
			got, err := s.RefusedCollections(ctx(t), "acme")
			must(t, err)
			c, ok := got["c2"]
			if len(got) != 1 || !ok || c.Reason != "second" || !c.RefusedAt.Equal(at(2, 0)) {
				t.Fatalf("refused = %+v", got)
			}
			other, err := s.RefusedCollections(ctx(t), "other")
			must(t, err)
			if len(other) != 0 {
				t.Errorf("another tenant sees %+v", other)
			}
			must(t, s.ClearNotPersonalizable(ctx(t), "acme", "c2"))
			got, err = s.RefusedCollections(ctx(t), "acme")
			must(t, err)
			if len(got) != 0 {
				t.Errorf("after clear: %+v", got)
			}
		})
	})
}

func testLastProcessedFile(t *testing.T, d Backend) {
	eachStore(t, d, func(t *testing.T, s *store.Store) {
		t.Run("none before any file", func(t *testing.T) {
			_, ok, err := s.LastProcessedFile(ctx(t), "acme")
			must(t, err)
			if ok {
				t.Fatal("found a file in an empty store")
			}
		})
		t.Run("the newest processed file, failed ones left out", func(t *testing.T) {
			record := func(run, sha, name string, outcome store.SourceOutcome, when time.Time) {
				must(t, s.StartRun(ctx(t), store.Run{ID: run, Job: model.JobPeople, Tenant: "acme"}))
				must(t, s.FinishRun(ctx(t), store.RunResult{ID: run, Outcome: model.OutcomeOK, FinishedAt: when,
					SourceFile: &store.SourceFile{SHA256: sha, Name: name, Rows: 3, Outcome: outcome}}))
			}
			record("r1", "aa", "one.csv", store.SourceProcessed, at(1, 0))
			record("r2", "bb", "two.csv", store.SourceProcessed, at(2, 0))
			record("r3", "cc", "three.csv", store.SourceFailed, at(3, 0))
			f, ok, err := s.LastProcessedFile(ctx(t), "acme")
			must(t, err)
			if !ok || f.Name != "two.csv" || f.SHA256 != "bb" || f.RunID != "r2" || f.Outcome != store.SourceProcessed {
				t.Errorf("last processed = %+v, %v", f, ok)
			}
		})
	})
}
