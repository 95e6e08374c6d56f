package people

import (
	"hrsync/model"
	"hrsync/sources"
)

// stateKeys finds the duplicate keys of an export with the help of the
// state index (it is the export read's sources.Keys): a key state knows
// is marked in a slice beside the index, 4 bytes a person, and only the
// keys state does not know (new people, new e-mails) go to maps. For a
// million known people that is 8 MB instead of about 70 MB of maps.
//
// It also remembers the state entry of the last externalId it looked up,
// so that the plan need not look the same row up again.
type stateKeys struct {
	state     *stateIndex
	idFirst   []uint32 // per state entry: the line of the first row with its externalId
	mailFirst []uint32 // per position in state.emails: the line of the first row with that e-mail
	ids       map[uint64]int32
	emails    map[uint64]int32

	lastLine  int // the line of the last row First saw
	lastEntry int // its state entry, or -1
}

func newStateKeys(s *stateIndex) *stateKeys {
	return &stateKeys{
		state:     s,
		idFirst:   make([]uint32, len(s.people)),
		mailFirst: make([]uint32, len(s.emails)),
		ids:       map[uint64]int32{},
		emails:    map[uint64]int32{},
		lastEntry: -1,
	}
}

// Locate finds the state entry of the row's externalId hash and the
// position of its e-mail among state's; a Loc field is one more than the
// index, 0 when state does not know the key. It only reads the index, from
// the workers. The entry is found by the hash alone (see findHash).
func (k *stateKeys) Locate(p *model.Person) sources.Loc {
	var loc sources.Loc
	if p.ExternalID != "" {
		loc.ID = int32(k.state.findHash(p.Hash.ID) + 1) //nolint:gosec // people fit in 31 bits
	}
	if p.Email != "" {
		// State keeps only the hash of an e-mail: like the maps, two
		// e-mails with one hash are taken for one (a false rejection).
		loc.Email = int32(k.state.emailAt(p.Hash.Email) + 1) //nolint:gosec // people fit in 31 bits
	}
	return loc
}

// First implements sources.Keys.
func (k *stateKeys) First(p *model.Person, loc sources.Loc, line int) (idFirst, emailFirst int) {
	k.lastLine, k.lastEntry = line, int(loc.ID)-1
	if p.ExternalID != "" {
		if loc.ID > 0 {
			idFirst = firstAt(&k.idFirst[loc.ID-1], line)
		} else {
			idFirst = sources.FirstIn(k.ids, p.Hash.ID, line)
		}
	}
	if p.Email != "" {
		if loc.Email > 0 {
			emailFirst = firstAt(&k.mailFirst[loc.Email-1], line)
		} else {
			emailFirst = sources.FirstIn(k.emails, p.Hash.Email, line)
		}
	}
	return idFirst, emailFirst
}

// firstAt records line in slot if it is the first, or returns the first.
func firstAt(slot *uint32, line int) int {
	if *slot != 0 {
		return int(*slot)
	}
	*slot = uint32(line) //nolint:gosec // lines of an export fit in 32 bits
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

// emailAt returns the position in s.emails of the e-mail hash h, or -1.
func (s *stateIndex) emailAt(h uint64) int {
	lo, hi := s.byMail.span(h)
	for i := lo; i < hi; i++ {
		if s.emails[i] == h {
			return i
		}
	}
	return -1
}
