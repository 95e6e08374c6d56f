package people

import (
	"math/rand/v2"
	"testing"

	"hrsync/sources"
)

// TestKeyLinesAsMap checks keyLines against the map it replaced
// (sources.FirstIn): the same first lines for keys met once, twice or
// more, through several doublings, with keys that share their low bits
// (the slot they start probing from) and the key 0.
func TestKeyLinesAsMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var table keyLines
	want := map[uint64]int32{}
	var keys []uint64
	for line := 2; line < 20000; line++ {
		var h uint64
		switch x := r.IntN(10); {
		case x < 2 && len(keys) > 0:
			h = keys[r.IntN(len(keys))] // a repeat
		case x < 4:
			h = uint64(r.IntN(64)) << 40 // low bits 0: one probe chain
		case x < 5:
			h = 0
		default:
			h = r.Uint64()
		}
		keys = append(keys, h)
		if got, exp := table.first(h, line), sources.FirstIn(want, h, line); got != exp {
			t.Fatalf("line %d, key %x: first %d, the map says %d", line, h, got, exp)
		}
	}
	if table.n != len(want) || table.slots < 4*len(want)/3 {
		t.Fatalf("%d keys in %d slots; want %d keys, at most 3/4 full", table.n, table.slots, len(want))
	}
}
