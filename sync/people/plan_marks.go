package people

// planMarks are the marks one plan sets on the people of state, apart from
// the entries: the entries stay what the index was built with (32 bytes,
// two to a cache line, read by the workers), and the marks the ordered
// stage reads are four bits a person (about 500 KiB for a million), the
// bits of one person in one word, so that a row touches one word of them.
// The lines of the first rows are only written while the export is read
// (a write that misses the caches does not hold the processor up, where a
// read does), and read again for a duplicate.
type planMarks struct {
	bits []uint64 // marksPerWord persons a word, markID, markMail and markSeen each
	// lines holds, for a person marked markID or markMail, the line of the
	// first row with the externalId ([0]) and with the e-mail ([1]).
	lines [][2]uint32
}

// The marks of a person.
const (
	markID   uint64 = 1 << iota // a row held this person's externalId
	markMail                    // a row held this (active) person's e-mail
	markSeen                    // a row of the export is this person

	markBits     = 4 // bits of a person, a power of two
	marksPerWord = 64 / markBits
)

// newPlanMarks returns the marks of n people, none set.
func newPlanMarks(n int) planMarks {
	return planMarks{bits: make([]uint64, (n+marksPerWord-1)/marksPerWord), lines: make([][2]uint32, n)}
}

// has tells whether person i has mark; false for marks not set up.
func (m *planMarks) has(i int, mark uint64) bool {
	w := i / marksPerWord
	return w < len(m.bits) && m.bits[w]&(mark<<(i%marksPerWord*markBits)) != 0
}

func (m *planMarks) set(i int, mark uint64) {
	m.bits[i/marksPerWord] |= mark << (i % marksPerWord * markBits)
}

func (m *planMarks) clear(i int, mark uint64) {
	m.bits[i/marksPerWord] &^= mark << (i % marksPerWord * markBits)
}

// seen tells whether a row of the export is person i.
func (m *planMarks) seen(i int) bool { return m.has(i, markSeen) }

// firstID records line as the first row with the externalId of person i,
// or returns the first row's line.
func (m *planMarks) firstID(i int, line int) int {
	if m.has(i, markID) {
		return int(m.lines[i][0])
	}
	m.set(i, markID)
	m.lines[i][0] = uint32(line)
	return 0
}

// firstMail records line as the first row with the e-mail of person i, or
// returns the first row's line.
func (m *planMarks) firstMail(i int, line int) int {
	if m.has(i, markMail) {
		return int(m.lines[i][1])
	}
	m.set(i, markMail)
	m.lines[i][1] = uint32(line)
	return 0
}

// idLine returns the line of the first row with the externalId of person
// i, or 0.
func (m *planMarks) idLine(i int) int {
	if !m.has(i, markID) {
		return 0
	}
	return int(m.lines[i][0])
}
