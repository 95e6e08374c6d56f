package people

import "hrsync/sources"

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
	other     sources.Keys

	lastLine  int // the line of the last externalId looked up
	lastEntry int // its state entry, or -1
}

func newStateKeys(s *stateIndex) *stateKeys {
	return &stateKeys{
		state:     s,
		idFirst:   make([]uint32, len(s.people)),
		mailFirst: make([]uint32, len(s.emails)),
		other:     sources.NewKeys(),
		lastEntry: -1,
	}
}

// First implements sources.Keys.
func (k *stateKeys) First(f sources.Field, h uint64, key string, line int) int {
	var slot *uint32
	switch f {
	case sources.ExternalID:
		i := k.state.find(h, key)
		k.lastLine, k.lastEntry = line, i
		if i >= 0 {
			slot = &k.idFirst[i]
		}
	case sources.Email:
		// State keeps only the hash of an e-mail: like the maps, two
		// e-mails with one hash are taken for one (a false rejection).
		if i := k.state.emailAt(h); i >= 0 {
			slot = &k.mailFirst[i]
		}
	}
	if slot == nil {
		return k.other.First(f, h, key, line)
	}
	if *slot != 0 {
		return int(*slot)
	}
	*slot = uint32(line) //nolint:gosec // lines of an export fit in 32 bits
	return 0
}

// entry returns the state entry of the row on line with the externalId
// hashed to h, reusing the lookup First made for it.
func (k *stateKeys) entry(line int, h uint64, externalID string) int {
	if line == k.lastLine {
		return k.lastEntry
	}
	return k.state.find(h, externalID)
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
