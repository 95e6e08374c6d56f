package reports

import (
	"encoding/json"
	"fmt"
	"iter"
	"slices"

	"hrsync/internal/jsonstream"
)

// PersonList is a list of people a report names, read in order. A list
// made by ListFunc reads its people from wherever its caller keeps them
// (the people job keeps the people a run added compactly, outside the Go
// heap) each time it is read: a million of them are written to the JSON
// report one at a time, never held as a []Person. Its JSON is an array of
// Person, as a []Person's.
type PersonList struct {
	n    int
	each iter.Seq[Person]
}

// ListOf returns the list of people.
func ListOf(people ...Person) PersonList {
	return ListFunc(len(people), slices.Values(people))
}

// ListFunc returns a list of n people that each yields, in order, every
// time the list is read.
func ListFunc(n int, each iter.Seq[Person]) PersonList {
	return PersonList{n: n, each: each}
}

// Len is the number of people.
func (l PersonList) Len() int { return l.n }

// IsZero says the list names nobody (its JSON member is left out).
func (l PersonList) IsZero() bool { return l.n == 0 }

// All yields the people in order.
func (l PersonList) All() iter.Seq[Person] {
	return func(yield func(Person) bool) {
		if l.each == nil {
			return
		}
		l.each(yield)
	}
}

// First returns the first n people of the list (all of them when it has
// fewer).
func (l PersonList) First(n int) []Person {
	out := make([]Person, 0, min(n, l.n))
	for p := range l.All() {
		if len(out) == n {
			break
		}
		out = append(out, p)
	}
	return out
}

// StreamJSON writes the list a person at a time (jsonstream.Streamer).
func (l PersonList) StreamJSON(s *jsonstream.Writer) {
	s.Begin('[')
	for p := range l.All() {
		s.Elem()
		s.Value(p)
	}
	s.End(']')
}

// MarshalJSON encodes the list whole, as a []Person.
func (l PersonList) MarshalJSON() ([]byte, error) {
	list := l.First(l.n)
	b, err := json.Marshal(list)
	if err != nil {
		return nil, fmt.Errorf("encode people: %w", err)
	}
	return b, nil
}

// UnmarshalJSON reads a list encoded by MarshalJSON.
func (l *PersonList) UnmarshalJSON(b []byte) error {
	var list []Person
	if err := json.Unmarshal(b, &list); err != nil {
		return fmt.Errorf("decode people: %w", err)
	}
	*l = ListOf(list...)
	return nil
}
