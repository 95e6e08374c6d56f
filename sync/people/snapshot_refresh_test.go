package people

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"hrsync/model"
	"hrsync/sources"
	"hrsync/store"
	"hrsync/sync/sender"
)

// scanCounter is the store with a count of its scans of every person.
type scanCounter struct {
	*store.Store
	scans atomic.Int64
}

func (s *scanCounter) ScanPeopleKeysParts(ctx context.Context, tenant string, parts int,
	fn func(int, store.PersonKey) error) (int64, error) {
	s.scans.Add(1)
	return s.Store.ScanPeopleKeysParts(ctx, tenant, parts, fn)
}

// encoded is the snapshot encoding of s, whole.
func encoded(s *stateIndex) []byte {
	var out []byte
	for p := range s.snapshotParts(snapshotPartSize) {
		out = append(out, p...)
	}
	return out
}

// TestRunSavesScannedState: a run with no snapshot saves the state its plan
// scanned, without scanning the people again, when the run changed none of
// them; the snapshot is the one a scan after the run builds, byte for byte.
// A run that changed people scans again, and its snapshot has the changes.
func TestRunSavesScannedState(t *testing.T) {
	eachStore(t, func(t *testing.T, ts testStore) {
		const tenant = "acme"
		ps := statePeople(800)
		rows := make([]store.PersonRow, len(ps))
		for i := range ps {
			ps[i].Email = strings.ToLower(ps[i].Email)
			p := ps[i]
			rows[i] = store.PersonRow{ExternalID: p.ExternalID, Email: p.Email, FirstName: p.FirstName, LastName: p.LastName,
				Department: p.Department, StartDate: p.StartDate, Fingerprint: int64(sources.Fingerprint(p)),
				RemoteID: "r" + p.ExternalID, CreatedOnPlatformAt: time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC)}
		}
		if err := ts.st.SavePeople(t.Context(), tenant, rows); err != nil {
			t.Fatal(err)
		}
		counted := &scanCounter{Store: ts.st}
		core, logs := observer.New(zap.DebugLevel)
		job, err := New(Options{Tenant: tenant, CompanyID: "co", CollectionID: "c", Safeguards: DefaultSafeguards()},
			counted, sender.NewJournal(ts.st), noCalls{t}, zap.New(core))
		if err != nil {
			t.Fatal(err)
		}
		run := func(t *testing.T, name string, ps []model.Person) {
			t.Helper()
			rep, err := job.RunOnce(t.Context(), feedOf(writeExport(t, name, ps)), RunFlags{})
			if err != nil || rep.Outcome() != model.OutcomeOK {
				t.Fatalf("run: %v, %+v", err, rep.Exports)
			}
		}
		// stored checks that the snapshot is valid and is what a fresh
		// scan encodes.
		stored := func(t *testing.T) *stateIndex {
			t.Helper()
			s, err := loadState(t.Context(), ts.st, tenant)
			if err != nil || s.from != stateFromSnapshot {
				t.Fatalf("loaded from %q, %v; want the snapshot", s.from, err)
			}
			fresh, err := scanState(t.Context(), ts.st, tenant)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(encoded(s), encoded(fresh)) {
				t.Fatal("the saved snapshot is not what a scan of the people encodes")
			}
			return s
		}
		saves := func() int { return logs.FilterMessage("state snapshot saved").Len() }

		t.Run("no change: the plan's scan is saved", func(t *testing.T) {
			run(t, "same.csv", ps)
			if got := counted.scans.Load(); got != 1 {
				t.Fatalf("%d scans of the people, want 1 (the plan's)", got)
			}
			if saves() != 1 {
				t.Fatalf("%d snapshots saved, want 1", saves())
			}
			stored(t)
		})
		changed := slices.Clone(ps)
		changed[5].Department = "Sales"
		t.Run("changes: scanned again after the run", func(t *testing.T) {
			if _, err := ts.raw.ExecContext(t.Context(), "DELETE FROM people_snapshots"); err != nil {
				t.Fatal(err)
			}
			counted.scans.Store(0)
			run(t, "changed.csv", changed)
			if got := counted.scans.Load(); got != 2 {
				t.Fatalf("%d scans of the people, want 2 (the plan's, then the refresh's)", got)
			}
			if saves() != 2 {
				t.Fatalf("%d snapshots saved, want 2", saves())
			}
			s := stored(t)
			e := s.lookupKey(sources.KeyHash(changed[5].ExternalID), changed[5].ExternalID)
			if e == nil || e.fingerprint != sources.Fingerprint(changed[5]) {
				t.Fatal("the snapshot does not have the change")
			}
		})
	})
}
