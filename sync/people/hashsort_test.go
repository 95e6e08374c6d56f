package people

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortedByHash: sortedByHash orders values as slices.SortStableFunc
// does, on spread hashes, on repeated keys and on keys that all fall in
// one bucket, at sizes around the bucket widths.
func TestSortedByHash(t *testing.T) {
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
	for name, key := range keys {
		for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 8, 33, 100, 1000, 20000} {
			in := make([]tagged, n)
			for i := range in {
				in[i] = tagged{key: key(), at: i}
			}
			want := slices.Clone(in)
			slices.SortStableFunc(want, func(a, b tagged) int { return cmp.Compare(a.key, b.key) })
			c := chunked[tagged]{}
			for _, v := range in {
				c.add(v)
			}
			got := sortedByHash(c.n, c.each, func(v *tagged) uint64 { return v.key })
			if !slices.Equal(got, want) {
				t.Fatalf("%s, %d values: not the stable sort by key", name, n)
			}
		}
	}
}
