package people

import (
	"hrsync/internal/notify"
	"hrsync/model"
)

// Notify adds to e what a message says of a people run beyond its
// outcome: its files, safeguard stops (with the command that overrides
// the first one, for the configuration at configPath), rejected rows and
// held grants, each list bounded as package notify says.
func (r *Report) Notify(e *notify.Event, configPath string) {
	for _, x := range r.Exports {
		e.Files = append(e.Files, notify.File{Name: x.Source, Outcome: string(x.Outcome), ArchivedAs: x.ArchivedAs, Reports: x.Reports})
		for _, t := range x.Safeguards {
			e.Stops = append(e.Stops, x.Source+": "+t.Message)
		}
		if x.Outcome == model.OutcomeSafeguard && e.Override == "" {
			e.Override = OverrideCommand(configPath, r.Tenant, x.ArchivedAs)
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
	if len(held) > notify.MaxHeld {
		e.MoreHeld = len(held) - notify.MaxHeld
		held = held[:notify.MaxHeld]
	}
	e.Held = held
}
