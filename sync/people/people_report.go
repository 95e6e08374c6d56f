package people

import (
	"encoding/binary"
	"math"
	"runtime"
	"strings"

	"hrsync/internal/reports"
	"hrsync/model"
)

// lineID is a person of the export named by externalId, with the line of
// their row.
type lineID struct {
	line int
	id   string
}

// noteUnchanged counts p as unchanged and names them in the plan's sample
// while it has room.
func (p *Plan) noteUnchanged(person *model.Person) {
	p.Unchanged++
	if len(p.unchangedSample) < reports.MaxListed {
		// The person's strings are the reader's, lent for the call
		// (sources.Handler.AcceptRow).
		p.unchangedSample = append(p.unchangedSample, lineID{person.Line, strings.Clone(person.ExternalID)})
	}
}

// peopleReport says what the plan does to people: after a safeguard stop
// (applied false) what it would have done; applied, the people the
// platform created, less those it refused alone and those whose grant is
// held (waiting names them).
func peopleReport(plan *Plan, refusals []Refusal, waiting map[string]bool) *reports.People {
	skip := make(map[string]bool, len(refusals)+len(waiting))
	for _, r := range refusals {
		skip[r.ExternalID] = true
	}
	for id := range waiting {
		skip[id] = true
	}
	out := &reports.People{AlreadyThereCount: plan.Unchanged}
	var added addedList
	for i, p := range plan.Create.All() {
		if !skip[p.ExternalID] {
			g := grantOf(plan, i)
			added.add(reports.Person{ExternalID: p.ExternalID, Email: model.MaskEmail(p.Email), Granted: g})
			out.Granted += g
		}
	}
	out.Added = reports.ListFunc(added.n, added.all)
	for _, u := range plan.unchangedSample {
		out.AlreadyThere = append(out.AlreadyThere, reports.Person{ExternalID: u.id})
	}
	changed := plan.ChangedPeople()
	for i, c := range plan.Changed {
		person := reports.Person{ExternalID: c.ExternalID, EmailChanged: c.EmailChanged}
		if i < changed.Len() {
			person.Email = model.MaskEmail(changed.At(i).Email)
		}
		out.Changed = append(out.Changed, person)
	}
	returned := plan.ReturnedPeople()
	for i, id := range plan.Returned {
		person := reports.Person{ExternalID: id}
		if i < returned.Len() {
			person.Email = model.MaskEmail(returned.At(i).Email)
		}
		out.CameBack = append(out.CameBack, person)
	}
	for _, id := range plan.Departed {
		out.Left = append(out.Left, reports.Person{ExternalID: id})
	}
	return out
}

// wouldCounts renames the counts of a plan a safeguard stopped: nobody
// was added, changed, brought back or marked departed, so the counts say
// what would have been (wouldAdd, wouldChange, wouldReturn, wouldDepart).
func wouldCounts(counts map[string]int) map[string]int {
	out := make(map[string]int, len(counts))
	for k, v := range counts {
		switch k {
		case "new":
			k = "wouldAdd"
		case "changed":
			k = "wouldChange"
		case "returned":
			k = "wouldReturn"
		case "departed":
			k = "wouldDepart"
		}
		out[k] = v
	}
	return out
}

// addedList holds the people a run added as its reports name them (the
// externalId, the masked e-mail, the amount granted), back to back in
// slabs outside the Go heap (see slabOwner), read in order only: a first
// import's million cost about 35 bytes each, and the plan they came from
// (its people whole, several times that) can go once the run is done.
type addedList struct {
	recordSlabs
	n int
}

// add appends p.
func (l *addedList) add(p reports.Person) {
	var buf [256]byte
	rec := binary.AppendUvarint(buf[:0], uint64(len(p.ExternalID)))
	rec = append(rec, p.ExternalID...)
	rec = binary.AppendUvarint(rec, uint64(len(p.Email)))
	rec = append(rec, p.Email...)
	rec = binary.LittleEndian.AppendUint64(rec, math.Float64bits(p.Granted))
	l.recordSlabs.add(rec)
	l.n++
}

// all yields the people in the order they were added.
func (l *addedList) all(yield func(reports.Person) bool) {
	defer runtime.KeepAlive(l)
	for _, b := range l.slabs {
		for len(b) > 0 {
			var p reports.Person
			n, k := binary.Uvarint(b)
			p.ExternalID, b = string(b[k:k+int(n)]), b[k+int(n):]
			n, k = binary.Uvarint(b)
			p.Email, b = string(b[k:k+int(n)]), b[k+int(n):]
			p.Granted, b = math.Float64frombits(binary.LittleEndian.Uint64(b)), b[8:]
			if !yield(p) {
				return
			}
		}
	}
}
