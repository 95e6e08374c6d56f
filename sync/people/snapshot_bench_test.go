package people

import (
	"cmp"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/lib/pq"

	"hrsync/store"
)

// benchStatePeople is how many people BenchmarkStateLoad seeds:
// HRSYNC_BENCH_STATE_PEOPLE, default 100,000.
func benchStatePeople(b *testing.B) int {
	b.Helper()
	v := os.Getenv("HRSYNC_BENCH_STATE_PEOPLE")
	if v == "" {
		return 100_000
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("HRSYNC_BENCH_STATE_PEOPLE = %q: want a positive number", v)
	}
	return n
}

// benchStore opens a fresh store of the named kind for a benchmark.
func benchStore(b *testing.B, kind string) *store.Store {
	b.Helper()
	if kind == "sqlite" {
		st, err := store.Open(b.Context(), "sqlite:"+filepath.Join(b.TempDir(), "state.db"), store.Options{Migrate: true})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = st.Close() })
		return st
	}
	u := os.Getenv("HRSYNC_TEST_POSTGRES_URL")
	if u == "" {
		b.Fatal("PostgreSQL benchmarks need a server: set HRSYNC_TEST_POSTGRES_URL")
	}
	var r [6]byte
	if _, err := rand.Read(r[:]); err != nil {
		b.Fatal(err)
	}
	schema := "hrsync_bench_" + hex.EncodeToString(r[:])
	st, err := store.Open(b.Context(), u, store.Options{Schema: schema, Migrate: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = st.Close()
		db, err := sql.Open("postgres", u)
		if err != nil {
			b.Errorf("drop schema: %v", err)
			return
		}
		defer func() { _ = db.Close() }()
		if _, err := db.ExecContext(context.Background(), "DROP SCHEMA "+pq.QuoteIdentifier(schema)+" CASCADE"); err != nil {
			b.Errorf("drop schema: %v", err)
		}
	})
	return st
}

// BenchmarkStateLoad measures the state of N people (seeded as created,
// one in ten departed) read by a scan (the plan without a snapshot) and
// from a valid snapshot, on each store, with the snapshot's size and the
// time to build and save it (a run's refresh). x_vs_scan is the scan's
// time over the snapshot's (how many times faster the snapshot is).
func BenchmarkStateLoad(b *testing.B) {
	n := benchStatePeople(b)
	for _, kind := range []string{"sqlite", "postgres"} {
		b.Run(kind, func(b *testing.B) {
			st := benchStore(b, kind)
			ps := statePeople(n)
			for lo := 0; lo < n; lo += 50_000 {
				seedState(b, st, "bench", ps[lo:min(lo+50_000, n)])
			}
			start := time.Now()
			s, err := scanState(b.Context(), st, "bench")
			if err != nil {
				b.Fatal(err)
			}
			scanned := time.Since(start)
			start = time.Now()
			saved, err := st.SavePeopleSnapshot(b.Context(), "bench", s.version, s.snapshotParts(snapshotPartSize))
			if err != nil || !saved {
				b.Fatalf("save: %v, %v", saved, err)
			}
			saveTook := time.Since(start)
			size := len(snapshotBytes(s, snapshotPartSize))
			// The scan's time: the best of three, before the loads (so that
			// its garbage does not weigh on them).
			var scan time.Duration
			for range 3 {
				start := time.Now()
				if _, err := scanState(b.Context(), st, "bench"); err != nil {
					b.Fatal(err)
				}
				if took := time.Since(start); scan == 0 || took < scan {
					scan = took
				}
			}
			runtime.GC()
			var loads time.Duration
			i := 0
			for b.Loop() {
				i++
				start := time.Now()
				got, err := loadState(b.Context(), st, "bench")
				if err != nil || got.from != stateFromSnapshot || len(got.people) != n {
					b.Fatalf("load: from %q, %v", got.from, err)
				}
				loads += time.Since(start)
			}
			scans := scan * time.Duration(i)
			b.ReportMetric(float64(size)/(1<<20), "snapshot_MiB")
			b.ReportMetric(loads.Seconds()/float64(i)*1000, "snapshot_ms")
			b.ReportMetric(scans.Seconds()/float64(i)*1000, "scan_ms")
			b.ReportMetric(scans.Seconds()/loads.Seconds(), "x_vs_scan")
			b.ReportMetric((scanned+saveTook).Seconds()*1000, "refresh_ms")
			b.ReportMetric(saveTook.Seconds()*1000, "save_ms")
			b.Logf("%d people: first scan %v, save %v", n, scanned, saveTook)
		})
	}
}

// BenchmarkSnapshotDecode decodes, in memory, the snapshot of an index of
// N people (HRSYNC_BENCH_STATE_PEOPLE) handed over in parts of
// snapshotPartSize: the decoder's own share of a load.
func BenchmarkSnapshotDecode(b *testing.B) {
	n := benchStatePeople(b)
	s := syntheticIndex(n)
	whole := snapshotBytes(s, snapshotPartSize)
	b.SetBytes(int64(len(whole)))
	for b.Loop() {
		got, err := decodeSnapshot(chunks(whole, snapshotPartSize))
		if err != nil || len(got.people) != n {
			b.Fatal(err)
		}
	}
}

// syntheticIndex is an index of n people with 8-byte externalIds, one in
// ten departed, built without a store.
func syntheticIndex(n int) *stateIndex {
	s := &stateIndex{people: make([]stateEntry, n), ids: make([]byte, 0, 8*n)}
	for i := range n {
		id := fmt.Appendf(nil, "E%07d", i)
		e := stateEntry{id: xxhash.Sum64(id), fingerprint: uint64(i) * 7919, email: xxhash.Sum64(append(id, '@')),
			idStart: uint32(len(s.ids)), idLen: uint16(len(id)), flags: flagCreated}
		if i%10 == 0 {
			e.flags |= flagDeparted
		} else {
			s.active++
		}
		s.ids = append(s.ids, id...)
		s.people[i] = e
	}
	slices.SortFunc(s.people, func(a, b stateEntry) int { return cmp.Compare(a.id, b.id) })
	s.emails, s.emailOwner = activeEmails(s.people)
	s.index()
	return s
}

// BenchmarkScanIndex builds the index of N people (HRSYNC_BENCH_STATE_PEOPLE)
// from the parts of a scan, one part a processor as scanState reads them:
// the work of a scanning plan between the store's last row and the
// export's first. Run it with -cpu 1,2 to see how it shares the work.
func BenchmarkScanIndex(b *testing.B) {
	n := benchStatePeople(b)
	ps := statePeople(n)
	fresh := func() []*scanPart {
		parts := make([]*scanPart, runtime.GOMAXPROCS(0))
		for i := range parts {
			parts[i] = new(scanPart)
		}
		for i, p := range ps {
			// As seedState saves them: one in ten departed, one in seven not created.
			k := store.PersonKey{ExternalID: []byte(p.ExternalID), Email: []byte(p.Email), Fingerprint: int64(i) * 7919,
				Departed: i%10 == 0, Created: i%7 != 3}
			if err := parts[i*len(parts)/n].add(k); err != nil {
				b.Fatal(err)
			}
		}
		return parts
	}
	for b.Loop() {
		b.StopTimer()
		parts := fresh()
		runtime.GC()
		b.StartTimer()
		s, err := indexParts(1, parts)
		if err != nil || len(s.people) != n {
			b.Fatalf("index: %v", err)
		}
	}
}
