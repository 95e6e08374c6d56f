package people

import (
	"slices"
	"strings"
	"time"

	"hrsync/internal/notify"
	"hrsync/internal/reports"
	"hrsync/model"
)

// Notify adds to e what a message says of a people run beyond its
// outcome, in the words of the HTML reports: what happened to each file's
// people and the HR admin's next step (never a command or a counter), its
// files, safeguard stops, rejected rows and the people waiting for
// confirmation, each list bounded as package notify says.
func (r *Report) Notify(e *notify.Event) {
	var causes, nexts []string
	for _, x := range r.Exports {
		e.Files = append(e.Files, notify.File{Name: x.Source, Outcome: string(x.Outcome), ArchivedAs: x.ArchivedAs, Reports: x.Reports})
		s := hrSummary(x, rejectsOf(x.Reports), "", time.Time{})
		causes = append(causes, x.Source+": "+reports.Headline(s))
		if s.Next != "" && !slices.Contains(nexts, s.Next) {
			nexts = append(nexts, s.Next)
		}
		for _, t := range x.Safeguards {
			e.Stops = append(e.Stops, x.Source+": "+t.Message)
		}
		for _, rj := range x.Rejections {
			if len(e.Rejections) == notify.MaxRejections {
				e.MoreRejections++
				continue
			}
			e.Rejections = append(e.Rejections, notify.Rejection{File: x.Source, Line: rj.Line, Column: rj.Field, Reason: rj.Reason})
		}
	}
	held := r.HeldExternalIDs
	if len(r.Exports) == 0 && r.Error == "" && len(held) > 0 {
		causes = append(causes, reports.Headline(reports.Summary{Outcome: string(model.OutcomeAttention), People: &reports.People{}, Held: held}))
		nexts = append(nexts, hrNext(ExportReport{People: &reports.People{}, HeldGrants: held}, ""))
	}
	if len(causes) > 0 {
		e.Cause, e.Next = strings.Join(causes, " "), strings.Join(nexts, "; ")
	}
	if len(held) > notify.MaxHeld {
		e.MoreHeld = len(held) - notify.MaxHeld
		held = held[:notify.MaxHeld]
	}
	e.Held = held
}

// rejectsOf is the name of the rejects CSV among an export's reports;
// empty when none.
func rejectsOf(names []string) string {
	for _, n := range names {
		if strings.HasSuffix(n, reports.RejectsSuffix) {
			return baseName(n)
		}
	}
	return ""
}
