package drivertest

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"hrsync/store"
)

// partsPeople is how many people the scan in parts reads, and
// partsMinRows the store's fewest people a part: enough for every dialect
// to split the table into the four parts asked (SQLite: 3,000 rowids, six
// spans of 500; PostgreSQL: tens of pages, parts of at least 10).
const (
	partsPeople  = 3_000
	partsMinRows = 500
)

// testScanPeopleKeysParts: a scan in parts hands every person of the
// tenant once, with what the one-part scan reads, on more than one part
// (the table is large enough), and reports the version of both.
func testScanPeopleKeysParts(t *testing.T, d Backend) {
	eachBackend(t, d, func(t *testing.T, b backend) {
		s := Open(t, b.dsn, store.Options{Schema: b.schema, Migrate: true, ScanPartRows: partsMinRows})
		rows := make([]store.PersonRow, partsPeople)
		var gone []string
		for i := range rows {
			rows[i] = person(fmt.Sprintf("p%06d", i), i)
			if i%3 == 0 {
				rows[i].CreatedOnPlatformAt = at(2, i%60)
			}
			if i%7 == 0 {
				gone = append(gone, rows[i].ExternalID)
			}
		}
		must(t, s.SavePeople(ctx(t), "parts", rows))
		must(t, s.MarkDeparted(ctx(t), "parts", gone, at(4, 0)))
		must(t, s.SavePeople(ctx(t), "parts-other", []store.PersonRow{person("p000001", 99)}))

		type key struct {
			email             string
			fingerprint       int64
			departed, created bool
		}
		one := map[string]key{}
		v1, err := s.ScanPeopleKeys(ctx(t), "parts", func(k store.PersonKey) error {
			one[string(k.ExternalID)] = key{string(k.Email), k.Fingerprint, k.Departed, k.Created}
			return nil
		})
		must(t, err)

		const asked = 4
		var (
			mu    sync.Mutex
			got   = map[string]key{}
			parts = map[int]int{}
			dup   error
		)
		v2, err := s.ScanPeopleKeysParts(ctx(t), "parts", asked, func(part int, k store.PersonKey) error {
			mu.Lock()
			defer mu.Unlock()
			id := string(k.ExternalID)
			if _, twice := got[id]; twice && dup == nil {
				dup = fmt.Errorf("%s scanned twice", id)
			}
			got[id] = key{string(k.Email), k.Fingerprint, k.Departed, k.Created}
			parts[part]++
			return nil
		})
		must(t, err)
		must(t, dup)
		if v1 == 0 || v2 != v1 {
			t.Fatalf("versions: one part %d, in parts %d", v1, v2)
		}
		if len(one) != partsPeople || len(got) != len(one) {
			t.Fatalf("scanned %d people in parts, %d in one, want %d", len(got), len(one), partsPeople)
		}
		for id, w := range one {
			if got[id] != w {
				t.Fatalf("person %s: in parts %+v, in one part %+v", id, got[id], w)
			}
		}
		if len(parts) < 2 || len(parts) > asked {
			t.Fatalf("%d parts used (%v), want 2 to %d", len(parts), parts, asked)
		}
		for p := range parts {
			if p < 0 || p >= asked {
				t.Fatalf("part %d out of [0, %d)", p, asked)
			}
		}
		testScanPartsStopped(t, s)
		testScanPartsUnderWrites(t, s)
	})
}

// testScanPartsUnderWrites scans in parts while another connection keeps
// changing the two people at the ends of the table and one more, all in
// each write: every scan sees both ends at the same write (its parts read
// one state, whether they were opened again or the scan fell back to one
// part), and every person once.
func testScanPartsUnderWrites(t *testing.T, s *store.Store) {
	ends := []store.PersonRow{person("p000000", 0), person(fmt.Sprintf("p%06d", partsPeople-1), partsPeople-1)}
	idA, idB := ends[0].ExternalID, ends[1].ExternalID
	const marked = 1_000_000 // the fingerprint of the k-th write is marked+k
	var (
		wg      sync.WaitGroup
		werr    error
		writes  atomic.Int64
		started = make(chan struct{})
		done    = make(chan struct{})
	)
	// started is closed once the first write landed, or the writer failed.
	writing := sync.OnceFunc(func() { close(started) })
	stop := sync.OnceFunc(func() { close(done); wg.Wait() })
	defer stop()
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer writing()
		for k := 1; ; k++ {
			for i := range ends {
				ends[i].Fingerprint = marked + int64(k)
			}
			// And one person more, each time another from the start of
			// the table: on PostgreSQL an update writes the row's new
			// version at the end of the table, so a scan whose parts
			// read different writes sees that person twice, or not at
			// all (the two ends, once updated, are both at the end).
			i := 1 + (k-1)%(partsPeople-2)
			mover := person(fmt.Sprintf("p%06d", i), i)
			mover.Fingerprint = marked + int64(k)
			if werr = s.SavePeople(ctx(t), "parts", []store.PersonRow{ends[0], mover, ends[1]}); werr != nil {
				return
			}
			writes.Store(int64(k))
			writing()
			select {
			case <-done:
				return
			default:
			}
		}
	}()
	select {
	case <-started:
	case <-time.After(time.Minute):
		t.Fatal("no write within a minute")
	}
	if writes.Load() == 0 {
		stop()
		t.Fatalf("the first write failed: %v", werr)
	}
	// Scan until enough writes landed meanwhile that some fell between the
	// parts' starts (a write takes milliseconds, the parts' starts well
	// under one).
	from := writes.Load()
	scan := 0
	for ; scan < 20 || writes.Load()-from < 150 && scan < 5000; scan++ {
		var (
			mu   sync.Mutex
			n    int
			seen = map[string]bool{}
			fps  = map[string]int64{}
		)
		_, err := s.ScanPeopleKeysParts(ctx(t), "parts", 4, func(_ int, k store.PersonKey) error {
			mu.Lock()
			defer mu.Unlock()
			n++
			seen[string(k.ExternalID)] = true
			if id := string(k.ExternalID); id == idA || id == idB {
				fps[id] = k.Fingerprint
			}
			return nil
		})
		if err != nil {
			t.Fatalf("scan %d under writes: %v", scan, err)
		}
		a, b := fps[idA], fps[idB]
		if n != partsPeople || len(seen) != partsPeople || a != b || a <= marked {
			t.Fatalf("scan %d under writes: %d people, %d different (want %d each); the two ends at fingerprints %d and %d, want one write's (%d+k)",
				scan, n, len(seen), partsPeople, a, b, int64(marked))
		}
	}
	stop()
	must(t, werr)
	t.Logf("%d scans in parts consistent while %d writes landed", scan, writes.Load()-from)
}

// testScanPartsStopped: the callback's error stops every part and comes
// back unchanged.
func testScanPartsStopped(t *testing.T, s *store.Store) {
	stop := errors.New("stop here")
	var (
		mu    sync.Mutex
		calls int
	)
	_, err := s.ScanPeopleKeysParts(ctx(t), "parts", 4, func(int, store.PersonKey) error {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls >= 10 {
			return stop
		}
		return nil
	})
	if err != stop { //nolint:errorlint // must be returned unchanged
		t.Fatalf("err = %v, want the callback's error", err)
	}
	if calls >= partsPeople/2 {
		t.Fatalf("callback called %d times: the parts did not stop", calls)
	}
}
