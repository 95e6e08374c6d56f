package people

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"hrsync/api"
	"hrsync/internal/storetest"
	"hrsync/model"
	"hrsync/sources"
	"hrsync/sources/csvsrc"
	"hrsync/store"
	"hrsync/sync/sender"
)

// testStore is a store for a test and a plain handle on its tables, to
// write as an operator's SQL would.
type testStore struct {
	name string
	st   *store.Store
	raw  *sql.DB
}

// eachStore runs fn on a fresh SQLite store and a fresh PostgreSQL schema
// (dropped at the end); it fails without HRSYNC_TEST_POSTGRES_URL.
func eachStore(t *testing.T, fn func(t *testing.T, ts testStore)) {
	t.Helper()
	storetest.Each(t, func(t *testing.T, s storetest.Store) {
		fn(t, testStore{name: s.Name, st: s.St, raw: s.Raw})
	})
}

// q writes a query's "?" placeholders as the store wants them.
func (ts testStore) q(query string) string {
	if ts.name != "postgres" {
		return query
	}
	return sqlx.Rebind(sqlx.DOLLAR, query)
}

// statePeople are n people as an export lists them.
func statePeople(n int) []model.Person {
	out := make([]model.Person, n)
	for i := range out {
		out[i] = model.Person{
			ExternalID: fmt.Sprintf("%0*d", 3+i%9, i+1), // externalIds of several lengths
			Email:      fmt.Sprintf("p%d@example.com", i+1),
			FirstName:  "First", LastName: fmt.Sprintf("Last%d", i+1), Department: "Eng",
			StartDate: time.Date(2024, 1, 1+i%28, 0, 0, 0, 0, time.UTC),
		}
	}
	return out
}

// seedState saves people as known and created, with the fingerprints the
// plan computes from the same people read from an export; every tenth is
// departed and every seventh not yet created.
func seedState(t testing.TB, st *store.Store, tenant string, ps []model.Person) {
	t.Helper()
	rows := make([]store.PersonRow, len(ps))
	for i, p := range ps {
		rows[i] = store.PersonRow{ExternalID: p.ExternalID, Email: p.Email, FirstName: p.FirstName, LastName: p.LastName,
			Department: p.Department, StartDate: p.StartDate, Fingerprint: int64(sources.Fingerprint(p))}
		if i%7 != 3 {
			rows[i].CreatedOnPlatformAt = time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC)
			rows[i].RemoteID = "r" + p.ExternalID
		}
		if i%10 == 5 {
			rows[i].DepartedAt = time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)
		}
	}
	if err := st.SavePeople(t.Context(), tenant, rows); err != nil {
		t.Fatal(err)
	}
}

// sameIndex fails unless two indexes hold the same people, ids, e-mails
// and buckets.
func sameIndex(t *testing.T, got, want *stateIndex) {
	t.Helper()
	switch {
	case !slices.Equal(got.people, want.people):
		t.Fatalf("entries differ: %d against %d", len(got.people), len(want.people))
	case !bytes.Equal(got.ids, want.ids):
		t.Fatalf("ids differ: %d bytes against %d", len(got.ids), len(want.ids))
	case !slices.Equal(got.emails, want.emails) || !slices.Equal(got.emailOwner, want.emailOwner):
		t.Fatalf("e-mails differ: %d against %d", len(got.emails), len(want.emails))
	case got.active != want.active:
		t.Fatalf("active = %d, want %d", got.active, want.active)
	case got.byID.shift != want.byID.shift || !slices.Equal(got.byID.starts, want.byID.starts) ||
		got.byMail.shift != want.byMail.shift || !slices.Equal(got.byMail.starts, want.byMail.starts):
		t.Fatal("buckets differ")
	}
}

// snapshotBytes is the whole snapshot of s in one slice.
func snapshotBytes(s *stateIndex, partSize int) []byte {
	var out []byte
	for p := range s.snapshotParts(partSize) {
		out = append(out, p...)
	}
	return out
}

func TestSnapshotRoundTrip(t *testing.T) {
	st, err := store.Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "state.db"), store.Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	ps := statePeople(3000)
	for i := range ps {
		// E-mails shared by three active people, and by an active and a
		// departed one (seedState departs the fifth of every ten).
		if i%50 == 2 || i%50 == 3 || i%50 == 16 {
			ps[i].Email = ps[i-1].Email
		}
	}
	seedState(t, st, "t", ps)
	scanned, err := scanState(t.Context(), st, "t")
	if err != nil {
		t.Fatal(err)
	}
	if scanned.from != stateFromScan || scanned.version == 0 {
		t.Fatalf("scan: from %q, version %d", scanned.from, scanned.version)
	}
	if shared := len(slices.DeleteFunc(slices.Clone(scanned.people), func(e stateEntry) bool { return !e.has(flagSharedEmail) })); shared != 3*60 {
		t.Fatalf("%d people flagged as sharing their e-mail, want %d", shared, 3*60)
	}
	whole := snapshotBytes(scanned, snapshotPartSize)
	want := snapHeaderLen + len(scanned.people)*snapEntryLen + len(scanned.ids) + len(scanned.emails)*snapEmailLen + snapHashLen
	if len(whole) != want {
		t.Fatalf("snapshot of %d bytes, want %d", len(whole), want)
	}

	t.Run("the encoder's parts have the size asked, the last one shorter", func(t *testing.T) {
		var sizes []int
		for p := range scanned.snapshotParts(1000) {
			sizes = append(sizes, len(p))
		}
		for i, n := range sizes {
			if n > 1000 || (i < len(sizes)-1 && n != 1000) || n == 0 {
				t.Fatalf("part %d of %d has %d bytes", i, len(sizes), n)
			}
		}
		if !bytes.Equal(snapshotBytes(scanned, 1000), whole) {
			t.Fatal("the bytes depend on the part size")
		}
	})

	// Records cut anywhere between parts: 1 byte at a time, prime sizes,
	// sizes around each record's length, one part.
	for _, n := range []int{1, 3, 7, 30, 31, 32, 55, 56, 57, 1000, 4099, len(whole)} {
		t.Run(fmt.Sprintf("decoded from parts of %d bytes it equals the scanned index", n), func(t *testing.T) {
			got, err := decodeSnapshot(chunks(whole, n))
			if err != nil {
				t.Fatal(err)
			}
			sameIndex(t, got, scanned)
		})
	}

	t.Run("a plan's marks are not stored", func(t *testing.T) {
		marked := *scanned
		marked.marks = newPlanMarks(len(marked.people))
		for i := range marked.people {
			marked.marks.set(i, markSeen)
			marked.marks.firstID(i, 7)
			marked.marks.firstMail(i, 9)
		}
		if !bytes.Equal(snapshotBytes(&marked, snapshotPartSize), whole) {
			t.Fatal("a plan's marks changed the snapshot")
		}
	})

	t.Run("an empty index", func(t *testing.T) {
		empty, err := scanState(t.Context(), st, "nobody")
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeSnapshot(chunks(snapshotBytes(empty, snapshotPartSize), 5))
		if err != nil {
			t.Fatal(err)
		}
		sameIndex(t, got, empty)
		if got.lookup(1) != nil || got.emailTaken(1) || len(got.departed()) != 0 {
			t.Fatal("an empty index found something")
		}
	})
}

func TestLookupKeyTellsCollidingIDsApart(t *testing.T) {
	// Two people whose externalIds hash alike (forged: a real 64-bit
	// collision is not at hand) and a third person elsewhere.
	const h = 0x1234_5678_9abc_def0
	s := &stateIndex{ids: []byte("E1E22X")}
	s.people = []stateEntry{
		{id: h, idStart: 0, idLen: 2, fingerprint: 1},
		{id: h, idStart: 2, idLen: 3, fingerprint: 2},
		{id: h + 1, idStart: 5, idLen: 1, fingerprint: 3},
	}
	s.byID = newBuckets(len(s.people), func(i int) uint64 { return s.people[i].id })
	for _, tt := range []struct {
		id   uint64
		ext  string
		want uint64 // fingerprint; 0 for none
	}{{h, "E1", 1}, {h, "E22", 2}, {h + 1, "X", 3}, {h, "E3", 0}, {h, "X", 0}, {h + 2, "E1", 0}} {
		e := s.lookupKey(tt.id, tt.ext)
		switch {
		case tt.want == 0 && e != nil:
			t.Errorf("lookupKey(%#x, %q) found fingerprint %d", tt.id, tt.ext, e.fingerprint)
		case tt.want != 0 && (e == nil || e.fingerprint != tt.want):
			t.Errorf("lookupKey(%#x, %q) = %v, want fingerprint %d", tt.id, tt.ext, e, tt.want)
		}
	}
}

// saveSnapshot scans the tenant and saves its snapshot, as a run's refresh does.
func saveSnapshot(t *testing.T, st *store.Store, tenant string) *stateIndex {
	t.Helper()
	s, err := scanState(t.Context(), st, tenant)
	if err != nil {
		t.Fatal(err)
	}
	saved, err := st.SavePeopleSnapshot(t.Context(), tenant, s.version, s.snapshotParts(snapshotPartSize))
	if err != nil || !saved {
		t.Fatalf("save snapshot: saved %v, %v", saved, err)
	}
	return s
}

// writeExport writes ps as a CSV export and returns it as a source.
func writeExport(t *testing.T, name string, ps []model.Person) *exportFile {
	t.Helper()
	var b strings.Builder
	b.WriteString("externalId,email,firstName,lastName,department,startDate\n")
	for _, p := range ps {
		fmt.Fprintf(&b, "%s,%s,%s,%s,%s,%s\n", p.ExternalID, p.Email, p.FirstName, p.LastName, p.Department,
			p.StartDate.Format(model.DateLayout))
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	cols := map[string]string{}
	for _, f := range []string{"externalId", "email", "firstName", "lastName", "department", "startDate"} {
		cols[f] = f
	}
	return &exportFile{File: csvsrc.File{Path: path, Options: sources.CSVOptions{Mapping: sources.Mapping{Columns: cols}}},
		sha: fmt.Sprintf("%x", time.Now().UnixNano()), size: int64(b.Len())}
}

// exportFile is a CSV export as the drop folder hands it to a run.
type exportFile struct {
	csvsrc.File
	sha  string
	size int64
}

func (f *exportFile) SHA256() string                                      { return f.sha }
func (f *exportFile) Size() int64                                         { return f.size }
func (f *exportFile) Archive(bool, sources.RenderReports) (string, error) { return "", nil }

func feedOf(exports ...Export) Feed {
	return func(context.Context) ([]Export, error) { return exports, nil }
}

// planKey is what a plan found, as one comparable string.
func planKey(p *Plan) string {
	created := make([]string, 0, p.Create.Len())
	for _, c := range p.Create.All() {
		created = append(created, c.ExternalID)
	}
	return fmt.Sprint(p.Summary(), p.Changed, p.Returned, p.Departed, p.Held, created, p.Rejections)
}

// noCalls is a Creator that fails the test if the run calls the platform.
type noCalls struct{ t *testing.T }

func (c noCalls) CreatePeople(context.Context, api.CreatePeopleRequest, string) ([]api.ReturnedPerson, error) {
	c.t.Error("the run called the platform")
	return nil, errors.New("no call expected")
}

// corruptSnapshot flips one byte in the middle of the tenant's first part,
// through SQL.
func corruptSnapshot(t *testing.T, ts testStore, tenant string) {
	t.Helper()
	var data []byte
	if err := ts.raw.QueryRowContext(t.Context(), ts.q("SELECT data FROM people_snapshots WHERE tenant = ? AND part = 0"), tenant).Scan(&data); err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0x10
	if _, err := ts.raw.ExecContext(t.Context(), ts.q("UPDATE people_snapshots SET data = ? WHERE tenant = ? AND part = 0"), data, tenant); err != nil {
		t.Fatal(err)
	}
}

func TestLoadStateFromSnapshot(t *testing.T) {
	eachStore(t, func(t *testing.T, ts testStore) {
		const tenant = "acme"
		ps := statePeople(2500)
		seedState(t, ts.st, tenant, ps)
		// The export: the state's people, one changed, one gone, one new.
		next := slices.Clone(ps[:len(ps)-1])
		next[10].Department = "Sales"
		next = append(next, model.Person{ExternalID: "N1", Email: "n1@example.com", FirstName: "New", LastName: "Hire",
			Department: "Eng", StartDate: time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)})
		export := writeExport(t, "next.csv", next)
		job, err := New(Options{Tenant: tenant, CollectionID: "c", Safeguards: DefaultSafeguards()}, ts.st, sender.NewJournal(ts.st), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		plan := func(t *testing.T) string {
			t.Helper()
			p, err := job.BuildPlan(t.Context(), export)
			if err != nil {
				t.Fatal(err)
			}
			return planKey(p)
		}

		scanned, err := loadState(t.Context(), ts.st, tenant)
		if err != nil {
			t.Fatal(err)
		}
		if scanned.from != stateFromScan {
			t.Fatalf("no snapshot stored, yet from = %q", scanned.from)
		}
		scanPlan := plan(t)

		t.Run("a valid snapshot is used, and equals the scan", func(t *testing.T) {
			saveSnapshot(t, ts.st, tenant)
			got, err := loadState(t.Context(), ts.st, tenant)
			if err != nil {
				t.Fatal(err)
			}
			if got.from != stateFromSnapshot || got.version != scanned.version || got.snapshotErr != nil {
				t.Fatalf("from %q at version %d (%v); want the snapshot at %d", got.from, got.version, got.snapshotErr, scanned.version)
			}
			sameIndex(t, got, scanned)
			if p := plan(t); p != scanPlan {
				t.Fatalf("plan from the snapshot:\n%s\nfrom the scan:\n%s", p, scanPlan)
			}
		})

		t.Run("a snapshot of many parts, decoded by jobs while their buffers go round, equals the scan", func(t *testing.T) {
			loadsInManyParts(t, ts, tenant, scanned)
			saveSnapshot(t, ts.st, tenant) // the usual parts again, for the cases below
		})

		t.Run("a corrupted snapshot falls back to the scan, with the same plan", func(t *testing.T) {
			corruptSnapshot(t, ts, tenant)
			got, err := loadState(t.Context(), ts.st, tenant)
			if err != nil {
				t.Fatal(err)
			}
			if got.from != stateFromScan || !errors.Is(got.snapshotErr, errBadSnapshot) {
				t.Fatalf("from %q (%v) after corruption", got.from, got.snapshotErr)
			}
			sameIndex(t, got, scanned)
			if p := plan(t); p != scanPlan {
				t.Fatalf("plan after corruption:\n%s\nfrom the scan:\n%s", p, scanPlan)
			}
		})

		t.Run("a stale snapshot is not used", func(t *testing.T) {
			saveSnapshot(t, ts.st, tenant)
			if err := ts.st.MarkDeparted(t.Context(), tenant, []string{ps[0].ExternalID}, time.Now()); err != nil {
				t.Fatal(err)
			}
			got, err := loadState(t.Context(), ts.st, tenant)
			if err != nil {
				t.Fatal(err)
			}
			if got.from != stateFromScan || got.version == scanned.version || got.snapshotErr != nil {
				t.Fatalf("from %q at version %d (%v) after a departure", got.from, got.version, got.snapshotErr)
			}
			if e := got.lookupKey(sources.KeyHash(ps[0].ExternalID), ps[0].ExternalID); e == nil || !e.has(flagDeparted) {
				t.Fatal("the index does not show the departure")
			}
		})
	})
}

// loadsInManyParts saves the tenant's snapshot in parts of 4 KiB, about
// 30 for the 2,500 people of TestLoadStateFromSnapshot, many more than the
// buffers loadSnapshot hands round (GOMAXPROCS+2), and checks that it loads
// equal to scanned. A job that gave its buffer back before decoding it
// would race with the store's copy of a later part into it.
func loadsInManyParts(t *testing.T, ts testStore, tenant string, scanned *stateIndex) {
	t.Helper()
	s, err := scanState(t.Context(), ts.st, tenant)
	if err != nil {
		t.Fatal(err)
	}
	saved, err := ts.st.SavePeopleSnapshot(t.Context(), tenant, s.version, s.snapshotParts(4096))
	if err != nil || !saved {
		t.Fatalf("save snapshot: saved %v, %v", saved, err)
	}
	parts := 0
	for range s.snapshotParts(4096) {
		parts++
	}
	if parts < 3*(runtime.GOMAXPROCS(0)+2) {
		t.Fatalf("%d parts, want several times the buffers", parts)
	}
	got, err := loadState(t.Context(), ts.st, tenant)
	if err != nil {
		t.Fatal(err)
	}
	if got.from != stateFromSnapshot || got.snapshotErr != nil {
		t.Fatalf("from %q (%v); want the snapshot", got.from, got.snapshotErr)
	}
	sameIndex(t, got, scanned)
}

// snapshotRow is a tenant's stored snapshot as SQL sees it.
type snapshotRow struct {
	parts   int
	version int64
	data    string // hex of every part, in order
}

func readSnapshotRow(t *testing.T, ts testStore, tenant string) snapshotRow {
	t.Helper()
	rows, err := ts.raw.QueryContext(t.Context(), ts.q("SELECT version, data FROM people_snapshots WHERE tenant = ? ORDER BY part"), tenant)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rows.Close() }()
	var r snapshotRow
	var all []byte
	for rows.Next() {
		var data []byte
		if err := rows.Scan(&r.version, &data); err != nil {
			t.Fatal(err)
		}
		r.parts++
		all = append(all, data...)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	r.data = hex.EncodeToString(all)
	return r
}

func TestRunRefreshesSnapshot(t *testing.T) {
	eachStore(t, func(t *testing.T, ts testStore) {
		const tenant = "acme"
		ps := statePeople(800)
		for i := range ps { // every person created, none departed: a run with no change calls nothing
			ps[i].Email = strings.ToLower(ps[i].Email)
		}
		rows := make([]store.PersonRow, len(ps))
		for i, p := range ps {
			rows[i] = store.PersonRow{ExternalID: p.ExternalID, Email: p.Email, FirstName: p.FirstName, LastName: p.LastName,
				Department: p.Department, StartDate: p.StartDate, Fingerprint: int64(sources.Fingerprint(p)),
				RemoteID: "r" + p.ExternalID, CreatedOnPlatformAt: time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC)}
		}
		if err := ts.st.SavePeople(t.Context(), tenant, rows); err != nil {
			t.Fatal(err)
		}
		core, logs := observer.New(zap.DebugLevel)
		job, err := New(Options{Tenant: tenant, CompanyID: "co", CollectionID: "c", Safeguards: DefaultSafeguards()},
			ts.st, sender.NewJournal(ts.st), noCalls{t}, zap.New(core))
		if err != nil {
			t.Fatal(err)
		}
		saves := func() int { return logs.FilterMessage("state snapshot saved").Len() }
		run := func(t *testing.T, ps []model.Person) {
			t.Helper()
			rep, err := job.RunOnce(t.Context(), feedOf(writeExport(t, "export.csv", ps)), RunFlags{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Outcome() != model.OutcomeOK {
				t.Fatalf("outcome %s: %+v", rep.Outcome(), rep.Exports)
			}
		}
		valid := func(t *testing.T) {
			t.Helper()
			ok, err := ts.st.PeopleSnapshotValid(t.Context(), tenant)
			if err != nil || !ok {
				t.Fatalf("snapshot valid = %v, %v", ok, err)
			}
			s, err := loadState(t.Context(), ts.st, tenant)
			if err != nil || s.from != stateFromSnapshot {
				t.Fatalf("loaded from %q, %v", s.from, err)
			}
		}

		t.Run("a run with no snapshot saves one", func(t *testing.T) {
			run(t, ps)
			if saves() != 1 {
				t.Fatalf("%d snapshots saved", saves())
			}
			valid(t)
		})
		t.Run("a second run with no change writes nothing", func(t *testing.T) {
			before := readSnapshotRow(t, ts, tenant)
			version, err := ts.st.PeopleVersion(t.Context(), tenant)
			if err != nil {
				t.Fatal(err)
			}
			run(t, ps)
			if saves() != 1 {
				t.Fatalf("the run saved a snapshot (%d saves)", saves())
			}
			after := readSnapshotRow(t, ts, tenant)
			now, err := ts.st.PeopleVersion(t.Context(), tenant)
			if err != nil {
				t.Fatal(err)
			}
			if after != before || now != version {
				t.Fatalf("snapshot moved: %d parts at %d -> %d parts at %d; version %d -> %d",
					before.parts, before.version, after.parts, after.version, version, now)
			}
		})
		changed := slices.Clone(ps)
		changed[3].Department = "Sales"
		t.Run("a run that changes people refreshes it", func(t *testing.T) {
			run(t, changed)
			if saves() != 2 {
				t.Fatalf("%d snapshots saved, want a second one", saves())
			}
			valid(t)
			s, err := loadState(t.Context(), ts.st, tenant)
			if err != nil {
				t.Fatal(err)
			}
			e := s.lookupKey(sources.KeyHash(changed[3].ExternalID), changed[3].ExternalID)
			if e == nil || e.fingerprint != sources.Fingerprint(changed[3]) {
				t.Fatal("the refreshed snapshot does not have the change")
			}
		})
		t.Run("a run after a corruption rewrites it", func(t *testing.T) {
			corruptSnapshot(t, ts, tenant)
			version, err := ts.st.PeopleVersion(t.Context(), tenant)
			if err != nil {
				t.Fatal(err)
			}
			before := saves()
			run(t, changed) // no change: only the failed read of the snapshot tells it must be rewritten
			if now, err := ts.st.PeopleVersion(t.Context(), tenant); err != nil || now != version {
				t.Fatalf("version %d -> %d (%v): the run changed the people", version, now, err)
			}
			if saves() != before+1 {
				t.Fatalf("corrupted snapshot not rewritten (%d saves)", saves())
			}
			valid(t)
		})
	})
}
