package sources

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"

	"golang.org/x/sync/errgroup"

	"hrsync/model"
)

// Reader yields the rows of one export in batches, for Run.
type Reader interface {
	// Next reads the next rows, in order, into b, reusing its slices; it
	// returns io.EOF after the last row. Run calls it from one goroutine,
	// one batch after the other. It may leave the rows to Fill, with what
	// Fill needs to read them in b.Scratch (a CSV reader cuts the next
	// records' text there).
	Next(ctx context.Context, b *Batch) error
	// Fill completes the rows that Next read into b (a CSV reader parses
	// and maps its records there). Run calls it from several goroutines
	// at once, each with a batch of its own, and looks at b.Rows only
	// after it.
	Fill(b *Batch) error
}

// Batch is a run of consecutive rows of an export.
type Batch struct {
	// Rows are the batch's rows, in order.
	Rows []Row
	// Scratch is the Reader's own storage, kept with the batch from one
	// use to the next.
	Scratch any

	people []model.Person
	hashes []Hashes
	rejs   [][]model.Rejection
	locs   []Loc
	err    error
	done   chan struct{}
}

// BatchLen is how many rows a Reader should put in a batch: enough to
// make handing a batch between goroutines cheap, few enough to keep the
// batches in flight small.
const BatchLen = 512

// Keys remembers the keys of the rows read so far (normalized externalIds
// and e-mails), to find duplicates.
type Keys interface {
	// Locate looks the keys of each of people (hashed in hashes) up in
	// whatever read-only index the Keys has, and says in locs where they
	// are. Run calls it from the workers, on each checked batch, with the
	// three slices of one length, so that First has less to do in the
	// ordered stage; it skips a person without keys (no ExternalID and no
	// Email), whose Loc stays zero. A Keys without an index leaves every
	// Loc zero.
	Locate(people []model.Person, hashes []Hashes, locs []Loc)
	// First records that the row on line holds the keys of p (those that
	// passed their checks: a non-empty ExternalID and Email, hashed in h),
	// as Locate located them, and returns for each the line of the first
	// row that held it, or 0 when this row is the first.
	First(p *model.Person, h Hashes, loc Loc, line int) (idFirst, emailFirst int)
}

// KeysAhead is a Keys that reads ahead: Run calls Ahead in the ordered
// stage with the Locs of a batch's rows (some zero) before it calls First
// for them, so that the Keys can load what First will look at for all of
// them at once (loads whose cache misses overlap) rather than one row at
// a time. Ahead changes nothing that First returns.
type KeysAhead interface {
	Keys
	Ahead(locs []Loc)
}

// Loc is where Keys.Locate found a row's keys. Run hands it back to First
// and does not look inside.
type Loc struct {
	ID, Email int32
	// Note is what else Locate found out, for the Keys' own use.
	Note uint32
}

// mapKeys is the Keys of a Run whose caller has none: a map per field
// from a key's hash to its first line. Two different keys with the same
// 64-bit hash (odds about n²/2⁶⁵ for n rows) would be reported as
// duplicates: a false rejection, never a lost one.
type mapKeys struct{ ids, emails map[uint64]int32 }

// NewKeys returns a Keys that holds every key's hash in memory (about 40
// bytes a key).
func NewKeys() Keys { return &mapKeys{ids: map[uint64]int32{}, emails: map[uint64]int32{}} }

// Locate finds nothing: mapKeys has no index.
func (k *mapKeys) Locate([]model.Person, []Hashes, []Loc) {}

// First implements Keys.
func (k *mapKeys) First(p *model.Person, h Hashes, _ Loc, line int) (idFirst, emailFirst int) {
	if p.ExternalID != "" {
		idFirst = FirstIn(k.ids, h.ID, line)
	}
	if p.Email != "" {
		emailFirst = FirstIn(k.emails, h.Email, line)
	}
	return idFirst, emailFirst
}

// FirstIn records line as the first line of the key hashed to h in m, or
// returns the first line m already holds for it.
func FirstIn(m map[uint64]int32, h uint64, line int) int {
	if first, ok := m[h]; ok {
		return int(first)
	}
	m[h] = int32(line)
	return 0
}

// dupKey names a duplicated key by its field and first line.
type dupKey struct {
	field Field
	first int
}

// dupInfo is what the rest of the rows said of a duplicated key.
type dupInfo struct {
	second int // line of the second row holding the key
	count  int // rows holding the key
}

// merger is the ordered stage of Run: it finds duplicates and hands each
// row to the handler.
type merger struct {
	v        *Validator
	h        Handler
	keys     Keys
	ahead    KeysAhead // keys, when it reads ahead
	st       Stats
	accepted []uint64 // bit set of the lines of accepted rows
	dups     map[dupKey]*dupInfo
}

// Run reads an export with rd and checks every row with v: the rows are
// read in order by one goroutine (or only cut there, see Reader), filled
// and checked in batches by as many goroutines as there are processors,
// and handed to h in row order from the calling goroutine, with the
// duplicate keys found as Handler explains. A blank row (Row.Blank) is skipped and counted.
func Run(ctx context.Context, v *Validator, rd Reader, h Handler) (Stats, error) {
	keys := h.Keys
	if keys == nil {
		keys = NewKeys()
	}
	m := &merger{v: v, h: h, keys: keys, dups: map[dupKey]*dupInfo{}}
	m.ahead, _ = keys.(KeysAhead)
	if err := pipeline(ctx, v, keys, rd, m.batch); err != nil {
		return m.st, err
	}
	if err := m.finish(); err != nil {
		return m.st, err
	}
	return m.st, nil
}

// pipeline runs the stages of Run: Next in a goroutine, Fill and the
// checks in workers, and consume, in order, in the calling goroutine.
func pipeline(ctx context.Context, v *Validator, keys Keys, rd Reader, consume func(*Batch) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := runtime.GOMAXPROCS(0)
	// Batches circulate: free -> Next -> work and order -> consume -> free.
	free := make(chan *Batch, 2*workers+2)
	for range cap(free) {
		free <- &Batch{done: make(chan struct{}, 1)}
	}
	work := make(chan *Batch, cap(free))
	order := make(chan *Batch, cap(free))
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(order)
		defer close(work)
		for {
			var b *Batch
			select {
			case b = <-free:
			case <-gctx.Done():
				return nil
			}
			err := rd.Next(gctx, b)
			if errors.Is(err, io.EOF) {
				return nil
			}
			b.err = err
			// A batch goes to the workers before the order queue, so
			// that every batch of the queue is sure to be done. Neither
			// send blocks: each channel holds every batch there is.
			work <- b
			order <- b
			if err != nil {
				return nil
			}
		}
	})
	for range workers {
		g.Go(func() error {
			for b := range work {
				if b.err == nil {
					b.err = rd.Fill(b)
				}
				if b.err == nil {
					b.check(v, keys)
				}
				b.done <- struct{}{}
			}
			return nil
		})
	}
	var stop error
	for b := range order {
		<-b.done
		if stop == nil {
			stop = b.err
			if stop == nil {
				stop = consume(b)
			}
			if stop != nil {
				cancel() // the reader stops; the batches in flight drain
			}
		}
		b.err = nil
		free <- b
	}
	if err := g.Wait(); err != nil && stop == nil {
		stop = err
	}
	if stop == nil {
		stop = ctx.Err()
	}
	return stop
}

// check checks each row of the batch with v and locates its keys.
func (b *Batch) check(v *Validator, keys Keys) {
	n := len(b.Rows)
	b.people = slices.Grow(b.people[:0], n)[:n]
	b.hashes = slices.Grow(b.hashes[:0], n)[:n]
	b.rejs = slices.Grow(b.rejs[:0], n)[:n]
	b.locs = slices.Grow(b.locs[:0], n)[:n]
	for i := range b.Rows {
		b.people[i], b.hashes[i], b.rejs[i], b.locs[i] = model.Person{}, Hashes{}, nil, Loc{}
		if b.Rows[i].Blank {
			continue
		}
		b.people[i], b.rejs[i] = v.Check(&b.Rows[i])
		b.hashes[i] = hashesOf(&b.people[i], len(b.rejs[i]) == 0)
	}
	// The keys are located in a pass of their own: lookups in a large
	// index miss the processor's caches, and misses of a short loop's
	// iterations overlap, where each row's other checks would keep them
	// apart.
	keys.Locate(b.people, b.hashes, b.locs)
}

// batch finds the duplicates of a checked batch and hands its rows on.
func (m *merger) batch(b *Batch) error {
	if m.ahead != nil {
		m.ahead.Ahead(b.locs[:len(b.Rows)])
	}
	for i := range b.Rows {
		r := &b.Rows[i]
		if r.Blank {
			m.st.Skipped++
			continue
		}
		m.st.Rows++
		p, rej := &b.people[i], b.rejs[i]
		if p.ExternalID != "" || p.Email != "" {
			idFirst, emailFirst := m.keys.First(p, b.hashes[i], b.locs[i], r.Line)
			if idFirst != 0 {
				rej = m.later(rej, ExternalID, idFirst, r.Line)
			}
			if emailFirst != 0 {
				rej = m.later(rej, Email, emailFirst, r.Line)
			}
		}
		if len(rej) == 0 {
			m.st.Accepted++
			m.markAccepted(r.Line)
			if err := m.accept(p, b.hashes[i]); err != nil {
				return fmt.Errorf("accept: %w", err)
			}
			continue
		}
		m.st.Rejected++
		for _, x := range rej {
			if err := m.h.Reject(x); err != nil {
				return fmt.Errorf("reject: %w", err)
			}
		}
		b.rejs[i] = nil
	}
	return nil
}

// accept hands an accepted row on: with its hashes when the handler takes
// them, by pointer when it takes that.
func (m *merger) accept(p *model.Person, h Hashes) error {
	if m.h.AcceptRow != nil {
		return m.h.AcceptRow(p, h)
	}
	if m.h.AcceptHashed != nil {
		return m.h.AcceptHashed(*p, h)
	}
	return m.h.Accept(*p)
}

// later rejects a row that repeats the key first held by the row on line
// first, and records it for the first row's rejection. The duplicate
// externalId goes before the row's other rejections, a duplicate e-mail
// after the externalId's, as Check orders them by field.
func (m *merger) later(rej []model.Rejection, f Field, first, line int) []model.Rejection {
	d := m.dups[dupKey{f, first}]
	if d == nil {
		d = &dupInfo{second: line, count: 1}
		m.dups[dupKey{f, first}] = d
	}
	d.count++
	x := model.Rejection{Source: m.v.source, Line: line, Field: m.v.columns[f],
		Reason: fmt.Sprintf("duplicate %s: first on line %d; every occurrence is rejected", keyName(f), first)}
	at := 0
	if f == Email {
		for at < len(rej) && rej[at].Field == m.v.columns[ExternalID] {
			at++
		}
	}
	return slices.Insert(rej, at, x)
}

func keyName(f Field) string {
	if f == Email {
		return "e-mail"
	}
	return "externalId"
}

func (m *merger) markAccepted(line int) {
	w := line / 64
	if w >= len(m.accepted) {
		m.accepted = slices.Grow(m.accepted, w+1-len(m.accepted))[:w+1]
	}
	m.accepted[w] |= 1 << (line % 64)
}

func (m *merger) wasAccepted(line int) bool {
	w := line / 64
	return w < len(m.accepted) && m.accepted[w]&(1<<(line%64)) != 0
}

// finish rejects the first row of each duplicated key, in line order,
// taking it back first if it was accepted.
func (m *merger) finish() error {
	firsts := make([]dupKey, 0, len(m.dups))
	for k := range m.dups {
		firsts = append(firsts, k)
	}
	slices.SortFunc(firsts, func(a, b dupKey) int {
		if a.first != b.first {
			return a.first - b.first
		}
		return int(a.field) - int(b.field)
	})
	for i, k := range firsts {
		if m.wasAccepted(k.first) && (i == 0 || firsts[i-1].first != k.first) {
			m.st.Accepted--
			m.st.Rejected++
			if m.h.Retract != nil {
				if err := m.h.Retract(k.first); err != nil {
					return fmt.Errorf("retract: %w", err)
				}
			}
		}
		d := m.dups[k]
		more := ""
		if d.count > 2 {
			more = fmt.Sprintf(" and %d more line(s)", d.count-2)
		}
		x := model.Rejection{Source: m.v.source, Line: k.first, Field: m.v.columns[k.field],
			Reason: fmt.Sprintf("duplicate %s: also on line %d%s; every occurrence is rejected", keyName(k.field), d.second, more)}
		if err := m.h.Reject(x); err != nil {
			return fmt.Errorf("reject: %w", err)
		}
	}
	return nil
}
