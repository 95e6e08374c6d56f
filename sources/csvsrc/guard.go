package csvsrc

import (
	"bufio"
	"bytes"
	"errors"
	"io"

	"hrsync/sources"
)

// guardState is where the guard is in a record, as encoding/csv (without
// LazyQuotes) parses it.
type guardState uint8

const (
	fieldStart guardState = iota // at the start of a field
	unquoted                     // in a field that does not start with a quote
	quoted                       // in a quoted field
	quoteSeen                    // after a quote in a quoted field: its end, or the first of ""
	badQuote                     // after a quote followed by neither quote, delimiter nor line end: encoding/csv drops the rest of the line
)

// guard sits between a file's text and encoding/csv. It mirrors the
// reader's view of where each record starts and ends, and:
//
//   - turns line ends into "\n" where encoding/csv would not see them: every
//     carriage return not followed by a line feed in a file whose first line
//     ends with one ("CSV (Macintosh)"), and such a lone carriage return
//     outside quoted fields in any other file, so that it ends its record
//     instead of gluing two rows together;
//   - fails fast with a *sources.RecordError when a record runs over the
//     configured lines or bytes, or a quoted field is still open at the end
//     of the text, so that a stray quote never swallows the rows after it
//     and encoding/csv never holds more than about maxBytes of one record.
type guard struct {
	br       *bufio.Reader
	source   string
	delim    byte
	maxLines int
	maxBytes int

	decided bool // the first line end was seen
	crOnly  bool // the first line ended with a lone carriage return

	st        guardState
	line      int // the current line, 1-based, counted as encoding/csv counts it
	recLine   int // the line the current record started on
	quoteLine int // the line the open quoted field started on
	recBytes  int // bytes of the current record so far
	err       error

	// bare is set once a quote was seen inside an unquoted field: there
	// encoding/csv drops the rest of the line (ErrBareQuote) while the
	// guard reads on, so from then on the guard's record ends may not be
	// the reader's, and the text can no longer be split at them (chunks).
	bare bool

	// tap, when set, keeps the text of some records as the file has it
	// (Rows).
	tap *recordTap
}

// newGuard guards text, whose delimiter is delim.
func newGuard(source string, text io.Reader, delim rune, maxLines, maxBytes int) *guard {
	return &guard{br: bufio.NewReaderSize(text, peekSize), source: source, delim: byte(delim),
		maxLines: maxLines, maxBytes: maxBytes, line: 1, recLine: 1}
}

// Read implements io.Reader.
func (g *guard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.br.Read(p)
	if gerr := g.scan(p[:n]); gerr != nil {
		g.err = gerr
		return 0, gerr
	}
	if errors.Is(err, io.EOF) && g.st == quoted {
		g.err = g.fail(sources.RecordUnclosed)
		return 0, g.err
	}
	if errors.Is(err, io.EOF) && g.tap != nil {
		g.tap.end(g.recLine, 0) // the last record, without a line end
	}
	return n, err
}

// scan follows b, the next bytes of the text, rewriting lone carriage
// returns in place, and returns the error of a record over the limits.
func (g *guard) scan(b []byte) error {
	for i := 0; i < len(b); {
		if n, ok := g.fastLine(b[i:]); ok {
			i += n
			continue
		}
		if n, ok := g.fastUnquoted(b[i:]); ok {
			i += n
			if err := g.check(); err != nil {
				return err
			}
			continue
		}
		if n, ok := g.fastQuoted(b[i:]); ok {
			i += n
			if err := g.check(); err != nil {
				return err
			}
			continue
		}
		if err := g.step(b, i); err != nil {
			return err
		}
		i++
	}
	return nil
}

// fastLine takes the rest of a line at once when it holds neither quote
// nor lone carriage return, which ends the record whatever the state
// outside a quoted field: the common case.
func (g *guard) fastLine(b []byte) (int, bool) {
	if !g.decided || g.crOnly || g.st == quoted || g.st == quoteSeen {
		return 0, false
	}
	j := bytes.IndexByte(b, '\n')
	if j < 0 || g.recBytes+j+1 > g.maxBytes {
		return 0, false
	}
	seg := b[:j]
	if k := bytes.IndexByte(seg, '\r'); k >= 0 && k != j-1 {
		return 0, false
	}
	if q := bytes.IndexByte(seg, '"'); q >= 0 && (g.st != fieldStart || g.recBytes != 0 || !g.wellQuoted(seg, q)) {
		return 0, false
	}
	g.keep(b[:j+1])
	g.line++
	g.endRecord()
	return j + 1, true
}

// wellQuoted tells whether line, a whole line that starts a record and
// whose first quote is at q, is one record in which every quote belongs to
// a quoted field that opens at the start of its field and closes on this
// line, right before a delimiter or the line's end ("" inside it being a
// quote). encoding/csv then reads the line as one record, as the step by
// step scan would find; anything else (a quote inside an unquoted field, a
// field still open at the line's end) is left to that scan.
func (g *guard) wellQuoted(line []byte, q int) bool {
	end := len(line)
	if end > 0 && line[end-1] == '\r' {
		end-- // the "\r" of "\r\n"
	}
	for q >= 0 {
		if q > 0 && line[q-1] != g.delim {
			return false // a quote inside an unquoted field
		}
		i := q + 1
		for {
			c := bytes.IndexByte(line[i:end], '"')
			if c < 0 {
				return false // the field goes on past the line
			}
			i += c
			if i+1 < end && line[i+1] == '"' {
				i += 2 // "" is a quote in the field
				continue
			}
			break
		}
		if i+1 < end && line[i+1] != g.delim {
			return false // text after the closing quote
		}
		next := bytes.IndexByte(line[i+1:end], '"')
		if next < 0 {
			return true
		}
		q = i + 1 + next
	}
	return true
}

// fastUnquoted takes the text of an unquoted field up to its next
// delimiter, line feed or carriage return at once, in a file whose line
// ends are not lone carriage returns: inside an unquoted field, nothing
// else changes the state (a long value whose line runs past the bytes
// read, which fastLine cannot take).
func (g *guard) fastUnquoted(b []byte) (int, bool) {
	if (g.st != unquoted && g.st != badQuote) || g.crOnly || !g.decided {
		return 0, false
	}
	j := 0
	for j < len(b) && b[j] != g.delim && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	if j == 0 {
		return 0, false
	}
	if g.st == unquoted && !g.bare && bytes.IndexByte(b[:j], '"') >= 0 {
		g.bare = true
	}
	g.keep(b[:j])
	g.recBytes += j
	return j, true
}

// fastQuoted takes the text of a quoted field up to its next quote at
// once, in a file whose line ends are not lone carriage returns: no byte
// of it needs rewriting.
func (g *guard) fastQuoted(b []byte) (int, bool) {
	if g.st != quoted || g.crOnly || !g.decided {
		return 0, false
	}
	j := bytes.IndexByte(b, '"')
	if j == 0 {
		return 0, false
	}
	if j < 0 {
		j = len(b)
	}
	g.keep(b[:j])
	g.line += bytes.Count(b[:j], []byte{'\n'})
	g.recBytes += j
	return j, true
}

// step follows the byte b[i], one at a time.
func (g *guard) step(b []byte, i int) error {
	g.keep(b[i : i+1]) // as the file has it, before a rewrite
	c := g.lineEnd(b, i)
	g.recBytes++
	if c == '\n' {
		g.line++
	}
	switch g.st {
	case fieldStart:
		g.atFieldStart(c)
	case unquoted, badQuote:
		g.inUnquoted(c)
	case quoted:
		if c == '"' {
			g.st = quoteSeen
		}
	case quoteSeen:
		g.afterQuote(c)
	}
	return g.check()
}

// lineEnd returns the byte b[i] as the state machine reads it: a lone CR
// that ends a line (outside quotes, or anywhere in a CR-only file) is
// rewritten to LF in b; the first line end decides the file's kind.
func (g *guard) lineEnd(b []byte, i int) byte {
	switch c := b[i]; c {
	case '\r':
		if g.loneCR(b, i) && (g.crOnly || g.st != quoted) {
			b[i] = '\n'
			return '\n'
		}
		return c
	case '\n':
		g.decided = true
		return c
	default:
		return c
	}
}

// atFieldStart follows c at the start of a field.
func (g *guard) atFieldStart(c byte) {
	switch c {
	case '"':
		g.st, g.quoteLine = quoted, g.line
	case g.delim:
	case '\n':
		g.endRecord()
	default:
		g.st = unquoted
	}
}

// inUnquoted follows c inside an unquoted field (or one whose closing
// quote was followed by more text).
func (g *guard) inUnquoted(c byte) {
	switch c {
	case '"':
		g.bare = g.bare || g.st == unquoted
	case g.delim:
		if g.st == unquoted {
			g.st = fieldStart
		}
	case '\n':
		g.endRecord()
	}
}

// afterQuote follows c after a quote inside a quoted field: an escaped
// quote, the field's end, or text after the closing quote.
func (g *guard) afterQuote(c byte) {
	switch c {
	case '"':
		g.st = quoted
	case g.delim:
		g.st = fieldStart
	case '\n':
		g.endRecord()
	case '\r': // the first of "\r\n"
	default:
		g.st = badQuote
	}
}

// loneCR tells whether the carriage return at b[i] is not followed by a
// line feed, looking past b when it is the last byte; the first line end
// of the text decides whether the file is CR-only.
func (g *guard) loneCR(b []byte, i int) bool {
	lone := true
	if i+1 < len(b) {
		lone = b[i+1] != '\n'
	} else if next, err := g.br.Peek(1); err == nil {
		lone = next[0] != '\n'
	}
	if !g.decided {
		g.decided, g.crOnly = true, lone
	}
	return lone
}

// endRecord starts a new record on the current line.
func (g *guard) endRecord() {
	if g.tap != nil {
		g.tap.end(g.recLine, g.line)
	}
	g.st, g.recLine, g.recBytes = fieldStart, g.line, 0
}

// keep hands text of the current record to the tap, if any.
func (g *guard) keep(text []byte) {
	if g.tap != nil && g.tap.on {
		g.tap.cur = append(g.tap.cur, text...)
	}
}

// check fails when the current record runs over a limit.
func (g *guard) check() error {
	switch {
	case g.line-g.recLine+1 > g.maxLines:
		return g.fail(sources.RecordTooManyLines)
	case g.recBytes > g.maxBytes:
		return g.fail(sources.RecordTooLong)
	}
	return nil
}

// fail builds the error of the current record.
func (g *guard) fail(kind sources.RecordProblem) error {
	e := &sources.RecordError{Source: g.source, Line: g.recLine, Problem: kind,
		MaxLines: g.maxLines, MaxBytes: g.maxBytes}
	if g.st == quoted || g.st == quoteSeen {
		e.QuoteLine = g.quoteLine
	}
	return e
}
