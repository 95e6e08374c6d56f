package people

import (
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"math"

	"github.com/cespare/xxhash/v2"
)

// The snapshot of a stateIndex is what the store keeps (store.PeopleSnapshot)
// so that a plan need not scan every person: the index in a little-endian
// binary format, cut into parts of snapshotPartSize bytes.
//
//	header   magic "hrsyncSI", format (u32), 0 (u32), people (u64),
//	         emails (u64), id bytes (u64), active (u64), xxhash of the
//	         header's first 48 bytes (u64)
//	entries  people x 31 bytes, sorted by id: id (u64), fingerprint (u64),
//	         email (u64), idStart (u32), idLen (u16), flags (u8; flagSeen
//	         never set)
//	ids      the externalIds, back to back, as stateIndex.ids holds them
//	emails   emails x 12 bytes, sorted by hash: the e-mail hash (u64) of
//	         each active person, and that person's entry (u32)
//	checksum xxhash of every byte before it (u64)
//
// The header has a checksum of its own so that the counts can be trusted to
// size the slices before the rest is read. Decoding checks everything it
// can (magic, format, counts, order, flags, offsets, the checksum); any
// problem gives errBadSnapshot, and the caller scans instead: a snapshot
// never yields a wrong index.

// snapshotMagic opens every snapshot.
const snapshotMagic = "hrsyncSI"

// snapshotFormat is the format number this code writes and reads; a
// snapshot of another format is not used (and is rewritten by the next run).
const snapshotFormat = 2

// Sizes in the format, in bytes.
const (
	snapHeaderLen = 56
	snapEntryLen  = 31
	snapHashLen   = 8
	snapEmailLen  = 12
)

// snapshotPartSize is the size of a snapshot's parts: small enough that
// neither the store nor the decoder holds much more than the index itself,
// and that the drivers' buffer for a part comes from memory they and the
// Go heap recycle (modernc's SQLite maps and unmaps a buffer of 4 MiB for
// each value it reads; at 256 KiB the load of a million people took
// 240-258 ms instead of 340-384 on SQLite, 347-360 instead of 390-445 on
// PostgreSQL: docs/benchmarks.md). A snapshot saved with other part
// sizes reads the same.
const snapshotPartSize = 256 << 10

// maxSnapshotPeople bounds the people count a header may give (an entry's
// idStart is 32 bits anyway).
const maxSnapshotPeople = math.MaxUint32

// errBadSnapshot is returned for a snapshot that cannot be used.
var errBadSnapshot = errors.New("bad people snapshot")

func badSnapshot(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errBadSnapshot, fmt.Sprintf(format, args...))
}

// snapshotParts encodes s in parts of partSize bytes (the last one
// shorter). The part handed to yield is reused for the next one.
func (s *stateIndex) snapshotParts(partSize int) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		w := partWriter{buf: make([]byte, 0, partSize), yield: yield}
		w.digest.Reset()

		var hdr [snapHeaderLen]byte
		copy(hdr[:], snapshotMagic)
		le := binary.LittleEndian
		le.PutUint32(hdr[8:], snapshotFormat)
		le.PutUint64(hdr[16:], uint64(len(s.people)))
		le.PutUint64(hdr[24:], uint64(len(s.emails)))
		le.PutUint64(hdr[32:], uint64(len(s.ids)))
		le.PutUint64(hdr[40:], uint64(s.active))
		le.PutUint64(hdr[48:], xxhash.Sum64(hdr[:48]))
		w.write(hdr[:])

		var rec [snapEntryLen]byte
		for i := range s.people {
			e := &s.people[i]
			le.PutUint64(rec[0:], e.id)
			le.PutUint64(rec[8:], e.fingerprint)
			le.PutUint64(rec[16:], e.email)
			le.PutUint32(rec[24:], e.idStart)
			le.PutUint16(rec[28:], e.idLen)
			rec[30] = e.flags & (flagDeparted | flagCreated)
			if !w.write(rec[:]) {
				return
			}
		}
		if !w.write(s.ids) {
			return
		}
		var m [snapEmailLen]byte
		for i, email := range s.emails {
			le.PutUint64(m[:], email)
			le.PutUint32(m[8:], s.emailOwner[i])
			if !w.write(m[:]) {
				return
			}
		}
		var h [snapHashLen]byte
		le.PutUint64(h[:], w.sum())
		if w.write(h[:]) {
			w.flush()
		}
	}
}

// partWriter cuts what is written into full parts, hands each to yield and
// sums every byte written before sum is called.
type partWriter struct {
	buf    []byte
	digest xxhash.Digest
	yield  func([]byte) bool
	stop   bool
}

// write appends p, handing every full part on; false once yield said stop.
func (w *partWriter) write(p []byte) bool {
	for len(p) > 0 && !w.stop {
		n := min(len(p), cap(w.buf)-len(w.buf))
		w.buf = append(w.buf, p[:n]...)
		p = p[n:]
		if len(w.buf) == cap(w.buf) {
			w.flush()
		}
	}
	return !w.stop
}

// flush hands the bytes written since the last part on as a part.
func (w *partWriter) flush() {
	if len(w.buf) == 0 || w.stop {
		return
	}
	_, _ = w.digest.Write(w.buf)
	w.stop = !w.yield(w.buf)
	w.buf = w.buf[:0]
}

// sum is the checksum of everything written so far.
func (w *partWriter) sum() uint64 {
	d := w.digest // a copy: the buffered bytes are summed again at their flush
	_, _ = d.Write(w.buf)
	return d.Sum64()
}

// Sections of a snapshot, in order.
const (
	secHeader = iota
	secEntries
	secIDs
	secEmails
	secChecksum
	secDone
)

// snapshotDecoder decodes a snapshot part by part, straight into a
// stateIndex: it never holds more of the snapshot than the part it is
// given and the few bytes of a record cut between two parts.
type snapshotDecoder struct {
	s       *stateIndex
	sec     int
	n       int // records (or bytes, for ids) of the section already read
	carry   [snapHeaderLen]byte
	nc      int
	digest  xxhash.Digest
	people  uint64
	emails  uint64
	idBytes uint64
	active  int // active people read from the entries
	sum     uint64
	// The buckets, built as the entries and the e-mails are read (both
	// come sorted).
	byID, byMail bucketFiller
	// owned and listed sum ownerMix over the active entries, with their
	// own e-mails, and over the e-mails section's pairs: equal sums
	// confirm that each e-mail is its owner's, without looking each
	// owner up (see finish).
	owned, listed uint64
}

func newSnapshotDecoder() *snapshotDecoder {
	d := &snapshotDecoder{s: &stateIndex{}}
	d.digest.Reset()
	return d
}

// recLen is the size of a record of the current section.
func (d *snapshotDecoder) recLen() int {
	switch d.sec {
	case secHeader:
		return snapHeaderLen
	case secEntries:
		return snapEntryLen
	case secEmails:
		return snapEmailLen
	default:
		return snapHashLen
	}
}

// count is how many records (bytes for ids) the current section has.
func (d *snapshotDecoder) count() uint64 {
	switch d.sec {
	case secHeader, secChecksum:
		return 1
	case secEntries:
		return d.people
	case secIDs:
		return d.idBytes
	case secEmails:
		return d.emails
	default:
		return 0
	}
}

// next moves to the next section that is not empty.
func (d *snapshotDecoder) next() {
	for d.sec < secDone && uint64(d.n) >= d.count() {
		d.sec++
		d.n = 0
	}
}

// write decodes one more part of the snapshot.
func (d *snapshotDecoder) write(p []byte) error {
	for len(p) > 0 {
		if d.sec == secDone {
			return badSnapshot("bytes after the checksum")
		}
		if d.sec == secIDs {
			k := int(min(uint64(len(p)), d.idBytes-uint64(d.n)))
			d.s.ids = append(d.s.ids, p[:k]...)
			_, _ = d.digest.Write(p[:k])
			p, d.n = p[k:], d.n+k
			d.next()
			continue
		}
		size := d.recLen()
		if d.nc > 0 || len(p) < size {
			k := copy(d.carry[d.nc:size], p)
			d.nc += k
			p = p[k:]
			if d.nc < size {
				return nil
			}
			d.nc = 0
			if err := d.records(d.carry[:size]); err != nil {
				return err
			}
			continue
		}
		whole := min(uint64(len(p)/size), d.count()-uint64(d.n))
		k := int(whole) * size
		if err := d.records(p[:k]); err != nil {
			return err
		}
		p = p[k:]
	}
	return nil
}

// records decodes whole records of the current section.
func (d *snapshotDecoder) records(b []byte) error {
	if d.sec != secChecksum {
		_, _ = d.digest.Write(b)
	}
	le := binary.LittleEndian
	switch d.sec {
	case secHeader:
		if err := d.header(b); err != nil {
			return err
		}
		d.n = 1
	case secEntries:
		s := d.s
		first := len(s.people)
		k := len(b) / snapEntryLen
		s.people = s.people[:first+k] // within the capacity the header gave
		out := s.people[first:]
		var prev uint64
		if first > 0 {
			prev = s.people[first-1].id
		}
		active := 0
		for j := range out {
			r := b[j*snapEntryLen : (j+1)*snapEntryLen : (j+1)*snapEntryLen]
			e := stateEntry{
				id:          le.Uint64(r[0:8]),
				fingerprint: le.Uint64(r[8:16]),
				email:       le.Uint64(r[16:24]),
				idStart:     le.Uint32(r[24:28]),
				idLen:       le.Uint16(r[28:30]),
				flags:       r[30],
			}
			if e.flags&^(flagDeparted|flagCreated) != 0 {
				return badSnapshot("entry %d: unknown flags %#x", first+j, e.flags)
			}
			if uint64(e.idStart)+uint64(e.idLen) > d.idBytes {
				return badSnapshot("entry %d: externalId out of range", first+j)
			}
			if e.id < prev {
				return badSnapshot("entry %d: out of order", first+j)
			}
			prev = e.id
			if e.flags&flagDeparted == 0 {
				active++
				d.owned += ownerMix(e.email, uint32(first+j))
			}
			d.byID.add(e.id)
			out[j] = e
		}
		d.active += active
		d.n += k
	case secEmails:
		s := d.s
		first := len(s.emails)
		k := len(b) / snapEmailLen
		s.emails, s.emailOwner = s.emails[:first+k], s.emailOwner[:first+k]
		out, owners := s.emails[first:], s.emailOwner[first:]
		var prev uint64
		if first > 0 {
			prev = s.emails[first-1]
		}
		for j := range out {
			r := b[j*snapEmailLen : (j+1)*snapEmailLen : (j+1)*snapEmailLen]
			m, owner := le.Uint64(r[0:8]), le.Uint32(r[8:12])
			if m < prev {
				return badSnapshot("e-mail %d: out of order", first+j)
			}
			if int(owner) >= len(s.people) {
				return badSnapshot("e-mail %d: not the e-mail of an active person", first+j)
			}
			d.listed += ownerMix(m, owner)
			d.byMail.add(m)
			prev, out[j], owners[j] = m, m, owner
		}
		d.n += k
	case secChecksum:
		d.sum = le.Uint64(b)
		d.n = 1
	}
	d.next()
	return nil
}

// header reads the header and sizes the index.
func (d *snapshotDecoder) header(b []byte) error {
	le := binary.LittleEndian
	if string(b[:8]) != snapshotMagic {
		return badSnapshot("not a people snapshot")
	}
	if f := le.Uint32(b[8:]); f != snapshotFormat {
		return badSnapshot("format %d, this build reads %d", f, snapshotFormat)
	}
	if le.Uint64(b[48:]) != xxhash.Sum64(b[:48]) {
		return badSnapshot("header checksum mismatch")
	}
	d.people, d.emails, d.idBytes = le.Uint64(b[16:]), le.Uint64(b[24:]), le.Uint64(b[32:])
	active := le.Uint64(b[40:])
	if d.people > maxSnapshotPeople || d.idBytes > math.MaxUint32 || d.emails != active || active > d.people {
		return badSnapshot("inconsistent counts")
	}
	d.s.people = make([]stateEntry, 0, d.people)
	d.s.emails = make([]uint64, 0, d.emails)
	d.s.emailOwner = make([]uint32, 0, d.emails)
	d.s.ids = make([]byte, 0, d.idBytes)
	d.s.active = int(active)
	d.byID, d.byMail = newBucketFiller(int(d.people)), newBucketFiller(int(d.emails))
	return nil
}

// finish checks that the whole snapshot was read and is intact, and returns
// the index with its buckets.
func (d *snapshotDecoder) finish() (*stateIndex, error) {
	if d.sec != secDone || d.nc != 0 {
		return nil, badSnapshot("truncated")
	}
	if d.digest.Sum64() != d.sum {
		return nil, badSnapshot("checksum mismatch")
	}
	s := d.s
	if d.active != s.active {
		return nil, badSnapshot("%d active entries, header says %d", d.active, s.active)
	}
	// Each active entry's (e-mail, entry) pair is in the e-mails section
	// and the section holds nothing else (its count is the active
	// people's): each e-mail is its owner's, an active person's. The
	// sums of ownerMix over both sides stand for the two lists of pairs
	// (as the checksum stands for the bytes), so that no owner is looked
	// up, a cache miss each.
	if d.owned != d.listed {
		return nil, badSnapshot("the e-mails are not the active people's")
	}
	s.byID, s.byMail = d.byID.done(), d.byMail.done()
	s.markSharedEmails()
	d.s = nil
	return s, nil
}

// ownerMix mixes an e-mail hash with the entry it belongs to into a 64-bit
// value (the finalizer of SplitMix64, applied twice): summed over a list
// of pairs, it gives the same sum for the same pairs in any order, and a
// different one for other pairs but by a chance of about 2⁻⁶⁴.
func ownerMix(email uint64, owner uint32) uint64 {
	return mix64(email ^ mix64(uint64(owner)+0x9e3779b97f4a7c15))
}

// mix64 is the finalizer of SplitMix64: a bijection of 64-bit values in
// which each input bit changes about half the output bits.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// stateLoads records, for one RunOnce, whether a plan had to scan the
// state: then the stored snapshot is rewritten at the end of the run even
// if its version is current (it could not be read).
type stateLoads struct {
	scanned bool
	// bad is why a stored snapshot could not be used, if one could not.
	bad error
	// state is the state the last scanning plan read, taken from the plan.
	state *stateIndex
}

// note records where the state of plan came from.
func (l *stateLoads) note(plan *Plan) {
	if plan.StateFrom != stateFromScan {
		return
	}
	l.scanned = true
	l.state, plan.scanned = plan.scanned, nil
	if plan.snapshotErr != nil {
		l.bad = plan.snapshotErr
	}
}
