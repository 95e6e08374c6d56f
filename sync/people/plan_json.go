package people

import (
	"io"

	"hrsync/internal/jsonstream"
)

// WriteJSON writes the plan to w as json.MarshalIndent(p, prefix, indent)
// would (MarshalJSON's document, indented), with no newline at the end.
// The calls and the new people are encoded a window at a time
// (jsonstream.Writer.Elems, in parallel with more than one processor): a
// first import of a million people never holds its document, nor its
// calls.
func (p *Plan) WriteJSON(w io.Writer, prefix, indent string) error {
	s := jsonstream.New(w, prefix, indent)
	s.Begin('{')
	for _, f := range []struct {
		name  string
		value any
	}{
		{"tenant", p.Tenant}, {"source", p.Source}, {"stats", p.Stats},
		{"changed", orEmpty(p.Changed)}, {"returned", orEmpty(p.Returned)}, {"departed", orEmpty(p.Departed)},
		{"unchanged", p.Unchanged}, {"held", orEmpty(p.Held)}, {"rejections", orEmpty(p.Rejections)},
	} {
		s.Key(f.name)
		s.Value(f.value)
	}
	s.Key("calls")
	s.Begin('[')
	s.Elems(p.CallCount(), func(i int) any { return p.Call(i) })
	s.End(']')
	for _, f := range []struct {
		name  string
		value any
	}{
		{"safeguards", orEmpty(p.Trips)}, {"activeBefore", p.ActiveBefore}, {"lastGoodRows", p.LastGoodRows},
		{"stateFrom", p.StateFrom},
	} {
		s.Key(f.name)
		s.Value(f.value)
	}
	s.Key("new")
	s.Begin('[')
	s.Elems(p.Create.Len(), func(i int) any { return NewPerson{ExternalID: p.Create.externalIDAt(i), Grant: grantOf(p, i)} })
	s.End(']')
	s.End('}')
	return s.Flush()
}

// The lists of a plan are long (a call per hundred new people, a line per
// person): their elements write themselves, member by member, as
// encoding/json writes them (TestPlanJSONAsHeld compares the two).

// StreamJSON implements jsonstream.Streamer.
func (p NewPerson) StreamJSON(s *jsonstream.Writer) { s.Fields(p) }

// StreamJSON implements jsonstream.Streamer.
func (c Change) StreamJSON(s *jsonstream.Writer) { s.Fields(c) }

// StreamJSON implements jsonstream.Streamer.
func (c PlannedCall) StreamJSON(s *jsonstream.Writer) { s.Fields(c) }
