package people

import (
	"hrsync/model"
	"hrsync/sources"
)

// stateKeys finds the duplicate keys of an export with the help of the
// state index (it is the export read's sources.Keys). A key state knows
// has its slot in the state entry it belongs to: the first line of an
// externalId in its person's idLine, of an active person's e-mail in that
// person's mailLine. The rest (new people, new e-mails) goes to maps.
// Marking a known row costs no memory beyond the index and touches the
// entry the plan reads anyway.
//
// It also remembers the state entry of the last row it saw, so that the
// plan need not look the same row up again.
type stateKeys struct {
	state  *stateIndex
	ids    keyLines // the keys state does not know, with their first lines
	emails keyLines

	lastLine  int // the line of the last row First saw
	lastEntry int // the entry of its externalId, or -1
}

func newStateKeys(s *stateIndex) *stateKeys {
	return &stateKeys{state: s, lastEntry: -1}
}

// Locate finds the entry of the row's externalId hash and the entry whose
// active person has the row's e-mail; a Loc field is one more than the
// entry, 0 when state does not know the key. It reads only the fields an
// entry is built with, from the workers. The externalId's entry is found by
// the hash alone (see findHash). A row with the e-mail its entry already
// has, the common case, needs no e-mail lookup; unless another active
// person of state has that e-mail too, when the e-mail's slot is its first
// owner's, as for any other row.
func (k *stateKeys) Locate(p *model.Person, h sources.Hashes) sources.Loc {
	var loc sources.Loc
	s := k.state
	entry := -1
	if p.ExternalID != "" {
		entry = s.findHash(h.ID)
		loc.ID = int32(entry + 1)
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

// First implements sources.Keys.
func (k *stateKeys) First(p *model.Person, h sources.Hashes, loc sources.Loc, line int) (idFirst, emailFirst int) {
	k.lastLine, k.lastEntry = line, int(loc.ID)-1
	if p.ExternalID != "" {
		if loc.ID > 0 {
			idFirst = firstAt(&k.state.people[loc.ID-1].idLine, line)
		} else {
			idFirst = k.ids.first(h.ID, line)
		}
	}
	if p.Email != "" {
		if loc.Email > 0 {
			emailFirst = firstAt(&k.state.people[loc.Email-1].mailLine, line)
		} else {
			emailFirst = k.emails.first(h.Email, line)
		}
	}
	return idFirst, emailFirst
}

// firstAt records line in slot if it is the first, or returns the first.
func firstAt(slot *uint32, line int) int {
	if *slot != 0 {
		return int(*slot)
	}
	*slot = uint32(line)
	return 0
}

// entry returns the state entry whose externalId hashes as the row's on
// line (h), reusing the lookup made for it. The caller must confirm the
// externalId itself (see findHash).
func (k *stateKeys) entry(line int, h uint64) int {
	if line == k.lastLine {
		return k.lastEntry
	}
	return k.state.findHash(h)
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
