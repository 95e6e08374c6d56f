package csvsrc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"

	"hrsync/sources"
)

// chunkSize is how many bytes of whole records chunks puts in a batch by
// default: about sources.BatchLen rows of a typical export.
const chunkSize = 64 << 10

// readSize is the most chunks reads of the text at once, and the least
// room it leaves for a read.
const readSize = 32 << 10

// smallBuffer is the buffer encoding/csv reads a chunk through; a chunk of
// longChunk bytes or more (a long record) is read through one that holds
// it whole.
const (
	smallBuffer = 4 << 10
	longChunk   = 1 << 20
)

// chunks is the Reader of a file read in parallel. Its Next only cuts the
// guarded text into chunks of whole records; Fill, on the workers of
// sources.Run, parses each chunk (its plain lines with the fast path, any
// other record with a csv.Reader of its own, whose lines are offset by the
// line the record starts on: plainLines), and maps it as records does.
//
// The guard still reads the whole text, in order, in Next: its record
// limits, lone carriage returns, CR-only files and unclosed quotes are
// decided as in the sequential read, and its errors come in the same
// order. A chunk ends where the guard ends a record, which is where
// encoding/csv ends it as long as no quote was seen inside an unquoted
// field (see guard.bare); there encoding/csv drops the rest of the line
// and the guard's record ends may no longer be the reader's. From the
// start of the chunk that holds such a quote, the rest of the text is
// therefore read sequentially, by one csv.Reader in Next, as records
// does. The text is split after decoding (UTF-16 and Windows-1252 are
// decoded on the fly in Next), so the encoding never cuts a character.
type chunks struct {
	rc    *records // the header's mapping
	g     *guard
	size  int    // bytes of whole records to cut at least
	carry []byte // text read past the last record end
	line  int    // the line carry starts on
	eof   bool
	// seq, once set, reads the rest of the text sequentially.
	seq *records
}

// openChunks reads the header of text, guarded by g, and returns the
// Reader that reads the rest of it in chunks of at least mode.chunk bytes
// (chunkSize when 0), parsed as mode says (slow, lend).
func openChunks(name string, g *guard, delim rune, m sources.Mapping, watch *utf8Watch, mode readMode) (*chunks, error) {
	size := mode.chunk
	if size <= 0 {
		size = chunkSize
	}
	// encoding/csv takes a *bufio.Reader as it is, so the text it read
	// past the header stays here.
	br := bufio.NewReaderSize(g, peekSize)
	rc, err := openRecords(name, br, delim, m, watch, mode.slow)
	if err != nil {
		return nil, err
	}
	// Only the chunks lend: each batch keeps its own text and arena.
	rc.lend = mode.lend
	rest, _ := br.Peek(br.Buffered())
	c := &chunks{rc: rc, g: g, size: size, carry: bytes.Clone(rest)}
	c.line = g.line - bytes.Count(c.carry, []byte{'\n'})
	return c, nil
}

// Next cuts the next chunk of text into b, for Fill to parse; once the
// text cannot be split, it reads the rows as records.Next does.
func (c *chunks) Next(ctx context.Context, b *sources.Batch) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("read csv: %w", err)
	}
	if c.seq == nil {
		sc := c.rc.scratchOf(b)
		b.Rows = b.Rows[:0]
		if err := c.cut(sc); err != nil {
			return err
		}
		if c.seq == nil {
			if len(sc.text) == 0 {
				return io.EOF
			}
			// As in records.Next: the values of a chunk cut once the
			// watch has seen bytes that are not UTF-8 get them replaced
			// (validUTF8String leaves valid values as they are).
			sc.parse, sc.fix = true, c.rc.watch != nil && c.rc.watch.bad
			return nil
		}
	}
	return c.seq.Next(ctx, b)
}

// Fill parses the batch's chunk, if it has one, and maps its rows.
func (c *chunks) Fill(b *sources.Batch) error { return c.rc.Fill(b) }

// cut moves the next whole records of the text, at least c.size bytes of
// them or the rest of the text, into sc.text. It starts c.seq instead
// when the guard has seen a quote inside an unquoted field.
func (c *chunks) cut(sc *scratch) error {
	if cap(sc.text) > 4*c.size {
		// The buffers of a long record are not kept for the next chunk.
		sc.text, sc.br = nil, nil
	}
	buf := append(sc.text[:0], c.carry...)
	for {
		if c.g.bare {
			c.sequential(buf)
			sc.text = buf[:0]
			return nil
		}
		if c.eof || len(buf)-c.g.recBytes >= c.size {
			break
		}
		if cap(buf)-len(buf) < readSize {
			// Doubled, so that a long record is copied about once.
			buf = slices.Grow(buf, max(readSize, c.size, len(buf)))
		}
		// A read at a time of at most readSize, so that a chunk ends
		// soon after c.size and its text is still in the caches when a
		// worker parses it.
		n, err := c.g.Read(buf[len(buf):min(cap(buf), len(buf)+readSize)])
		buf = buf[:len(buf)+n]
		switch {
		case errors.Is(err, io.EOF):
			c.eof = true
		case err != nil:
			return guardError(err)
		}
	}
	end := len(buf)
	if !c.eof {
		end -= c.g.recBytes // the record still open starts here
	}
	sc.text, sc.line = buf[:end], c.line
	c.carry = append(c.carry[:0], buf[end:]...)
	c.line = c.g.recLine
	return nil
}

// guardError is an error of the guarded text as records.next returns it:
// a *sources.RecordError as it is, else a failed read.
func guardError(err error) error {
	var rec *sources.RecordError
	if errors.As(err, &rec) {
		return rec
	}
	return fmt.Errorf("read csv: %w", err)
}

// sequential starts reading the rest of the text, from text (already
// guarded) on, with one csv.Reader.
func (c *chunks) sequential(text []byte) {
	cr := csv.NewReader(io.MultiReader(bytes.NewReader(bytes.Clone(text)), c.g))
	cr.Comma = c.rc.cr.Comma
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	seq := *c.rc
	seq.cr, seq.lineOff = cr, c.line-1
	c.seq = &seq
}

// parseText reads the records of sc.text, a chunk of whole records cut by
// chunks, into b and sc: with the fast path (plainLines) or, when rc is
// slow, with a csv.Reader of its own. It runs on the workers.
func (rc *records) parseText(b *sources.Batch, sc *scratch) error {
	b.Rows, sc.values, sc.arena = b.Rows[:0], sc.values[:1], sc.arena[:0]
	text, line := sc.text, sc.line
	if !rc.slow {
		return rc.plainLines(b, sc, text, line)
	}
	// A small buffer, kept with the batch, stays in the caches; a chunk of
	// a long record gets one that holds it whole, so that encoding/csv
	// reads its lines in place instead of copying a long line into a
	// buffer of its own, grown step by step.
	sc.src.Reset(text)
	switch {
	case len(text) >= longChunk:
		sc.br = bufio.NewReaderSize(&sc.src, len(text)+1)
	case sc.br == nil || sc.br.Size() != smallBuffer:
		sc.br = bufio.NewReaderSize(&sc.src, smallBuffer)
	default:
		sc.br.Reset(&sc.src)
	}
	cr := csv.NewReader(sc.br)
	cr.Comma = rc.cr.Comma
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	part := *rc
	part.cr, part.lineOff = cr, line-1
	return part.readRows(b, sc, -1)
}
