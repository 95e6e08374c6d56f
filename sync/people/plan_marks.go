package people

// planMarks are the marks one plan sets on the people of state, apart from
// the entries: the entries stay what the index was built with (32 bytes,
// two to a cache line, read by the workers), and the marks the ordered
// stage reads are bits, about 125 KiB a set for a million people, which
// stay in the processor's caches. The lines of the first rows are only
// written while the export is read (a write that misses the caches does
// not hold the processor up, where a read does), and read again for a
// duplicate.
type planMarks struct {
	seen  bitset // a row of the export is this person
	ids   bitset // a row held this person's externalId
	mails bitset // a row held this (active) person's e-mail
	// lines holds, for a person marked in ids or mails, the line of the
	// first row with the externalId ([0]) and with the e-mail ([1]).
	lines [][2]uint32
}

// newPlanMarks returns the marks of n people, none set.
func newPlanMarks(n int) planMarks {
	return planMarks{seen: newBitset(n), ids: newBitset(n), mails: newBitset(n), lines: make([][2]uint32, n)}
}

// firstID records line as the first row with the externalId of entry i,
// or returns the first row's line.
func (m *planMarks) firstID(i int, line int) int {
	if m.ids.has(i) {
		return int(m.lines[i][0])
	}
	m.ids.set(i)
	m.lines[i][0] = uint32(line)
	return 0
}

// firstMail records line as the first row with the e-mail of entry i, or
// returns the first row's line.
func (m *planMarks) firstMail(i int, line int) int {
	if m.mails.has(i) {
		return int(m.lines[i][1])
	}
	m.mails.set(i)
	m.lines[i][1] = uint32(line)
	return 0
}

// idLine returns the line of the first row with the externalId of entry
// i, or 0.
func (m *planMarks) idLine(i int) int {
	if !m.ids.has(i) {
		return 0
	}
	return int(m.lines[i][0])
}

// bitset is a set of small non-negative integers; the zero value is
// empty, and only has works on it.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b bitset) has(i int) bool { return i/64 < len(b) && b[i/64]&(1<<(i%64)) != 0 }

func (b bitset) set(i int) { b[i/64] |= 1 << (i % 64) }

func (b bitset) clear(i int) { b[i/64] &^= 1 << (i % 64) }
