package people

import (
	"cmp"
	"math/bits"
	"runtime"
	"slices"

	"golang.org/x/sync/errgroup"
)

// smallBucket is the most values a bucket of sortedByHash sorts by
// insertion; a larger one (keys that are not spread) is sorted by
// slices.SortStableFunc.
const smallBucket = 32

// minRange is the fewest values (or buckets) inRanges gives a goroutine:
// below it, starting one costs more than the work it takes over.
const minRange = 1 << 15

// sortedByHash returns the values the sources yield, sorted by key and,
// among equal keys, in the order of the sources and, within a source, in
// the order it yields them: as slices.SortStableFunc would sort the
// sources' values one after the other. It is made for keys that are
// hashes, spread evenly: one pass counts each source's values per bucket
// of their top bits, a second moves each into its bucket, and each
// bucket, of a few values, is sorted by insertion. For a million hashes
// that is several times faster than a comparison sort; a source may hand
// over values from storage of its own (chunks), so no second copy of them
// is made.
//
// The sources are counted and moved concurrently, and the buckets sorted
// in ranges, on up to GOMAXPROCS goroutines: a source is called twice, on
// a goroutine of its own, and must yield the same values both times.
// sizeHint (about how many values there are) sets the buckets' width, at
// 2 to 4 values a bucket; the result does not depend on it.
func sortedByHash[T any](sizeHint int, sources []func(func(*T)), key func(*T) uint64) []T {
	width := max(bits.Len(uint(max(sizeHint, 0)))-2, 0)
	shift := uint(64 - width)
	bucket := func(v *T) uint64 {
		if width == 0 {
			return 0
		}
		return key(v) >> shift
	}
	buckets := 1 << width
	// next[s][b] is first each source's count of values in bucket b, then
	// where its next value of that bucket goes.
	next := make([][]int, len(sources))
	inParallel(len(sources), func(s int) {
		counts := make([]int, buckets)
		sources[s](func(v *T) { counts[bucket(v)]++ })
		next[s] = counts
	})
	starts := make([]int, buckets+1)
	at := 0
	for b := range buckets {
		starts[b] = at
		for _, counts := range next {
			at, counts[b] = at+counts[b], at
		}
	}
	starts[buckets] = at
	out := make([]T, at)
	inParallel(len(sources), func(s int) {
		next := next[s]
		sources[s](func(v *T) {
			b := bucket(v)
			out[next[b]] = *v
			next[b]++
		})
	})
	// Values are spread over about a bucket each: ranges of buckets are
	// ranges of values of about the same size.
	inRanges(buckets, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			sortBucket(out[starts[b]:starts[b+1]], key)
		}
	})
	return out
}

// sortBucket sorts the values of one bucket stably by key: by insertion
// when they are few, as they are when the keys are spread.
func sortBucket[T any](part []T, key func(*T) uint64) {
	if len(part) > smallBucket {
		slices.SortStableFunc(part, func(x, y T) int { return cmp.Compare(key(&x), key(&y)) })
		return
	}
	for i := 1; i < len(part); i++ {
		for j := i; j > 0 && key(&part[j-1]) > key(&part[j]); j-- {
			part[j-1], part[j] = part[j], part[j-1]
		}
	}
}

// inParallel calls fn(i) for i from 0 to n-1, on up to GOMAXPROCS
// goroutines at a time, and returns when every call has.
func inParallel(n int, fn func(i int)) {
	if n == 1 {
		fn(0)
		return
	}
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i := range n {
		g.Go(func() error {
			fn(i)
			return nil
		})
	}
	_ = g.Wait() // no call returns an error
}

// ranges cuts [0, n) into up to GOMAXPROCS ranges [lo, hi) of at least
// minRange each (one range when n is smaller), in order.
func ranges(n int) [][2]int {
	parts := max(min(runtime.GOMAXPROCS(0), n/minRange), 1)
	rs := make([][2]int, parts)
	for i := range rs {
		rs[i] = [2]int{n * i / parts, n * (i + 1) / parts}
	}
	return rs
}

// rangeSources returns the sources of sortedByHash that each yield what
// each yields over one of the ranges of [0, n).
func rangeSources[T any](n int, each func(lo, hi int, yield func(*T))) []func(func(*T)) {
	rs := ranges(n)
	sources := make([]func(func(*T)), len(rs))
	for k, r := range rs {
		sources[k] = func(yield func(*T)) { each(r[0], r[1], yield) }
	}
	return sources
}

// inRanges calls fn on each of the ranges of [0, n), concurrently.
func inRanges(n int, fn func(lo, hi int)) {
	rs := ranges(n)
	inParallel(len(rs), func(i int) { fn(rs[i][0], rs[i][1]) })
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
