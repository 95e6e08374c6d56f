package reports

import "hrsync/internal/jsonstream"

// MaxListed bounds the people each list of the HTML report names: the
// rest are in the JSON report beside it.
const MaxListed = 500

// Person is one person a report names: the externalId, the e-mail address
// masked as every message masks it (j***@e***.com), and for a person
// added the amount granted.
type Person struct {
	ExternalID string `json:"externalId"`
	Email      string `json:"email,omitempty"`
	// Granted is what the platform granted a person added.
	Granted float64 `json:"granted,omitempty"`
	// EmailChanged says a changed person's e-mail address changed.
	EmailChanged bool `json:"emailChanged,omitempty"`
}

// People is what became of the people of one export, by what happened to
// them; after a safeguard stop, what would have (nothing was changed).
// The JSON report holds every list whole, except AlreadyThere, which
// names the first MaxListed of AlreadyThereCount people.
type People struct {
	// Added are the people the platform created, with the amount granted:
	// a list read as the report is written, so that a first import's
	// million are never held as a []Person.
	Added PersonList `json:"added,omitzero"`
	// Granted is what the platform granted the people added, in all.
	Granted float64 `json:"granted,omitempty"`
	// AlreadyThere are the people the export lists as hrsync knows them.
	AlreadyThere      []Person `json:"alreadyThere,omitempty"`
	AlreadyThereCount int      `json:"alreadyThereCount,omitempty"`
	// Changed are the people whose details changed.
	Changed []Person `json:"changed,omitempty"`
	// Left are the people the export no longer lists: marked departed.
	Left []Person `json:"left,omitempty"`
	// CameBack are people who had left and are listed again.
	CameBack []Person `json:"cameBack,omitempty"`
}

// StreamJSON writes the people's lists a person at a time
// (jsonstream.Streamer).
func (p People) StreamJSON(s *jsonstream.Writer) { s.Fields(p) }

// Empty tells whether the export did nothing to anyone.
func (p *People) Empty() bool {
	return p == nil || p.Added.Len()+p.AlreadyThereCount+len(p.Changed)+len(p.Left)+len(p.CameBack) == 0
}
