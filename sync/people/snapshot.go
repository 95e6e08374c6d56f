package people

import (
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"math"
	"runtime"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
	"golang.org/x/sync/errgroup"
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
// stateIndex: it never holds more of the snapshot than the parts it is
// given and the few bytes of a record cut between two parts.
//
// write frames each part in order: it tracks the sections, sums the bytes
// and decodes the header, the checksum and any record cut between two
// parts itself. The part's whole records (and its run of externalIds) go
// to a job, and up to GOMAXPROCS jobs decode at once, each into its own
// place in the index (the header gave every count). What a record's
// neighbours decide (the order of the entries and of the e-mails) and the
// lookup tables wait for finish, once every job is done.
type snapshotDecoder struct {
	s       *stateIndex
	sec     int
	n       int // records (or bytes, for ids) of the section already framed
	carry   [snapHeaderLen]byte
	nc      int
	digest  xxhash.Digest
	people  uint64
	emails  uint64
	idBytes uint64
	sum     uint64
	// jobs decode the spans of whole records, at most GOMAXPROCS at once;
	// the first error a job returns is finish's.
	jobs errgroup.Group
	// entrySpans and emailSpans are the first record of each span (in
	// section order): finish checks the order across each span's start.
	entrySpans, emailSpans []int
	// active counts the active entries decoded. owned and listed sum
	// ownerMix over the active entries, with their own e-mails, and over
	// the e-mails section's pairs: equal sums confirm that each e-mail is
	// its owner's, without looking each owner up (see finish).
	active        atomic.Int64
	owned, listed atomic.Uint64
}

// span is a run of whole records of one section, or of externalId bytes,
// starting at record (or byte) at of the section.
type span struct {
	sec int
	at  int
	b   []byte
}

func newSnapshotDecoder() *snapshotDecoder {
	d := &snapshotDecoder{s: &stateIndex{}}
	d.digest.Reset()
	d.jobs.SetLimit(runtime.GOMAXPROCS(0))
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

// write frames one more part of the snapshot and hands its whole records
// to a job. p must stay as it is until release is called (when no job
// needs it any more; a nil release is not called: p must then stay until
// finish returns). On an error, write waits for the jobs before it
// returns, and the decoder is spent.
func (d *snapshotDecoder) write(p []byte, release func()) error {
	if release == nil {
		release = func() {}
	}
	spans, err := d.frame(p)
	if err != nil {
		_ = d.jobs.Wait()
		release()
		return err
	}
	if len(spans) == 0 {
		release()
		return nil
	}
	d.jobs.Go(func() error {
		defer release()
		for _, sp := range spans {
			if err := d.decode(sp); err != nil {
				return err
			}
		}
		return nil
	})
	return nil
}

// frame reads p in order: it sums it, decodes the records it completes
// or holds whole (header, checksum, a record cut between parts), and
// returns its spans of other whole records, for a job.
func (d *snapshotDecoder) frame(p []byte) ([]span, error) {
	var spans []span
	for len(p) > 0 {
		if d.sec == secDone {
			return nil, badSnapshot("bytes after the checksum")
		}
		if d.sec == secIDs {
			k := int(min(uint64(len(p)), d.idBytes-uint64(d.n)))
			_, _ = d.digest.Write(p[:k])
			spans = append(spans, span{sec: secIDs, at: d.n, b: p[:k]})
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
				return spans, nil
			}
			d.nc = 0
			if err := d.record(d.carry[:size]); err != nil {
				return nil, err
			}
			continue
		}
		if d.sec == secHeader || d.sec == secChecksum {
			if err := d.record(p[:size]); err != nil {
				return nil, err
			}
			p = p[size:]
			continue
		}
		k := int(min(uint64(len(p)/size), d.count()-uint64(d.n))) * size
		_, _ = d.digest.Write(p[:k])
		spans = append(spans, d.spanAt(p[:k]))
		p = p[k:]
		d.n += k / size
		d.next()
	}
	return spans, nil
}

// spanAt is the span of the current section's whole records b, from the
// next record on, noted for finish's order check.
func (d *snapshotDecoder) spanAt(b []byte) span {
	if d.sec == secEntries {
		d.entrySpans = append(d.entrySpans, d.n)
	} else {
		d.emailSpans = append(d.emailSpans, d.n)
	}
	return span{sec: d.sec, at: d.n, b: b}
}

// record decodes one whole record of the current section, on the framing
// goroutine: the header, the checksum, or a record that was cut between
// two parts.
func (d *snapshotDecoder) record(b []byte) error {
	switch d.sec {
	case secHeader:
		_, _ = d.digest.Write(b)
		if err := d.header(b); err != nil {
			return err
		}
		d.n = 1
	case secChecksum:
		d.sum = binary.LittleEndian.Uint64(b)
		d.n = 1
	default:
		_, _ = d.digest.Write(b)
		if err := d.decode(d.spanAt(b)); err != nil {
			return err
		}
		d.n++
	}
	d.next()
	return nil
}

// decode decodes a span into the index; spans of one section never
// overlap, so jobs decode theirs concurrently.
func (d *snapshotDecoder) decode(sp span) error {
	switch sp.sec {
	case secEntries:
		return d.entries(sp.at, sp.b)
	case secIDs:
		copy(d.s.ids[sp.at:], sp.b)
	case secEmails:
		return d.emailPairs(sp.at, sp.b)
	}
	return nil
}

// entries decodes whole entries into the index from entry first on.
func (d *snapshotDecoder) entries(first int, b []byte) error {
	le := binary.LittleEndian
	out := d.s.people[first : first+len(b)/snapEntryLen]
	var prev uint64
	active, owned := 0, uint64(0)
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
		if j > 0 && e.id < prev {
			return badSnapshot("entry %d: out of order", first+j)
		}
		prev = e.id
		if e.flags&flagDeparted == 0 {
			active++
			owned += ownerMix(e.email, uint32(first+j))
		}
		out[j] = e
	}
	d.active.Add(int64(active))
	d.owned.Add(owned)
	return nil
}

// emailPairs decodes whole pairs of the e-mails section into the index
// from pair first on.
func (d *snapshotDecoder) emailPairs(first int, b []byte) error {
	le := binary.LittleEndian
	s := d.s
	k := len(b) / snapEmailLen
	out, owners := s.emails[first:first+k], s.emailOwner[first:first+k]
	var prev, listed uint64
	for j := range out {
		r := b[j*snapEmailLen : (j+1)*snapEmailLen : (j+1)*snapEmailLen]
		m, owner := le.Uint64(r[0:8]), le.Uint32(r[8:12])
		if j > 0 && m < prev {
			return badSnapshot("e-mail %d: out of order", first+j)
		}
		if uint64(owner) >= d.people {
			return badSnapshot("e-mail %d: not the e-mail of an active person", first+j)
		}
		listed += ownerMix(m, owner)
		prev, out[j], owners[j] = m, m, owner
	}
	d.listed.Add(listed)
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
	d.s.people = make([]stateEntry, d.people)
	d.s.emails = make([]uint64, d.emails)
	d.s.emailOwner = make([]uint32, d.emails)
	d.s.ids = make([]byte, d.idBytes)
	d.s.active = int(active)
	return nil
}

// abandon waits for the jobs of a decoding given up.
func (d *snapshotDecoder) abandon() {
	_ = d.jobs.Wait()
	d.s = nil
}

// finish waits for the jobs, checks that the whole snapshot was read and
// is intact, and returns the index with its lookup tables.
func (d *snapshotDecoder) finish() (*stateIndex, error) {
	if err := d.jobs.Wait(); err != nil {
		return nil, err
	}
	if d.sec != secDone || d.nc != 0 {
		return nil, badSnapshot("truncated")
	}
	if d.digest.Sum64() != d.sum {
		return nil, badSnapshot("checksum mismatch")
	}
	s := d.s
	for _, at := range d.entrySpans {
		if at > 0 && s.people[at].id < s.people[at-1].id {
			return nil, badSnapshot("entry %d: out of order", at)
		}
	}
	for _, at := range d.emailSpans {
		if at > 0 && s.emails[at] < s.emails[at-1] {
			return nil, badSnapshot("e-mail %d: out of order", at)
		}
	}
	if n := int(d.active.Load()); n != s.active {
		return nil, badSnapshot("%d active entries, header says %d", n, s.active)
	}
	// Each active entry's (e-mail, entry) pair is in the e-mails section
	// and the section holds nothing else (its count is the active
	// people's): each e-mail is its owner's, an active person's. The
	// sums of ownerMix over both sides stand for the two lists of pairs
	// (as the checksum stands for the bytes), so that no owner is looked
	// up, a cache miss each.
	if d.owned.Load() != d.listed.Load() {
		return nil, badSnapshot("the e-mails are not the active people's")
	}
	s.index()
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
