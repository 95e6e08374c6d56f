package people

import (
	"cmp"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"
)

// TestSortedByHash: sortedByHash orders values as slices.SortStableFunc
// does on the sources' values one after the other, on spread hashes, on
// repeated keys and on keys that all fall in one bucket, at sizes around
// the bucket widths and past the ranges it sorts concurrently, from one
// source or several.
func TestSortedByHash(t *testing.T) {
	// Four processors, so that a large sort is cut into ranges on a
	// machine with fewer.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	type tagged struct {
		key uint64
		at  int // position in the input: equal keys keep their order
	}
	rng := rand.New(rand.NewPCG(22, 7))
	keys := map[string]func() uint64{
		"spread":                    rng.Uint64,
		"repeated":                  func() uint64 { return rng.Uint64N(4) << 62 },
		"one bucket, low bits only": func() uint64 { return rng.Uint64N(1 << 20) },
		"few values":                func() uint64 { return rng.Uint64N(3) * 0x9e3779b97f4a7c15 },
	}
	sizes := []int{0, 1, 2, 3, 4, 5, 7, 8, 33, 100, 1000, 20000, 4*minRange + 5}
	for name, key := range keys {
		for _, n := range sizes {
			if n > 20000 && name != "spread" {
				continue // the large size is for the ranges of spread keys; equal keys are tested below it
			}
			in := make([]tagged, n)
			for i := range in {
				in[i] = tagged{key: key(), at: i}
			}
			want := slices.Clone(in)
			slices.SortStableFunc(want, func(a, b tagged) int { return cmp.Compare(a.key, b.key) })
			// A hint off by half gives the same order; the large size is
			// sorted once, in ranges.
			cutsList, hints := []int{1, 2, 3}, []int{n, n / 2}
			if n > 20000 {
				cutsList, hints = []int{3}, []int{n}
			}
			for _, cuts := range cutsList {
				// The values in cuts sources of different lengths, in order.
				var sources []func(func(*tagged))
				for c := range cuts {
					lo, hi := n*c*c/(cuts*cuts), n*(c+1)*(c+1)/(cuts*cuts)
					var ch chunked[tagged]
					for _, v := range in[lo:hi] {
						ch.add(v)
					}
					sources = append(sources, ch.each)
				}
				for _, hint := range hints {
					got := sortedByHash(hint, sources, func(v *tagged) uint64 { return v.key })
					if !slices.Equal(got, want) {
						t.Fatalf("%s, %d values in %d sources, hint %d: not the stable sort by key", name, n, cuts, hint)
					}
				}
			}
		}
	}
}

// TestActiveEmails: the e-mails of the active people, sorted by hash with
// their owners in the order of people among equal hashes, as a stable
// sort gives them, for more people than one range holds.
func TestActiveEmails(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	rng := rand.New(rand.NewPCG(5, 9))
	people := make([]stateEntry, 3*minRange+17)
	for i := range people {
		people[i].email = rng.Uint64()
		if i%7 == 0 {
			people[i].email = uint64(i % 5) // shared hashes, across the ranges
		}
		if i%10 == 3 {
			people[i].flags = flagDeparted
		}
	}
	type owned struct {
		email uint64
		owner uint32
	}
	var want []owned
	for i, p := range people {
		if !p.has(flagDeparted) {
			want = append(want, owned{p.email, uint32(i)})
		}
	}
	slices.SortStableFunc(want, func(a, b owned) int { return cmp.Compare(a.email, b.email) })
	emails, owners := activeEmails(people)
	if len(emails) != len(want) || len(owners) != len(want) {
		t.Fatalf("%d e-mails and %d owners, want %d", len(emails), len(owners), len(want))
	}
	for i, w := range want {
		if emails[i] != w.email || owners[i] != w.owner {
			t.Fatalf("e-mail %d: %x of entry %d, want %x of entry %d", i, emails[i], owners[i], w.email, w.owner)
		}
	}
}

// TestSortedHashes checks sortedHashes against slices.Sorted, with
// repeats, at one processor and at three.
func TestSortedHashes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	hashes := make([]uint64, 100_000)
	for i := range hashes {
		hashes[i] = rng.Uint64()
		if i%1000 == 999 {
			hashes[i] = hashes[rng.IntN(i)]
		}
	}
	want := slices.Sorted(slices.Values(hashes))
	for _, procs := range []int{1, 3} {
		old := runtime.GOMAXPROCS(procs)
		got := sortedHashes(slices.Clone(hashes))
		runtime.GOMAXPROCS(old)
		if !slices.Equal(got, want) {
			t.Fatalf("GOMAXPROCS %d: sortedHashes differs from slices.Sorted", procs)
		}
	}
}

// BenchmarkSortedHashes sorts a first import's million externalId hashes
// with sortedHashes and with slices.Sort, alternately, each first in half
// the iterations, and reports the first's time as a ratio to the second's
// ("x-of-slices.Sort").
func BenchmarkSortedHashes(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	hashes := make([]uint64, 1_000_000)
	for i := range hashes {
		hashes[i] = rng.Uint64()
	}
	var ours, std time.Duration
	sortOurs := func() {
		start := time.Now()
		_ = sortedHashes(hashes)
		ours += time.Since(start)
	}
	sortStd := func() {
		c := slices.Clone(hashes)
		start := time.Now()
		slices.Sort(c)
		std += time.Since(start)
	}
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			sortOurs()
			sortStd()
		} else {
			sortStd()
			sortOurs()
		}
	}
	b.ReportMetric(float64(ours)/float64(std), "x-of-slices.Sort")
	b.ReportMetric(float64(ours.Microseconds())/1e3/float64(b.N), "ms/op-ours")
	b.ReportMetric(float64(std.Microseconds())/1e3/float64(b.N), "ms/op-slices.Sort")
}
