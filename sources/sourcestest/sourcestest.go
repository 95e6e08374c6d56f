// Package sourcestest helps tests read whole exports: it keeps what a
// sources.Handler gets as a caller that holds everything would.
package sourcestest

import (
	"slices"

	"hrsync/model"
	"hrsync/sources"
)

// Result is what one read of an export handed over.
type Result struct {
	// People are the accepted rows in row order, less the ones taken back.
	People []model.Person
	// Rejections are in line order; those of one line in the order given.
	Rejections []model.Rejection
	// Retracted are the lines taken back, in the order given.
	Retracted []int
}

// Handler returns a handler that collects into r. Taking back a line that
// was not accepted, or twice, panics: no source may do that.
func (r *Result) Handler() sources.Handler {
	return sources.Handler{
		Accept: func(p model.Person) error {
			r.People = append(r.People, p)
			return nil
		},
		Reject: func(x model.Rejection) error {
			at := len(r.Rejections)
			for at > 0 && r.Rejections[at-1].Line > x.Line {
				at--
			}
			r.Rejections = slices.Insert(r.Rejections, at, x)
			return nil
		},
		Retract: func(line int) error {
			i := slices.IndexFunc(r.People, func(p model.Person) bool { return p.Line == line })
			if i < 0 {
				panic("sourcestest: a source took back a row it had not accepted")
			}
			r.People = slices.Delete(r.People, i, i+1)
			r.Retracted = append(r.Retracted, line)
			return nil
		},
	}
}
