package people

import "runtime"

// slabOwner owns one block of memory of a People list or of a keyLines
// table: while the owner is reachable, the block is in use; once it is not
// (or free is called), the memory is released.
//
// A block holds bytes only (no pointer), so it can live outside the Go
// heap (newSlabMemory): the collector's pacing then counts only the rest of
// the heap, and a list of a million people (a first import) costs its size
// in resident memory rather than up to twice its size (the heap grows to
// twice what was live at the last collection before the next one).
type slabOwner struct {
	b       []byte
	release func([]byte)
	cleanup runtime.Cleanup
}

// newSlab returns an empty slab of capacity size and its owner, which the
// list keeps as long as it keeps the slab.
func newSlab(size int) ([]byte, *slabOwner) {
	b, release := newSlabMemory(size)
	o := &slabOwner{b: b, release: release}
	if release != nil {
		o.cleanup = runtime.AddCleanup(o, release, b)
	}
	return b[:0], o
}

// free releases the block now: nothing may use it after.
func (o *slabOwner) free() {
	if o.release != nil {
		o.cleanup.Stop()
		o.release(o.b)
		o.release = nil
	}
	o.b = nil
}

// recordSlabs holds records of bytes back to back in slabs of slabSize (a
// record longer than that in a slab of its own), with the owner of each
// slab's memory: a slab may be outside the Go heap, and is released once
// its owner is unreachable. Whoever reads a slab keeps its holder alive
// until done (runtime.KeepAlive).
type recordSlabs struct {
	slabs  [][]byte
	owners []*slabOwner
}

// add appends rec and returns the slab it is in and its offset there.
func (s *recordSlabs) add(rec []byte) (slab, off int) {
	if len(s.slabs) == 0 || len(s.slabs[len(s.slabs)-1])+len(rec) > slabSize {
		b, owner := newSlab(max(slabSize, len(rec)))
		s.slabs, s.owners = append(s.slabs, b), append(s.owners, owner)
	}
	slab = len(s.slabs) - 1
	off = len(s.slabs[slab])
	s.slabs[slab] = append(s.slabs[slab], rec...) // within the slab's capacity: never moved
	runtime.KeepAlive(s)
	return slab, off
}
