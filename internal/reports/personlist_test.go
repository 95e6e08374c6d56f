package reports

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"hrsync/internal/jsonstream"
)

// TestPersonListJSON checks that a list read from elsewhere (ListFunc) is
// written, streamed or marshalled whole, as the []Person it holds would be,
// that an empty list leaves "added" out as an empty slice did, and that
// the JSON reads back into the same people.
func TestPersonListJSON(t *testing.T) {
	people := []Person{{ExternalID: "E1", Email: "a***@e***.test", Granted: 25}, {ExternalID: "E<2>", Granted: 12.5}}
	type asSlices struct {
		Added   []Person `json:"added,omitempty"`
		Granted float64  `json:"granted,omitempty"`
		Left    []Person `json:"left,omitempty"`
	}
	lazy := ListFunc(len(people), slices.Values(people))
	for name, c := range map[string]struct {
		got  People
		want asSlices
	}{
		"listed": {People{Added: lazy, Granted: 37.5, Left: people[:1]}, asSlices{Added: people, Granted: 37.5, Left: people[:1]}},
		"empty":  {People{Added: ListOf(), AlreadyThereCount: 0}, asSlices{}},
	} {
		want, err := json.MarshalIndent(c.want, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		whole, err := json.MarshalIndent(c.got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		var streamed bytes.Buffer
		s := jsonstream.New(&streamed, "", "  ")
		s.Value(c.got)
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(whole, want) || !bytes.Equal(streamed.Bytes(), want) {
			t.Errorf("%s:\nmarshalled %s\n  streamed %s\n      want %s", name, whole, streamed.Bytes(), want)
		}
		var back People
		if err := json.Unmarshal(whole, &back); err != nil {
			t.Fatal(err)
		}
		if got := back.Added.First(back.Added.Len()); back.Added.Len() != c.got.Added.Len() || !slices.Equal(got, c.got.Added.First(100)) {
			t.Errorf("%s: read back %v, want %v", name, got, c.got.Added.First(100))
		}
	}
	if got := lazy.First(1); len(got) != 1 || got[0] != people[0] {
		t.Errorf("First(1) = %v", got)
	}
}
