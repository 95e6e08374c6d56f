package people

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"hrsync/sources"
	"hrsync/store"
)

// newBuckets indexes the n sorted hashes that key returns, as
// buildBuckets does for an index's own slices.
func newBuckets(n int, key func(int) uint64) buckets {
	c := newBucketCounter(n)
	for i := range n {
		c.count(key(i))
	}
	return c.done()
}

func TestBuckets(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 1000, 4097} {
		t.Run(fmt.Sprintf("%d hashes", n), func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(n)))
			hs := make([]uint64, n)
			for i := range hs {
				hs[i] = r.Uint64()
			}
			if n > 2 {
				hs[1], hs[2] = 0, ^uint64(0) // the extremes
			}
			slices.Sort(hs)
			b := newBuckets(n, func(i int) uint64 { return hs[i] })
			// Each start is the count of the hashes of the buckets before.
			for k, start := range b.starts {
				want := 0
				for _, h := range hs {
					if k < len(b.starts)-1 && h>>b.shift < uint64(k) || k == len(b.starts)-1 {
						want++
					}
				}
				if int(start) != want {
					t.Fatalf("start of bucket %d = %d, want %d", k, start, want)
				}
			}
			for i, h := range hs {
				lo, hi := b.span(h)
				if i < lo || i >= hi {
					t.Fatalf("hash %d (%#x) at %d outside its span [%d, %d)", i, h, i, lo, hi)
				}
			}
			for range 1000 { // a missing hash's span holds no other bucket's hash
				h := r.Uint64()
				lo, hi := b.span(h)
				for _, x := range hs[lo:hi] {
					if x>>b.shift != h>>b.shift {
						t.Fatalf("span of %#x holds %#x of another bucket", h, x)
					}
				}
			}
		})
	}
}

func TestChunked(t *testing.T) {
	for _, n := range []int{0, 1, chunkLen - 1, chunkLen, chunkLen + 1, 3*chunkLen + 7} {
		t.Run(fmt.Sprintf("%d values", n), func(t *testing.T) {
			var c chunked[int]
			for i := range n {
				c.add(i)
			}
			got := c.flat()
			if len(got) != n || cap(got) != n {
				t.Fatalf("len %d cap %d, want %d", len(got), cap(got), n)
			}
			for i, v := range got {
				if v != i {
					t.Fatalf("value %d is %d", i, v)
				}
			}
			if c.n != 0 || c.full != nil || c.last != nil {
				t.Fatal("flat did not empty the list")
			}
		})
	}
}

func TestLoadState(t *testing.T) {
	st, err := store.Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "state.db"), store.Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	const n = 5000
	rows := make([]store.PersonRow, n)
	var gone []string
	for i := range rows {
		rows[i] = store.PersonRow{ExternalID: fmt.Sprintf("%07d", n-i), Email: fmt.Sprintf("p%d@example.com", i),
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
	s, err := loadState(t.Context(), st, "t")
	if err != nil {
		t.Fatal(err)
	}

	t.Run("every person is found with its fingerprint, e-mail and flags", func(t *testing.T) {
		if len(s.people) != n || s.active != n-len(gone) {
			t.Fatalf("%d people, %d active; want %d, %d", len(s.people), s.active, n, n-len(gone))
		}
		for i, r := range rows {
			e := s.lookup(sources.KeyHash(r.ExternalID))
			if e == nil {
				t.Fatalf("%s not found", r.ExternalID)
			}
			if e.fingerprint != uint64(r.Fingerprint) || e.email != sources.KeyHash(r.Email) ||
				e.has(flagCreated) != (i%2 == 0) || e.has(flagDeparted) != (i%10 == 0) || s.marks.seen(s.findHash(e.id)) {
				t.Fatalf("%s: entry %+v does not match row %d", r.ExternalID, *e, i)
			}
			if got := s.externalID(e); got != r.ExternalID {
				t.Fatalf("externalID = %q, want %q", got, r.ExternalID)
			}
			if s.emailTaken(sources.KeyHash(r.Email)) != (i%10 != 0) {
				t.Fatalf("e-mail of %s taken = %v; only active people's e-mails are", r.ExternalID, i%10 == 0)
			}
		}
		if s.lookup(sources.KeyHash("nobody")) != nil || s.emailTaken(sources.KeyHash("nobody@example.com")) {
			t.Fatal("an unknown key was found")
		}
	})

	t.Run("departed lists the unseen active people, sorted", func(t *testing.T) {
		s.marks = newPlanMarks(len(s.people))
		var want []string
		for i, r := range rows {
			switch {
			case i%10 == 0: // departed already
			case i%3 == 0:
				s.marks.set(s.findHash(sources.KeyHash(r.ExternalID)), markSeen)
			default:
				want = append(want, r.ExternalID)
			}
		}
		slices.Sort(want)
		if got := s.departed(); !slices.Equal(got, want) {
			t.Fatalf("departed: %d people, want %d (first %v)", len(got), len(want), got[:min(3, len(got))])
		}
	})

	t.Run("an empty tenant gives an empty index", func(t *testing.T) {
		e, err := loadState(t.Context(), st, "none")
		if err != nil {
			t.Fatal(err)
		}
		if e.lookup(1) != nil || e.emailTaken(1) || len(e.departed()) != 0 || e.active != 0 {
			t.Fatal("empty state found something")
		}
	})

	t.Run("a cancelled context stops the read", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := loadState(ctx, st, "t"); err == nil {
			t.Fatal("read a state with a cancelled context")
		}
	})
}

// lookup returns the person whose externalId hashes to id, or nil.
func (s *stateIndex) lookup(id uint64) *stateEntry {
	if i := s.findHash(id); i >= 0 {
		return &s.people[i]
	}
	return nil
}
