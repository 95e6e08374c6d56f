package people

import (
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
		p.unchangedSample = append(p.unchangedSample, lineID{person.Line, person.ExternalID})
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
	for i, p := range plan.Create.All() {
		g := grantOf(plan, i)
		if skip[p.ExternalID] {
			continue
		}
		out.Added = append(out.Added, reports.Person{ExternalID: p.ExternalID, Email: model.MaskEmail(p.Email), Granted: g})
		out.Granted += g
	}
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
