package people

import (
	"cmp"
	"math/bits"
	"slices"
)

// smallBucket is the most values a bucket of sortedByHash sorts by
// insertion; a larger one (keys that are not spread) is sorted by
// slices.SortStableFunc.
const smallBucket = 32

// sortedByHash returns the n values that each yields, sorted by key and,
// among equal keys, in the order each yielded them (as
// slices.SortStableFunc would). It is made for keys that are hashes,
// spread evenly: one pass counts the values per bucket of their top bits,
// a second moves each into its bucket, and each bucket, of a few values,
// is sorted by insertion. For a million hashes that is several times
// faster than a comparison sort; each may hand over values from storage
// of its own (chunks), so no second copy of them is made.
func sortedByHash[T any](n int, each func(func(*T)), key func(*T) uint64) []T {
	width := max(bits.Len(uint(n))-2, 0) // about 2 to 4 values a bucket
	shift := uint(64 - width)
	bucket := func(v *T) uint64 {
		if width == 0 {
			return 0
		}
		return key(v) >> shift
	}
	starts := make([]int, 1<<width+1)
	each(func(v *T) { starts[bucket(v)+1]++ })
	for i := 1; i < len(starts); i++ {
		starts[i] += starts[i-1]
	}
	out := make([]T, n)
	next := slices.Clone(starts[:len(starts)-1])
	each(func(v *T) {
		b := bucket(v)
		out[next[b]] = *v
		next[b]++
	})
	for b := range len(starts) - 1 {
		part := out[starts[b]:starts[b+1]]
		if len(part) > smallBucket {
			slices.SortStableFunc(part, func(x, y T) int { return cmp.Compare(key(&x), key(&y)) })
			continue
		}
		for i := 1; i < len(part); i++ {
			for j := i; j > 0 && key(&part[j-1]) > key(&part[j]); j-- {
				part[j-1], part[j] = part[j], part[j-1]
			}
		}
	}
	return out
}

// each yields every value of c, in the order added.
func (c *chunked[T]) each(fn func(*T)) {
	for _, ch := range c.full {
		for i := range ch {
			fn(&ch[i])
		}
	}
	for i := range c.last {
		fn(&c.last[i])
	}
}
