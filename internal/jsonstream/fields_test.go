package jsonstream

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// count is a list of n numbers that streams itself, and marshals to the
// same array.
type count struct{ n int }

func (c count) StreamJSON(s *Writer) {
	s.Begin('[')
	for i := range c.n {
		s.Elem()
		s.Value(i)
	}
	s.End(']')
}

func (c count) MarshalJSON() ([]byte, error) {
	list := make([]int, c.n)
	for i := range list {
		list[i] = i
	}
	return json.Marshal(list)
}

func (c count) IsZero() bool { return c.n == 0 }

// record streams its members with Fields.
type record struct {
	Name    string         `json:"name"`
	Numbers count          `json:"numbers,omitzero"`
	Inner   *record        `json:"inner,omitempty"`
	Others  []record       `json:"others"`
	When    time.Time      `json:"when,omitzero"`
	Tags    []string       `json:"tags,omitempty"`
	Counts  map[string]int `json:"counts"`
	Skipped string         `json:"-"`
	NoTag   int
	OnlyOpt bool `json:",omitempty"`
	hidden  int
}

func (r record) StreamJSON(s *Writer) { s.Fields(r) }

// TestFieldsAsMarshalIndent checks that a struct written by Fields, its
// Streamer members streaming, is byte for byte json.MarshalIndent's: tag
// names, "-", omitempty, omitzero with and without IsZero, nil pointers
// and slices, nested structs and slices of Streamers.
func TestFieldsAsMarshalIndent(t *testing.T) {
	when := time.Date(2026, 11, 26, 4, 0, 0, 0, time.UTC)
	cases := map[string]record{
		"zero": {},
		"full": {Name: "a<b>", Numbers: count{3}, Inner: &record{Name: "in", Others: []record{}}, When: when,
			Others: []record{{Name: "o1", Numbers: count{1}}, {Name: "o2", Tags: []string{"x"}}},
			Tags:   []string{"t"}, Counts: map[string]int{"b": 2, "a": 1}, Skipped: "no", NoTag: 7, OnlyOpt: true, hidden: 1},
	}
	for name, r := range cases {
		for _, ind := range [][2]string{{"", "  "}, {"> ", "\t"}} {
			want, err := json.MarshalIndent(r, ind[0], ind[1])
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			s := New(&got, ind[0], ind[1])
			s.Value(r)
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s, indent %q %q:\n got %s\nwant %s", name, ind[0], ind[1], got.Bytes(), want)
			}
		}
	}
}

// TestFieldsRefusesWhatItCannotWrite checks that Fields fails, rather
// than write another document than encoding/json, on an embedded struct,
// the string option and a value that is not a struct.
func TestFieldsRefusesWhatItCannotWrite(t *testing.T) {
	type base struct{ A int }
	type embeds struct{ base }
	type quoted struct {
		N int `json:"n,string"`
	}
	for name, v := range map[string]any{"embedded": embeds{}, "string option": quoted{}, "not a struct": 3} {
		var out bytes.Buffer
		s := New(&out, "", "  ")
		s.Fields(v)
		err := s.Flush()
		if err == nil || !strings.Contains(err.Error(), "encode") {
			t.Errorf("%s: error %v, want one saying what cannot be encoded", name, err)
		}
	}
}
