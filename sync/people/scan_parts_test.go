package people

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"hrsync/sources"
	"hrsync/store"
)

// splitScan is the store with its scan of every person handed over in
// parts: the rows of a one-part scan, sent to part(i, n) for the i-th row
// of n parts, in turn.
type splitScan struct {
	*store.Store
	part func(i, parts int) int
}

func (s splitScan) ScanPeopleKeysParts(ctx context.Context, tenant string, parts int,
	fn func(int, store.PersonKey) error) (int64, error) {
	i := 0
	return s.ScanPeopleKeys(ctx, tenant, func(k store.PersonKey) error {
		p := s.part(i, parts)
		i++
		return fn(p, k)
	})
}

// TestScanStateParts: the index built from a scan in parts is the one
// built from a scan in one part, byte for byte when the parts follow the
// one-part order (as the store's do), and holds every person, found by
// externalId with its fields, when the parts interleave.
func TestScanStateParts(t *testing.T) {
	st, err := store.Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "state.db"), store.Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	const n = 3001
	rows := make([]store.PersonRow, n)
	var gone []string
	for i := range rows {
		rows[i] = store.PersonRow{ExternalID: fmt.Sprintf("%0*d", 3+i%9, n-i), Email: fmt.Sprintf("p%d@example.com", i%2900),
			Fingerprint: int64(i) * -7919}
		if i%2 == 0 {
			rows[i].CreatedOnPlatformAt = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
		}
		if i%10 == 0 {
			gone = append(gone, rows[i].ExternalID)
		}
	}
	if err := st.SavePeople(t.Context(), "t", rows); err != nil {
		t.Fatal(err)
	}
	if err := st.MarkDeparted(t.Context(), "t", gone, time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	one, err := scanStateParts(t.Context(), splitScan{st, func(int, int) int { return 0 }}, "t", 4)
	if err != nil {
		t.Fatal(err)
	}
	inOrder, err := scanStateParts(t.Context(), splitScan{st, func(i, parts int) int { return min(i*parts/1000, parts-1) }}, "t", 4)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(one, inOrder) {
		t.Fatal("the index of a scan in ordered parts differs from the one-part scan's")
	}
	interleaved, err := scanStateParts(t.Context(), splitScan{st, func(i, parts int) int { return i % parts }}, "t", 4)
	if err != nil {
		t.Fatal(err)
	}
	if interleaved.active != one.active || interleaved.version != one.version || len(interleaved.people) != n ||
		!reflect.DeepEqual(interleaved.emails, one.emails) {
		t.Fatalf("interleaved parts: %d people, %d active, version %d; want %d, %d, %d",
			len(interleaved.people), interleaved.active, interleaved.version, n, one.active, one.version)
	}
	for _, r := range rows {
		a, b := one.lookupKey(sources.KeyHash(r.ExternalID), r.ExternalID), interleaved.lookupKey(sources.KeyHash(r.ExternalID), r.ExternalID)
		if a == nil || b == nil || interleaved.externalID(b) != r.ExternalID ||
			a.fingerprint != b.fingerprint || a.email != b.email || a.flags != b.flags {
			t.Fatalf("%s: one part %+v, interleaved parts %+v", r.ExternalID, a, b)
		}
	}
}
