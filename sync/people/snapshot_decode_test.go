package people

import (
	"bytes"
	"errors"
	"fmt"
	"iter"
	"path/filepath"
	"slices"
	"testing"

	"hrsync/store"
)

// chunks cuts b into pieces of n bytes.
func chunks(b []byte, n int) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		for len(b) > 0 {
			k := min(n, len(b))
			if !yield(b[:k]) {
				return
			}
			b = b[k:]
		}
	}
}

// decodeSnapshot decodes a whole snapshot given as parts (tests and tools).
func decodeSnapshot(parts iter.Seq[[]byte]) (*stateIndex, error) {
	d := newSnapshotDecoder()
	for p := range parts {
		if err := d.write(p, nil); err != nil {
			return nil, err
		}
	}
	return d.finish()
}

// damageSubject is the index of 60 people, scanned from a SQLite store,
// and its whole snapshot: what the damage tests spoil.
func damageSubject(t *testing.T) (*stateIndex, []byte) {
	t.Helper()
	st, err := store.Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "state.db"), store.Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	seedState(t, st, "t", statePeople(60))
	s, err := scanState(t.Context(), st, "t")
	if err != nil {
		t.Fatal(err)
	}
	return s, snapshotBytes(s, snapshotPartSize)
}

func TestSnapshotDecodeRefusesDamage(t *testing.T) {
	s, whole := damageSubject(t)
	bad := func(t *testing.T, what string, b []byte) {
		t.Helper()
		if _, err := decodeSnapshot(chunks(b, 13)); !errors.Is(err, errBadSnapshot) {
			t.Fatalf("%s: err = %v, want errBadSnapshot", what, err)
		}
	}
	t.Run("any flipped bit of any byte", func(t *testing.T) {
		for i := range whole {
			for _, bit := range []byte{1, 0x80} {
				b := bytes.Clone(whole)
				b[i] ^= bit
				bad(t, fmt.Sprintf("byte %d ^ %#x", i, bit), b)
			}
		}
	})
	t.Run("cut at any length", func(t *testing.T) {
		for n := range len(whole) {
			bad(t, fmt.Sprintf("first %d bytes", n), whole[:n])
		}
	})
	t.Run("a byte too many", func(t *testing.T) {
		bad(t, "trailing byte", append(bytes.Clone(whole), 0))
	})
	t.Run("an e-mail given to another person, checksum intact", func(t *testing.T) {
		wrong := *s
		wrong.emailOwner = slices.Clone(s.emailOwner)
		wrong.emailOwner[0] = wrong.emailOwner[1]
		bad(t, "e-mail owner", snapshotBytes(&wrong, snapshotPartSize))
	})
	t.Run("an e-mail given to a departed person, checksum intact", func(t *testing.T) {
		wrong := *s
		wrong.emailOwner = slices.Clone(s.emailOwner)
		departed := slices.IndexFunc(s.people, func(e stateEntry) bool { return e.has(flagDeparted) })
		wrong.emailOwner[0] = uint32(departed)
		wrong.people = slices.Clone(s.people)
		wrong.people[departed].email = s.emails[0] // the departed person's own e-mail, even
		bad(t, "departed owner", snapshotBytes(&wrong, snapshotPartSize))
	})
	t.Run("an active person's e-mail left out for another's, checksum intact", func(t *testing.T) {
		wrong := *s
		wrong.emails, wrong.emailOwner = slices.Clone(s.emails), slices.Clone(s.emailOwner)
		wrong.emails[1], wrong.emailOwner[1] = wrong.emails[0], wrong.emailOwner[0] // the first pair twice
		bad(t, "e-mail listed twice", snapshotBytes(&wrong, snapshotPartSize))
	})
	t.Run("two owners swapped, checksum intact", func(t *testing.T) {
		wrong := *s
		wrong.emailOwner = slices.Clone(s.emailOwner)
		wrong.emailOwner[0], wrong.emailOwner[1] = wrong.emailOwner[1], wrong.emailOwner[0]
		bad(t, "owners swapped", snapshotBytes(&wrong, snapshotPartSize))
	})
	t.Run("another format", func(t *testing.T) {
		other := &stateIndex{}
		b := snapshotBytes(other, snapshotPartSize)
		b[8] = snapshotFormat + 1
		bad(t, "format", b)
	})
}

func TestSnapshotDecodeRefusesDisorder(t *testing.T) {
	s, whole := damageSubject(t)
	// Entries or e-mails out of order, checksum intact: within one job's
	// span of records and across two spans (finish checks each span's
	// first record against the record before it), for parts that cut the
	// swapped records apart or hold both.
	for _, n := range []int{13, 100, snapEntryLen * 3, 1000, len(whole)} {
		t.Run(fmt.Sprintf("two entries swapped, checksum intact, parts of %d bytes", n), func(t *testing.T) {
			// Departed people's entries: no e-mail names them, so that
			// only the order tells.
			var departed []int
			for i, e := range s.people {
				if e.has(flagDeparted) {
					departed = append(departed, i)
				}
			}
			if len(departed) < 4 {
				t.Fatalf("%d departed people, want 4 or more", len(departed))
			}
			last := len(departed) - 1
			for _, pair := range [][2]int{{departed[0], departed[1]}, {departed[last-1], departed[last]}} {
				wrong := *s
				wrong.people = slices.Clone(s.people)
				i, j := pair[0], pair[1]
				wrong.people[i], wrong.people[j] = wrong.people[j], wrong.people[i]
				if _, err := decodeSnapshot(chunks(snapshotBytes(&wrong, snapshotPartSize), n)); !errors.Is(err, errBadSnapshot) {
					t.Fatalf("entries %d and %d swapped: err = %v, want errBadSnapshot", i, j, err)
				}
			}
		})
		t.Run(fmt.Sprintf("two e-mails swapped, checksum intact, parts of %d bytes", n), func(t *testing.T) {
			for _, i := range []int{0, 3, len(s.emails) - 2} {
				wrong := *s
				wrong.emails, wrong.emailOwner = slices.Clone(s.emails), slices.Clone(s.emailOwner)
				wrong.emails[i], wrong.emails[i+1] = wrong.emails[i+1], wrong.emails[i]
				wrong.emailOwner[i], wrong.emailOwner[i+1] = wrong.emailOwner[i+1], wrong.emailOwner[i]
				if _, err := decodeSnapshot(chunks(snapshotBytes(&wrong, snapshotPartSize), n)); !errors.Is(err, errBadSnapshot) {
					t.Fatalf("e-mails %d and %d swapped: err = %v, want errBadSnapshot", i, i+1, err)
				}
			}
		})
	}
}
