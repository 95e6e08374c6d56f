package csvsrc

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

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
// sc as readRows would, for as long as they are plain lines: a line with
// no quote, no carriage return but that of a final CRLF, and at most
// copyAbove bytes, which encoding/csv reads as one record of the fields
// between its delimiters (an empty line is no record). It returns the
// text from the first line that is not plain, and the line it starts on.
func (rc *records) plainLines(b *sources.Batch, sc *scratch, text []byte, line int) ([]byte, int) {
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
		if len(ln) > copyAbove || bytes.IndexByte(ln, '"') >= 0 || bytes.IndexByte(ln, '\r') >= 0 {
			return text, line
		}
		if len(ln) > 0 {
			rc.plainRecord(b, sc, ln, line)
		}
		text, line = text[next:], line+1
	}
	return text, line
}

// plainRecord adds the record of ln, a plain line (plainLines) that starts
// on line, to b and sc: its mapped values, in one string, and its problem
// and blankness as records.next and readRows find them.
func (rc *records) plainRecord(b *sources.Batch, sc *scratch, ln []byte, line int) {
	b.Rows = slices.Grow(b.Rows, 1)[:len(b.Rows)+1]
	r := &b.Rows[len(b.Rows)-1]
	vals := rc.nextValues(sc)
	clear(vals)
	s := string(ln)
	n, blank, extra := 0, true, false // extra: a value past the header's columns
	for start := 0; ; n++ {
		end := strings.IndexByte(s[start:], rc.delim)
		if end < 0 {
			end = len(s)
		} else {
			end += start
		}
		v := s[start:end]
		if n < rc.ncols && rc.slot[n] >= 0 {
			vals[rc.slot[n]] = v
		}
		if (blank || n >= rc.ncols) && strings.TrimSpace(v) != "" {
			blank, extra = false, extra || n >= rc.ncols
		}
		if end == len(s) {
			break
		}
		start = end + 1
	}
	n++ // the number of fields
	r.Line, r.Problem, r.Blank = line, "", blank
	if n < rc.ncols || extra {
		clear(vals)
		r.Problem, r.Blank = fmt.Sprintf("the row has %d fields, the header has %d", n, rc.ncols), false
	}
}
