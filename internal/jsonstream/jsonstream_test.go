package jsonstream

import (
	"bytes"
	"encoding/json"
	"io"
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
		want, err := json.MarshalIndent(whole, ind[0], ind[1])
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		s := New(&got, ind[0], ind[1])
		s.Begin('{')
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
		s.End('}')
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("indent %q %q:\n got %s\nwant %s", ind[0], ind[1], got.Bytes(), want)
		}
	}
}
