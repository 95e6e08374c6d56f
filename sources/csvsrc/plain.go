package csvsrc

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/gocarina/gocsv"

	"hrsync/sources"
)

// The fast path reads the records that encoding/csv and gocsv would read
// trivially without them: a chunk's plain lines (plainLines) are split on
// the delimiter here, and Fill puts each kept value in its field as gocsv
// would (gocsvFields), without gocsv's reflection and interface calls per
// value. Anything else (a quote, a carriage return other than that of a
// final CRLF, a line over copyAbove bytes) is read the existing way, and
// readMode.slow reads everything that way, for the tests to compare.

// fast prepares the fast path of rc, once its header is mapped: the slot
// of each column and the field gocsv maps each kept value to. It leaves
// rc slow when its delimiter is not one byte or gocsv's mapping cannot be
// worked out.
func (rc *records) fast() {
	if rc.slow {
		return
	}
	if rc.cr.Comma >= utf8.RuneSelf {
		rc.slow = true
		return
	}
	fields, ok := gocsvFields(rc.header)
	if !ok {
		rc.slow = true
		return
	}
	rc.fields = fields
	rc.slot = slices.Repeat([]int{-1}, rc.ncols)
	for k, col := range rc.cols {
		rc.slot[col] = k
	}
}

// gocsvFields works out, once, in which field of a sources.Row the
// existing mapping (gocsv.UnmarshalDecoder onto row, then row.fill) puts
// the k-th value of a record whose header is header: it maps one record
// whose values are markers of their index that way and finds them. false
// unless every value lands in a field of its own.
func gocsvFields(header []string) ([]sources.Field, bool) {
	marks := make([]string, len(header))
	for k := range marks {
		marks[k] = "\x00" + strconv.Itoa(k)
	}
	var out []row
	if err := gocsv.UnmarshalDecoder(batchValues{header, marks}, &out); err != nil || len(out) != 1 {
		return nil, false
	}
	var r sources.Row
	out[0].fill(&r)
	fields := make([]sources.Field, len(header))
	found := make([]bool, len(header))
	for f, text := range r.Text {
		if text == "" {
			continue
		}
		k, err := strconv.Atoi(strings.TrimPrefix(text, "\x00"))
		if err != nil || k < 0 || k >= len(header) || found[k] || text != marks[k] {
			return nil, false
		}
		fields[k], found[k] = sources.Field(f), true
	}
	if slices.Contains(found, false) {
		return nil, false
	}
	return fields, true
}

// plainLines reads the records of text, which starts on line, into b and
// sc as readRows would: a plain line (plainRecord) with the fast split,
// any other record with encoding/csv (oneRecord). It runs on the workers.
func (rc *records) plainLines(b *sources.Batch, sc *scratch, text []byte, line int) error {
	for len(text) > 0 {
		ln, next := text, len(text)
		if nl := bytes.IndexByte(text, '\n'); nl >= 0 {
			ln, next = text[:nl], nl+1
		}
		// encoding/csv reads "\r\n" as "\n", and drops a "\r" that ends
		// the text.
		if n := len(ln); n > 0 && ln[n-1] == '\r' {
			ln = ln[:n-1]
		}
		if len(ln) <= copyAbove && bytes.IndexByte(ln, '\r') < 0 && (len(ln) == 0 || rc.plainRecord(b, sc, ln, line)) {
			text, line = text[next:], line+1
			continue
		}
		n, lines, err := rc.oneRecord(b, sc, text, line)
		if err != nil {
			return err
		}
		text, line = text[n:], line+lines
	}
	return nil
}

// oneRecord reads the first record of text, which starts on line, with a
// csv.Reader of its own, as readRows would, and returns how many bytes and
// lines of text it took.
func (rc *records) oneRecord(b *sources.Batch, sc *scratch, text []byte, line int) (n, lines int, _ error) {
	// The buffers of parseText: a long record is read in place from one
	// that holds the rest of its chunk whole, kept for the records after
	// it in the chunk.
	sc.src.Reset(text)
	switch {
	case len(text) >= longChunk && (sc.br == nil || sc.br.Size() < len(text)+1):
		sc.br = bufio.NewReaderSize(&sc.src, len(text)+1)
	case len(text) < longChunk && (sc.br == nil || sc.br.Size() != smallBuffer):
		sc.br = bufio.NewReaderSize(&sc.src, smallBuffer)
	default:
		sc.br.Reset(&sc.src)
	}
	cr := csv.NewReader(sc.br)
	cr.Comma = rc.cr.Comma
	cr.FieldsPerRecord = -1
	part := *rc
	part.cr, part.lineOff = cr, line-1
	if err := part.readRows(b, sc, len(b.Rows)+1); err != nil {
		return 0, 0, err
	}
	n = int(cr.InputOffset())
	return n, bytes.Count(text[:n], []byte{'\n'}), nil
}

// plainRecord adds the record of ln, a line without its line end, to b
// and sc, when encoding/csv reads it trivially: ln holds no carriage
// return and each of its quotes belongs to a quoted field that opens at
// the start of its field and closes on ln, before a delimiter or the end
// ("" in it being a quote). Its mapped values are kept in one string, its
// problem and blankness set as records.next and readRows set them. false,
// and nothing added, when ln is not such a record.
func (rc *records) plainRecord(b *sources.Batch, sc *scratch, ln []byte, line int) bool {
	s, ok := rc.splitPlain(sc, ln)
	if !ok {
		return false
	}
	b.Rows = slices.Grow(b.Rows, 1)[:len(b.Rows)+1]
	r := &b.Rows[len(b.Rows)-1]
	vals := rc.nextValues(sc)
	clear(vals)
	nf := len(sc.bounds) / 2
	blank, extra := true, false // extra: a value past the header's columns
	for n := range nf {
		v := s[sc.bounds[2*n]:sc.bounds[2*n+1]]
		if n < rc.ncols && rc.slot[n] >= 0 {
			vals[rc.slot[n]] = v
		}
		if (blank || n >= rc.ncols) && strings.TrimSpace(v) != "" {
			blank, extra = false, extra || n >= rc.ncols
		}
	}
	r.Line, r.Problem, r.Blank = line, "", blank
	if nf < rc.ncols || extra {
		clear(vals)
		r.Problem, r.Blank = fmt.Sprintf("the row has %d fields, the header has %d", nf, rc.ncols), false
	}
	return true
}

// splitPlain splits ln as plainRecord says: it returns the text of its
// values, and their bounds in it in sc.bounds (start and end of each).
func (rc *records) splitPlain(sc *scratch, ln []byte) (string, bool) {
	sc.bounds = sc.bounds[:0]
	if bytes.IndexByte(ln, '"') < 0 { // the values are the text
		for start := 0; ; {
			end := bytes.IndexByte(ln[start:], rc.delim)
			if end < 0 {
				sc.bounds = append(sc.bounds, start, len(ln))
				if rc.lend {
					return lent(ln), true // ln is in sc.text, kept until the batch is consumed
				}
				return string(ln), true
			}
			sc.bounds = append(sc.bounds, start, start+end)
			start += end + 1
		}
	}
	buf := sc.rec[:0]
	for i := 0; ; {
		start := len(buf)
		if i < len(ln) && ln[i] == '"' {
			var ok bool
			if buf, i, ok = unquote(buf, ln, i+1); !ok {
				return "", false
			}
			if i < len(ln) && ln[i] != rc.delim {
				return "", false // text after the closing quote
			}
		} else {
			end := bytes.IndexByte(ln[i:], rc.delim)
			if end < 0 {
				end = len(ln) - i
			}
			if bytes.IndexByte(ln[i:i+end], '"') >= 0 {
				return "", false // a quote inside an unquoted field
			}
			buf = append(buf, ln[i:i+end]...)
			i += end
		}
		sc.bounds = append(sc.bounds, start, len(buf))
		if i == len(ln) {
			break
		}
		i++ // the delimiter
	}
	sc.rec = buf
	if rc.lend {
		// sc.rec is the next record's too: the values go to the
		// batch's arena, kept until the batch is consumed.
		at := len(sc.arena)
		sc.arena = append(sc.arena, buf...)
		return lent(sc.arena[at:]), true
	}
	return string(buf), true
}

// lent returns the text of b as a string without copying it, for a read
// that lends its values (records.lend): b must stay unchanged until the
// batch that holds the string is consumed, and nothing may read the
// string after that.
func lent(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b)) //nolint:gosec // audited: the lent values live no longer than their batch (records.lend)
}

// unquote appends to buf the value of the quoted field of ln whose text
// starts at ln[i], after its opening quote, and returns where its closing
// quote ends; false when it does not close on ln.
func unquote(buf, ln []byte, i int) ([]byte, int, bool) {
	for {
		j := bytes.IndexByte(ln[i:], '"')
		if j < 0 {
			return buf, 0, false
		}
		buf = append(buf, ln[i:i+j]...)
		i += j + 1
		if i < len(ln) && ln[i] == '"' {
			buf = append(buf, '"')
			i++
			continue
		}
		return buf, i, true
	}
}
