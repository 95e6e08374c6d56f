package people

import (
	"encoding/binary"
	"runtime"
)

// keyLines is the set of the keys (hashes) an export's read met that state
// does not know, with the first line of each: the new people's externalIds
// and e-mails. It is a map[uint64]int32 (sources.FirstIn's) in a table
// outside the Go heap (see slabOwner): for a first import it holds a million
// keys of each kind, which a Go map would hold inside the heap, where the
// collector lets the heap grow to twice what is live.
//
// The table is open-addressed with linear probing, 12 bytes a slot (the
// key, then the line plus one, 0 for an empty slot), at most 3/4 full; a
// full table doubles, and the old one is released at once.
type keyLines struct {
	mem   *slabOwner // the table: slots keys, then slots lines
	slots int        // a power of two
	n     int        // keys held
}

// keyLinesSlots is the size of a new table.
const keyLinesSlots = 1 << 10

// first returns the first line that had key h, or records line as its
// first and returns 0 (as sources.FirstIn).
func (t *keyLines) first(h uint64, line int) int {
	if t.mem == nil || 4*(t.n+1) > 3*t.slots {
		t.grow()
	}
	b := t.mem.b
	mask := t.slots - 1
	lines := b[8*t.slots:]
	for i := int(h) & mask; ; i = (i + 1) & mask {
		l := binary.LittleEndian.Uint32(lines[4*i:])
		if l == 0 {
			binary.LittleEndian.PutUint64(b[8*i:], h)
			binary.LittleEndian.PutUint32(lines[4*i:], uint32(line)+1)
			t.n++
			runtime.KeepAlive(t.mem)
			return 0
		}
		if binary.LittleEndian.Uint64(b[8*i:]) == h {
			runtime.KeepAlive(t.mem)
			return int(l - 1)
		}
	}
}

// grow makes the table (or doubles it) and moves the keys into it.
func (t *keyLines) grow() {
	old, oldSlots := t.mem, t.slots
	t.slots = max(keyLinesSlots, 2*t.slots)
	_, mem := newSlab(12 * t.slots) // zeroed: a fresh mapping, or heap memory
	t.mem, t.n = mem, 0
	if old == nil {
		return
	}
	lines := old.b[8*oldSlots:]
	for i := range oldSlots {
		if l := binary.LittleEndian.Uint32(lines[4*i:]); l != 0 {
			t.first(binary.LittleEndian.Uint64(old.b[8*i:]), int(l-1))
		}
	}
	old.free()
}
