// Package jsonstream writes a JSON document a value at a time, with the
// bytes json.MarshalIndent (or a json.Encoder with SetIndent) would write
// for the whole document, so that a document too large to hold (a plan that
// lists a million new people) goes to its writer as it is made.
//
// A document is opened and closed object by object and array by array;
// each leaf value is encoded by encoding/json where it stands.
package jsonstream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// Writer writes one JSON document in indented form. Its first error stops
// it: every later call does nothing, and Err (and Flush) return it.
type Writer struct {
	w      *bufio.Writer
	prefix string // what each line starts with
	indent string // one level of nesting
	// first says, per open object or array, that no member is written yet.
	first []bool
	buf   bytes.Buffer
	encs  []*json.Encoder // per nesting depth, encoding into buf
	num   []byte          // where plain writes a number
	// newlines holds, per nesting depth, a line break and what the next
	// line starts with.
	newlines []string
	// types holds the members Fields writes of each struct type it met.
	types map[reflect.Type][]field
	err   error
}

// New returns a Writer to w of a value that starts where a line already
// began with prefix (prefix and indent as for json.MarshalIndent).
func New(w io.Writer, prefix, indent string) *Writer {
	return &Writer{w: bufio.NewWriterSize(w, 64<<10), prefix: prefix, indent: indent}
}

// Encode writes v to w and a newline, with the bytes a json.Encoder with
// SetIndent(prefix, indent) would write; a Streamer in v streams.
func Encode(w io.Writer, v any, prefix, indent string) error {
	s := New(w, prefix, indent)
	s.Value(v)
	s.Raw("\n")
	return s.Flush()
}

// Begin opens an object ('{') or an array ('[') where a value goes.
func (s *Writer) Begin(open byte) {
	s.write(string(open))
	s.first = append(s.first, true)
}

// End closes the innermost object ('}') or array (']'): an empty one is
// written {} or [], as encoding/json writes it.
func (s *Writer) End(closing byte) {
	last := len(s.first) - 1
	empty := s.first[last]
	s.first = s.first[:last]
	if !empty {
		s.newline()
	}
	s.write(string(closing))
}

// Key starts an object member: its value comes next.
func (s *Writer) Key(name string) {
	s.Elem()
	if plainString(name) {
		s.write(`"`)
		s.write(name)
		s.write(`": `)
		return
	}
	k, err := json.Marshal(name)
	if err != nil {
		s.fail(fmt.Errorf("encode key: %w", err))
		return
	}
	s.write(string(k) + ": ")
}

// Elem starts an array element (a value, or a Begin, comes next).
func (s *Writer) Elem() {
	last := len(s.first) - 1
	if !s.first[last] {
		s.write(",")
	}
	s.first[last] = false
	s.newline()
}

// Value writes v where a value goes, as encoding/json encodes it; a
// Streamer (or a slice of them) streams itself.
func (s *Writer) Value(v any) {
	if s.err != nil || s.plain(v) || s.stream(v) {
		return
	}
	depth := len(s.first)
	for len(s.encs) <= depth {
		e := json.NewEncoder(&s.buf)
		e.SetIndent(s.prefixAt(len(s.encs)), s.indent)
		s.encs = append(s.encs, e)
	}
	s.buf.Reset()
	if err := s.encs[depth].Encode(v); err != nil {
		s.fail(fmt.Errorf("encode %T: %w", v, err))
		return
	}
	b := s.buf.Bytes()
	s.writeBytes(b[:len(b)-1]) // less the Encoder's newline
}

// Nested writes a value with write, which is given the writer and the
// prefix of the lines the value is nested in (for a streamed value of its
// own: New(w, prefix, indent)); it must flush what it wrote.
func (s *Writer) Nested(write func(w io.Writer, prefix string) error) {
	if s.err != nil {
		return
	}
	if err := write(s.w, s.prefixAt(len(s.first))); err != nil {
		s.fail(err)
	}
}

// Raw writes text as it is (a newline at the end of the document).
func (s *Writer) Raw(text string) { s.write(text) }

// Flush writes what is buffered to the underlying writer, and returns the
// first error.
func (s *Writer) Flush() error {
	if s.err != nil {
		return s.err
	}
	if err := s.w.Flush(); err != nil {
		s.fail(fmt.Errorf("write json: %w", err))
	}
	return s.err
}

// Err returns the first error.
func (s *Writer) Err() error { return s.err }

// prefixAt is what a line nested depth levels deep starts with.
func (s *Writer) prefixAt(depth int) string { return s.prefix + strings.Repeat(s.indent, depth) }

// newline starts a line at the current nesting.
func (s *Writer) newline() {
	depth := len(s.first)
	for len(s.newlines) <= depth {
		s.newlines = append(s.newlines, "\n"+s.prefixAt(len(s.newlines)))
	}
	s.write(s.newlines[depth])
}

func (s *Writer) write(text string) {
	if s.err != nil {
		return
	}
	if _, err := s.w.WriteString(text); err != nil {
		s.fail(fmt.Errorf("write json: %w", err))
	}
}

func (s *Writer) writeBytes(b []byte) {
	if s.err != nil {
		return
	}
	if _, err := s.w.Write(b); err != nil {
		s.fail(fmt.Errorf("write json: %w", err))
	}
}

func (s *Writer) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// plain writes v when it is a value encoding/json writes with no choice to
// make (see plainString and plainFloat), a boolean, an integer, or a slice
// of plain strings or floats, and tells whether it did; anything else is
// left to encoding/json. The bytes are encoding/json's: only the work of
// getting them differs.
func (s *Writer) plain(v any) bool {
	switch x := v.(type) {
	case string:
		if !plainString(x) {
			return false
		}
		s.write(`"`)
		s.write(x)
		s.write(`"`)
	case bool:
		s.write(strconv.FormatBool(x))
	case int:
		s.num = strconv.AppendInt(s.num[:0], int64(x), 10)
		s.writeBytes(s.num)
	case int64:
		s.num = strconv.AppendInt(s.num[:0], x, 10)
		s.writeBytes(s.num)
	case float64:
		if !plainFloat(x) {
			return false
		}
		s.num = strconv.AppendFloat(s.num[:0], x, 'f', -1, 64)
		s.writeBytes(s.num)
	case []string:
		return plainSlice(s, x, plainString)
	case []float64:
		return plainSlice(s, x, plainFloat)
	default:
		return false
	}
	return true
}

// plainSlice writes a slice whose every element is plain (ok), as
// encoding/json writes it (null when nil), and tells whether it did.
func plainSlice[T any](s *Writer, x []T, ok func(T) bool) bool {
	for _, e := range x {
		if !ok(e) {
			return false
		}
	}
	if x == nil {
		s.write("null")
		return true
	}
	s.Begin('[')
	for _, e := range x {
		s.Elem()
		s.plain(e)
	}
	s.End(']')
	return true
}

// plainString tells whether encoding/json writes s as it is between
// quotes: printable ASCII with no quote or backslash, and none of the
// characters its HTML escaping rewrites (<, >, &).
func plainString(x string) bool {
	for i := range len(x) {
		switch c := x[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// plainFloat tells whether encoding/json writes f in the shortest decimal
// form without an exponent, as strconv's 'f' format with precision -1
// does: zero, and magnitudes from 1e-6 up to 1e21. The rest (exponents,
// NaN and infinities, which it refuses) is left to it.
func plainFloat(f float64) bool {
	a := math.Abs(f)
	return a == 0 || a >= 1e-6 && a < 1e21
}
