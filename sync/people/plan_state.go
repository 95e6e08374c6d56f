package people

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"

	"github.com/cespare/xxhash/v2"
	"golang.org/x/sync/errgroup"

	"hrsync/store"
)

// stateIndex is hrsync's state of one tenant in the compact form the diff
// needs: per person three 64-bit hashes and a few flags in one sorted
// slice (32 bytes a person), the plan's marks apart (planMarks, about 8.5
// bytes a person), the externalIds back to back in one byte slice (to
// name the departed), and the e-mail hashes of active people with the
// person each belongs to. A million people take about 70 MiB, with no Go
// map: maps of that size cost about twice as much, and the garbage
// collector lets the heap grow to twice what is live.
type stateIndex struct {
	people     []stateEntry // sorted by id
	byID       buckets
	emails     []uint64 // e-mail hashes of active people, sorted
	emailOwner []uint32 // the entry in people of each of emails
	byMail     buckets
	ids        []byte // every externalId, in scan order, back to back
	active     int    // active people
	// marks are the marks of the plan that reads the export against the
	// index (newStateKeys sets them up).
	marks planMarks

	// from tells where the index came from: stateFromSnapshot or
	// stateFromScan.
	from string
	// version is the version of the tenant's people the index is exactly
	// (store.PeopleVersion).
	version int64
	// snapshotErr says why a stored snapshot at the current version could
	// not be used (nil when none was, or when it was used).
	snapshotErr error
}

// Where a stateIndex came from.
const (
	stateFromSnapshot = "snapshot" // the store's snapshot, valid for the current version
	stateFromScan     = "scan"     // a scan of every person
)

// stateEntry is one person of state, fixed once the index is built
// (readers of the export look it up from several goroutines); a plan's
// marks are in stateIndex.marks.
type stateEntry struct {
	id          uint64 // hash of the externalId
	fingerprint uint64
	email       uint64 // hash of the e-mail
	idStart     uint32 // where the externalId starts in stateIndex.ids
	idLen       uint16 // its length in bytes
	flags       uint8
}

// Flags of a stateEntry.
const (
	flagDeparted    uint8 = 1 << iota // departed_at is set
	flagCreated                       // the platform confirmed the creation
	flagSharedEmail                   // another active person has the same e-mail hash (not stored)
)

func (e *stateEntry) has(f uint8) bool { return e.flags&f != 0 }

// errStateTooLarge stops a scan whose externalIds would not fit in the
// 32-bit offsets of stateIndex (over 4 GiB of ids).
var errStateTooLarge = errors.New("state too large: over 4 GiB of externalIds")

// chunkLen is how many values a chunk of a chunked list holds.
const chunkLen = 1 << 14

// chunked is an append-only list kept in fixed-size chunks: unlike a
// slice it never copies what it holds while it grows, and flat copies it
// once into a slice of the exact length. For lists of millions of values,
// growing a slice by append copies each value about four times.
type chunked[T any] struct {
	full [][]T
	last []T
	n    int
}

func (c *chunked[T]) add(v T) {
	if len(c.last) == cap(c.last) {
		if c.last != nil {
			c.full = append(c.full, c.last)
		}
		c.last = make([]T, 0, chunkLen)
	}
	c.last = append(c.last, v)
	c.n++
}

// flat returns the values in one slice and empties c.
func (c *chunked[T]) flat() []T {
	out := make([]T, 0, c.n)
	for _, ch := range c.full {
		out = append(out, ch...)
	}
	out = append(out, c.last...)
	*c = chunked[T]{}
	return out
}

// loadState returns the tenant's state as an index: from the store's
// snapshot when one was built at the current version and decodes intact,
// else from a scan of every person. It writes nothing.
func loadState(ctx context.Context, st Store, tenant string) (*stateIndex, error) {
	s, snapErr := loadSnapshot(ctx, st, tenant)
	if s == nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("read state: %w", ctx.Err())
		}
		var err error
		if s, err = scanState(ctx, st, tenant); err != nil {
			return nil, err
		}
		s.snapshotErr = snapErr
	}
	return s, nil
}

// loadSnapshot decodes the tenant's stored snapshot as it is read. It
// returns nil when there is none at the current version, and nil with the
// reason when one is there but cannot be used (the caller scans).
//
// The parts are framed in a goroutine of their own, and decoded by up to
// GOMAXPROCS jobs (snapshotDecoder), while the store reads the next ones,
// each copied into one of a few buffers that go round. Every collectEvery
// bytes of parts the garbage is collected: the drivers hand each part over
// in a buffer of its own (lib/pq and modernc's SQLite allocate one a
// value), and a load that let them pile up until the collector's own pace
// would take fresh memory for every one of them, where a collection lets
// the next buffers reuse the memory of the parts already decoded. Fresh
// pages cost: on the 2-vCPU VM of docs/benchmarks.md, first touches were
// a quarter of a load's samples.
func loadSnapshot(ctx context.Context, st Store, tenant string) (*stateIndex, error) {
	d := newSnapshotDecoder()
	// A buffer for each job that may be decoding, one for the part being
	// framed and one for the store to fill.
	buffers := runtime.GOMAXPROCS(0) + 2
	parts := make(chan []byte, buffers)
	free := make(chan []byte, buffers)
	decoded := make(chan error, 1)
	go func() {
		var err error
		for p := range parts {
			if err != nil {
				free <- p
				continue
			}
			err = d.write(p, func() { free <- p })
		}
		decoded <- err
	}()
	inFlight, uncollected := 0, 0
	version, ok, err := st.PeopleSnapshot(ctx, tenant, func(part []byte) error {
		var buf []byte
		if inFlight < buffers {
			inFlight++
		} else {
			buf = <-free
		}
		parts <- append(buf[:0], part...)
		if uncollected += len(part); uncollected >= collectEvery {
			uncollected = 0
			runtime.GC()
		}
		return nil
	})
	close(parts)
	decodeErr := <-decoded
	if err != nil || !ok || decodeErr != nil {
		d.abandon()
	}
	if err != nil {
		return nil, fmt.Errorf("read snapshot: %w", err)
	}
	if !ok {
		return nil, nil
	}
	if decodeErr != nil {
		return nil, decodeErr
	}
	s, err := d.finish()
	if err != nil {
		return nil, err
	}
	s.from, s.version = stateFromSnapshot, version
	return s, nil
}

// collectEvery is how many bytes of snapshot parts loadSnapshot reads
// between two collections: a million people's snapshot (52 MB) is
// collected three times, a state under about 300,000 people never. In 4
// alternating rounds, the plan of a million people (in-process) took
// 0.88-0.91 s with them against 0.95-1.16 s without on PostgreSQL, and
// 0.76-0.77 s against 0.78-0.93 s on SQLite (docs/benchmarks.md).
const collectEvery = 16 << 20

// scanState reads the tenant's people with the store's lean scan and
// indexes them. The store reads the people in parts, one a core, and each
// part is indexed as it is read, on the goroutine that reads it.
func scanState(ctx context.Context, st Store, tenant string) (*stateIndex, error) {
	return scanStateParts(ctx, st, tenant, runtime.GOMAXPROCS(0))
}

// scanStateParts is scanState in at most n parts.
func scanStateParts(ctx context.Context, st Store, tenant string, n int) (*stateIndex, error) {
	parts := make([]*scanPart, n)
	for i := range parts {
		parts[i] = new(scanPart)
	}
	version, err := st.ScanPeopleKeysParts(ctx, tenant, len(parts), func(part int, k store.PersonKey) error {
		return parts[part].add(k)
	})
	if err != nil {
		return nil, fmt.Errorf("read state: %w", err)
	}
	s, err := indexParts(version, parts)
	if err != nil {
		return nil, fmt.Errorf("read state: %w", err)
	}
	return s, nil
}

// indexParts builds the index of the state at version from the parts of
// its scan, in order: their externalIds one after the other, their people
// sorted by hash, the active people's e-mails, the lookup tables. The
// parts are spent. Each step shares its work among the processors.
func indexParts(version int64, parts []*scanPart) (*stateIndex, error) {
	idBytes := 0
	for _, p := range parts {
		idBytes += len(p.ids)
	}
	if idBytes > math.MaxUint32 {
		return nil, errStateTooLarge
	}
	s := &stateIndex{from: stateFromScan, version: version, ids: make([]byte, 0, idBytes)}
	total := 0
	offsets := make([]uint32, len(parts))
	for i, p := range parts {
		// The part's externalIds follow the earlier parts' in s.ids.
		offsets[i] = uint32(len(s.ids))
		s.ids = append(s.ids, p.ids...)
		s.active += p.active
		total += p.people.n
		p.ids = nil
	}
	sources := make([]func(func(*stateEntry)), len(parts))
	inParallel(len(parts), func(i int) {
		parts[i].people.each(func(e *stateEntry) { e.idStart += offsets[i] })
		sources[i] = parts[i].people.each
	})
	s.people = sortedByHash(total, sources, func(e *stateEntry) uint64 { return e.id })
	s.emails, s.emailOwner = activeEmails(s.people)
	s.index()
	return s, nil
}

// scanPart is what one part of a scan of the state has read: its people,
// their externalIds back to back (idStart counts from the part's first),
// and how many are active.
type scanPart struct {
	people chunked[stateEntry]
	ids    []byte
	active int
	_      [64]byte // parts are written by different goroutines: keep them off each other's cache lines
}

// add indexes one person of the part.
func (p *scanPart) add(k store.PersonKey) error {
	if len(p.ids)+len(k.ExternalID) > math.MaxUint32 || len(k.ExternalID) > math.MaxUint16 {
		return errStateTooLarge
	}
	e := stateEntry{
		id:          xxhash.Sum64(k.ExternalID),
		fingerprint: uint64(k.Fingerprint),
		email:       xxhash.Sum64(k.Email),
		idStart:     uint32(len(p.ids)),
		idLen:       uint16(len(k.ExternalID)),
	}
	if k.Departed {
		e.flags |= flagDeparted
	} else {
		p.active++
	}
	if k.Created {
		e.flags |= flagCreated
	}
	p.people.add(e)
	p.ids = append(p.ids, k.ExternalID...)
	return nil
}

// activeEmails lists the e-mail hashes of the active people, sorted, with
// the entry each belongs to. Among equal e-mail hashes, the owners stay in
// the order of people. The work is shared by up to GOMAXPROCS goroutines,
// each over a range of people.
func activeEmails(people []stateEntry) (emails []uint64, owners []uint32) {
	type owned struct {
		email uint64
		owner uint32
	}
	sources := rangeSources(len(people), func(lo, hi int, yield func(*owned)) {
		var o owned
		for i := lo; i < hi; i++ {
			if !people[i].has(flagDeparted) {
				o = owned{people[i].email, uint32(i)}
				yield(&o)
			}
		}
	})
	all := sortedByHash(len(people), sources, func(o *owned) uint64 { return o.email })
	emails, owners = make([]uint64, len(all)), make([]uint32, len(all))
	inRanges(len(all), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			emails[i], owners[i] = all[i].email, all[i].owner
		}
	})
	return emails, owners
}

// index builds the lookup tables of a filled index and marks the people
// whose e-mail hash another active person has too.
func (s *stateIndex) index() {
	s.buildBuckets()
	s.markSharedEmails()
}

// buildBuckets builds the buckets of the entries and of the e-mails.
func (s *stateIndex) buildBuckets() {
	var g errgroup.Group
	g.Go(func() error {
		c := newBucketCounter(len(s.people))
		for i := range s.people {
			c.count(s.people[i].id)
		}
		s.byID = c.done()
		return nil
	})
	c := newBucketCounter(len(s.emails))
	for _, m := range s.emails {
		c.count(m)
	}
	s.byMail = c.done()
	_ = g.Wait() // the goroutine returns no error
}

// markSharedEmails flags the active people who share their e-mail with
// another.
func (s *stateIndex) markSharedEmails() {
	for i := 1; i < len(s.emails); i++ {
		if s.emails[i] == s.emails[i-1] {
			s.people[s.emailOwner[i]].flags |= flagSharedEmail
			s.people[s.emailOwner[i-1]].flags |= flagSharedEmail
		}
	}
}

// lookupKey returns the person whose externalId is externalID (id is its
// hash), or nil. Unlike lookup it compares the externalId itself, so that
// two people whose externalIds share a 64-bit hash are never taken for
// one another.
func (s *stateIndex) lookupKey(id uint64, externalID string) *stateEntry {
	if i := s.lookupKeyAt(id, externalID); i >= 0 {
		return &s.people[i]
	}
	return nil
}

// lookupKeyAt is lookupKey, returning the index of the entry in s.people,
// or -1.
func (s *stateIndex) lookupKeyAt(id uint64, externalID string) int {
	lo, hi := s.byID.span(id)
	for i := lo; i < hi; i++ {
		if e := &s.people[i]; e.id == id && string(s.ids[e.idStart:e.idStart+uint32(e.idLen)]) == externalID {
			return i
		}
	}
	return -1
}

// emailTaken tells whether an active person of state has the e-mail that
// hashes to email.
func (s *stateIndex) emailTaken(email uint64) bool { return s.emailAt(email) >= 0 }

// externalID returns the externalId of e.
func (s *stateIndex) externalID(e *stateEntry) string {
	return string(s.ids[e.idStart : e.idStart+uint32(e.idLen)])
}

// departed lists, sorted, the active people of state the export did not
// list.
func (s *stateIndex) departed() []string {
	var out []string
	for i := range s.people {
		if e := &s.people[i]; !s.marks.seen(i) && !e.has(flagDeparted) {
			out = append(out, s.externalID(e))
		}
	}
	slices.Sort(out)
	return out
}

// buckets speeds up the search of a sorted slice of hashes: starts[b] is
// the index of the first hash whose top bits are b or more. With about one
// bucket per element, a lookup reads one or two elements, like a hash
// table, for 4 bytes per element.
type buckets struct {
	shift  uint
	starts []uint32
}

// bucketCounter builds the buckets of n sorted hashes: count counts each
// hash in its bucket, and done sums the counts up into the starts. Unlike
// filling each start as the hashes come, neither step branches on the
// hashes, and the loops that count call no function per hash
// (buildBuckets).
type bucketCounter struct{ b buckets }

func newBucketCounter(n int) bucketCounter {
	width := bits.Len(uint(n)) // 2^width > n buckets
	return bucketCounter{b: buckets{shift: uint(64 - width), starts: make([]uint32, 1<<width+1)}}
}

// count counts h in the start of the bucket after its own.
func (c *bucketCounter) count(h uint64) { c.b.starts[h>>c.b.shift+1]++ }

// done returns the buckets, once every hash was counted: the start of a
// bucket is the number of hashes in the buckets before it.
func (c *bucketCounter) done() buckets {
	starts := c.b.starts
	for k := 1; k < len(starts); k++ {
		starts[k] += starts[k-1]
	}
	return c.b
}

// span returns the range of the slice where h may be.
func (b buckets) span(h uint64) (lo, hi int) {
	k := h >> b.shift
	return int(b.starts[k]), int(b.starts[k+1])
}
