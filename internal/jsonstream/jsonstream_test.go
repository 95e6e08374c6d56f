package jsonstream

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"testing"
)

// TestAsMarshalIndent checks that a document written a value at a time is
// byte for byte json.MarshalIndent's: nested and empty objects and arrays,
// escaped strings, values nested at every depth, a Nested value.
func TestAsMarshalIndent(t *testing.T) {
	type inner struct {
		A []int          `json:"a"`
		M map[string]int `json:"m"`
	}
	whole := map[string]any{
		"empty":  []int{},
		"list":   []any{1, "x<&>\u2028", inner{A: []int{}, M: map[string]int{}}, []int{1, 2}, map[string]int{}},
		"nested": inner{A: []int{3}, M: map[string]int{"k": 1}},
		"null":   nil,
	}
	for _, ind := range [][2]string{{"", "  "}, {"  ", "\t"}} {
		got, want := objectAsMarshalIndent(t, whole, ind, func(s *Writer) {
			s.Key("empty")
			s.Begin('[')
			s.End(']')
			s.Key("list")
			s.Begin('[')
			for _, v := range whole["list"].([]any) {
				s.Elem()
				s.Value(v)
			}
			s.End(']')
			s.Key("nested")
			s.Nested(func(w io.Writer, prefix string) error {
				n := New(w, prefix, ind[1])
				n.Value(whole["nested"])
				return n.Flush()
			})
			s.Key("null")
			s.Value(nil)
		})
		if !bytes.Equal(got, want) {
			t.Errorf("indent %q %q:\n got %s\nwant %s", ind[0], ind[1], got, want)
		}
	}
}

// plainCases are leaf values Value may write without encoding/json, and
// values around the edges of what it may.
var plainCases = []any{
	"", "plain text 123", "a\"quote", `back\slash`, "<tag>", "a&b", "tab\there", "\x7f", "caf\u00e9", "\u2028",
	"bad \xff byte", "~ and space ",
	true, false, 0, -1, math.MaxInt64, math.MinInt64, int64(42),
	0.0, math.Copysign(0, -1), 1e-7, 1e-6, 0.1, 25, 10.1 * 7, 123456789.125, 1e20, 1e21, -1e21, 5e-324,
	math.MaxFloat64, -0.000001,
	[]string(nil), []string{}, []string{"a", "b"}, []string{"a", "<b>"},
	[]float64(nil), []float64{}, []float64{1.5, 25}, []float64{1, 1e22},
	float32(0.1), uint8(7),
}

// objectAsMarshalIndent returns what a Writer writes of an object whose
// members members writes, and what json.MarshalIndent writes of whole, at
// the indentation ind.
func objectAsMarshalIndent(t *testing.T, whole any, ind [2]string, members func(s *Writer)) (got, want []byte) {
	t.Helper()
	want, err := json.MarshalIndent(whole, ind[0], ind[1])
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	s := New(&b, ind[0], ind[1])
	s.Begin('{')
	members(s)
	s.End('}')
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), want
}

// listAsMarshalIndent is objectAsMarshalIndent of {"list": list}, the
// list's elements written by elems.
func listAsMarshalIndent(t *testing.T, list []any, ind [2]string, elems func(s *Writer)) (got, want []byte) {
	t.Helper()
	return objectAsMarshalIndent(t, map[string]any{"list": list}, ind, func(s *Writer) {
		s.Key("list")
		s.Begin('[')
		elems(s)
		s.End(']')
	})
}

// TestPlainAsEncodingJSON checks that every leaf value, plain or not, is
// written as json.MarshalIndent writes it, at any depth.
func TestPlainAsEncodingJSON(t *testing.T) {
	for _, ind := range [][2]string{{"", "  "}, {"> ", "\t"}} {
		got, want := listAsMarshalIndent(t, plainCases, ind, func(s *Writer) {
			for _, v := range plainCases {
				s.Elem()
				s.Value(v)
			}
		})
		if !bytes.Equal(got, want) {
			t.Errorf("indent %q %q:\n got %s\nwant %s", ind[0], ind[1], got, want)
		}
	}
	for _, v := range []any{math.NaN(), math.Inf(1), []float64{1, math.Inf(-1)}} {
		s := New(io.Discard, "", "  ")
		s.Value(v)
		if s.Err() == nil {
			t.Errorf("Value(%v) wrote what encoding/json refuses", v)
		}
	}
}

// FuzzPlainAsEncodingJSON compares Value with encoding/json on any string,
// used as a value and as a key, and on any float.
func FuzzPlainAsEncodingJSON(f *testing.F) {
	f.Add("plain", 25.5)
	f.Add("<&>\"\\\x00\xff\u2029", 1e21)
	f.Fuzz(func(t *testing.T, str string, x float64) {
		var want any = map[string]any{str: []any{str, x}}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			want = map[string]any{str: []any{str}}
		}
		w, err := json.MarshalIndent(want, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		s := New(&got, "", "  ")
		s.Begin('{')
		s.Key(str)
		s.Begin('[')
		s.Elem()
		s.Value(str)
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			s.Elem()
			s.Value(x)
		}
		s.End(']')
		s.End('}')
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), w) {
			t.Fatalf("got %s\nwant %s", got.Bytes(), w)
		}
	})
}
