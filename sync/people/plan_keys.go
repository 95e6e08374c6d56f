package people

import (
	"hrsync/model"
	"hrsync/sources"
)

// stateKeys finds the duplicate keys of an export with the help of the
// state index (it is the export read's sources.Keys). A key state knows
// has its slot in the plan's marks (planMarks) of the entry it belongs
// to: the first line of an externalId at its person's, of an active
// person's e-mail at that person's. The rest (new people, new e-mails)
// goes to maps. The ordered stage (First) reads only the marks: the
// entries are read by the workers (Locate).
//
// It also remembers the state entry of the last row it saw, and whether
// that entry is the row unchanged, so that the plan need not look the
// same row up again.
type stateKeys struct {
	state  *stateIndex
	ids    keyLines // the keys state does not know, with their first lines
	emails keyLines

	lastLine  int    // the line of the last row First saw
	lastEntry int    // the entry of its externalId, or -1
	lastSame  bool   // the entry is created, active, and has the row's fingerprint
	ahead     uint64 // what Ahead read, kept so that its loads are not dropped
}

// newStateKeys returns the Keys of a plan against s, and sets up the
// plan's marks in s.
func newStateKeys(s *stateIndex) *stateKeys {
	s.marks = newPlanMarks(len(s.people))
	return &stateKeys{state: s, lastEntry: -1}
}

// locSame is set in sources.Loc.Note when the externalId's entry is a
// created, active person whose fingerprint is the row's: the row is
// unchanged, unless its keys turn out repeated.
const locSame = 1

// Locate finds the entry of the row's externalId hash and the entry whose
// active person has the row's e-mail; a Loc field is one more than the
// entry, 0 when state does not know the key. It reads only the fields an
// entry is built with, from the workers. The externalId's entry is found by
// the hash alone (see findHash). A row with the e-mail its entry already
// has, the common case, needs no e-mail lookup; unless another active
// person of state has that e-mail too, when the e-mail's slot is its first
// owner's, as for any other row.
//
// A first pass only reads the entry where each externalId's lookup starts:
// the reads depend on no other, so that their cache misses overlap, and
// the lookups of the second pass find the entries in the caches.
func (k *stateKeys) Locate(people []model.Person, hashes []sources.Hashes, locs []sources.Loc) {
	s := k.state
	if n := len(s.people); n > 0 {
		for i := range people {
			if people[i].ExternalID != "" {
				lo, _ := s.byID.span(hashes[i].ID)
				// Kept in the Loc (overwritten below), so that the read
				// is made.
				locs[i].Note = uint32(s.people[min(lo, n-1)].flags)
			}
		}
	}
	for i := range people {
		if p := &people[i]; p.ExternalID != "" || p.Email != "" {
			locs[i] = k.locate(p, hashes[i])
		}
	}
}

// locate is Locate for one person with keys.
func (k *stateKeys) locate(p *model.Person, h sources.Hashes) sources.Loc {
	var loc sources.Loc
	s := k.state
	entry := -1
	if p.ExternalID != "" {
		entry = s.findHash(h.ID)
		loc.ID = int32(entry + 1)
	}
	if entry >= 0 {
		// Fields is 0 for a rejected row, which is never accepted.
		if e := &s.people[entry]; e.flags&(flagCreated|flagDeparted) == flagCreated && h.Fields == e.fingerprint {
			loc.Note |= locSame
		}
	}
	if p.Email == "" {
		return loc
	}
	if entry >= 0 {
		if e := &s.people[entry]; e.email == h.Email && e.flags&(flagDeparted|flagSharedEmail) == 0 {
			loc.Email = loc.ID
			return loc
		}
	}
	// State keeps only the hash of an e-mail: like the maps, two e-mails
	// with one hash are taken for one (a false rejection).
	if i := s.emailAt(h.Email); i >= 0 {
		loc.Email = int32(s.emailOwner[i]) + 1
	}
	return loc
}

// Ahead implements sources.KeysAhead: it loads the marks, and the lines,
// of the people the batch's rows were located at. Both are in the order of
// the entries (hashes), so First's loads would miss the caches one row
// after the other; here they overlap.
func (k *stateKeys) Ahead(locs []sources.Loc) {
	m := &k.state.marks
	var sum uint64
	for _, l := range locs {
		if l.ID > 0 {
			i := int(l.ID - 1)
			sum += m.bits[i/marksPerWord] + uint64(m.lines[i][0])
		}
		if l.Email > 0 {
			i := int(l.Email - 1)
			sum += m.bits[i/marksPerWord] + uint64(m.lines[i][1])
		}
	}
	k.ahead += sum
}

// First implements sources.Keys.
func (k *stateKeys) First(p *model.Person, h sources.Hashes, loc sources.Loc, line int) (idFirst, emailFirst int) {
	k.lastLine, k.lastEntry, k.lastSame = line, int(loc.ID)-1, loc.Note&locSame != 0
	marks := &k.state.marks
	if p.ExternalID != "" {
		if loc.ID > 0 {
			idFirst = marks.firstID(int(loc.ID-1), line)
		} else {
			idFirst = k.ids.first(h.ID, line)
		}
	}
	if p.Email != "" {
		if loc.Email > 0 {
			emailFirst = marks.firstMail(int(loc.Email-1), line)
		} else {
			emailFirst = k.emails.first(h.Email, line)
		}
	}
	return idFirst, emailFirst
}

// entry returns the state entry whose externalId hashes as the row's on
// line (h), reusing the lookup made for it, and whether the entry is a
// created, active person with the row's fingerprint (fields). The caller
// must confirm the externalId itself (see findHash), or rely on same.
func (k *stateKeys) entry(line int, h, fields uint64) (i int, same bool) {
	if line == k.lastLine {
		return k.lastEntry, k.lastSame
	}
	i = k.state.findHash(h)
	if i >= 0 {
		e := &k.state.people[i]
		same = e.flags&(flagCreated|flagDeparted) == flagCreated && fields == e.fingerprint
	}
	return i, same
}

// findHash returns the index in s.people of the first person whose
// externalId hashes to id, or -1. It does not compare the externalId: a
// caller confirms it, or compares the fingerprint, which hashes the
// externalId too (equal id hashes and equal fingerprints for different
// externalIds: odds of about 2⁻¹²⁸). Saving that comparison saves a read
// of the externalId bytes, a cache miss, for each of a million rows.
func (s *stateIndex) findHash(id uint64) int {
	lo, hi := s.byID.span(id)
	for i := lo; i < hi; i++ {
		if s.people[i].id == id {
			return i
		}
	}
	return -1
}

// emailAt returns the position in s.emails of the first active person's
// e-mail hash h, or -1.
func (s *stateIndex) emailAt(h uint64) int {
	lo, hi := s.byMail.span(h)
	for i := lo; i < hi; i++ {
		if s.emails[i] == h {
			return i
		}
	}
	return -1
}
