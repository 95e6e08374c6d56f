package people

import (
	"context"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"hrsync/internal/reports"
	"hrsync/model"
	"hrsync/sources"
	"hrsync/sources/csvsrc"
	"hrsync/store"
)

// RowReader is an Export that can read back its own rows by line, as they
// are in the file, for the rejects report beside it. A file export is one;
// a query is not.
type RowReader interface {
	// Rows returns the export's header, delimiter and the values of the
	// records that start on the given lines (a malformed record is missing).
	Rows(ctx context.Context, lines map[int]bool) (csvsrc.Records, error)
}

// reportSet is what the reports of one export are made of, gathered before
// the archive step renders them.
type reportSet struct {
	er       ExportReport
	held     []string
	rows     csvsrc.Records
	override func(archivedAs string) string
	// approveOn says approval from the drop folder is on: the next step of
	// a safeguard stop is the move into approve/.
	approveOn bool
	now       func() time.Time
	// suffixes are those of the files the last render made.
	suffixes []string
}

// gatherReports collects what the reports of an export need beyond its
// report: the externalIds of the tenant's held grants and, when rows were
// rejected, their values read back from the export. A failure to read them
// is logged: the reports are written without them.
func (j *Job) gatherReports(ctx context.Context, export Export, er ExportReport) *reportSet {
	rs := &reportSet{er: er, override: j.opts.OverrideCommand, approveOn: j.opts.ApproveFromDropFolder, now: j.now}
	log := j.log.With(zap.String("run", er.RunID), zap.String("source", er.Source))
	held, err := j.store.ListGrants(ctx, store.GrantFilter{Tenant: j.opts.Tenant, States: []model.GrantState{model.GrantUnknown, model.GrantPending}})
	if err != nil {
		log.Warn("list held grants for the report", zap.Error(err))
	}
	for _, g := range held {
		rs.held = append(rs.held, g.ExternalID)
	}
	slices.Sort(rs.held)
	rs.held = slices.Compact(rs.held)
	rr, ok := export.(RowReader)
	if !ok || len(er.Rejections) == 0 {
		return rs
	}
	lines := make(map[int]bool, len(er.Rejections))
	for _, r := range er.Rejections {
		lines[r.Line] = true
	}
	if rs.rows, err = rr.Rows(ctx, lines); err != nil {
		log.Warn("read the rejected rows back for the rejects report; it is not written", zap.Error(err))
		rs.rows = csvsrc.Records{}
	}
	return rs
}

// render is the archive step's sources.RenderReports: the JSON report, the
// HTML summary and, with rejected rows read back, the rejects CSV.
func (rs *reportSet) render(archivedAs string) ([]sources.ReportFile, error) {
	er := rs.er
	er.ArchivedAs = archivedAs
	er.HeldGrants = rs.held
	var files []sources.ReportFile
	rejectsName := ""
	if rs.rows.Header != nil {
		body, err := reports.RejectsCSV(rs.rows.Header, rejectedRows(er.Rejections, rs.rows.Values), rs.rows.Delimiter)
		if err != nil {
			return nil, err
		}
		files = append(files, sources.ReportBytes(reports.RejectsSuffix, body))
		rejectsName = baseName(archivedAs) + reports.RejectsSuffix
	}
	if er.Outcome == model.OutcomeSafeguard && rs.override != nil && archivedAs != "" {
		// The operator's next step (the JSON report, the last line): the
		// command; the HTML report says it in an HR admin's words.
		er.Next = stopNext(rs.approveOn, archivedAs, rs.override(archivedAs))
	}
	summary := hrSummary(er, rejectsName, baseName(archivedAs)+reports.JSONSuffix, rs.now())
	html, err := reports.HTML(summary)
	if err != nil {
		return nil, err
	}
	files = append(files, sources.ReportBytes(reports.HTMLSuffix, html),
		sources.ReportFile{Suffix: reports.JSONSuffix, Write: er.writeJSON})
	rs.suffixes = rs.suffixes[:0]
	for _, f := range files {
		rs.suffixes = append(rs.suffixes, f.Suffix)
	}
	return files, nil
}

// hrSummary is the HTML report of an export: what happened to its people
// and the HR admin's next step, without a command, a path or a counter.
func hrSummary(er ExportReport, rejectsName, jsonName string, now time.Time) reports.Summary {
	summary := reports.Summary{Tenant: er.Tenant, Source: er.Source, RunID: er.RunID, Outcome: string(er.Outcome),
		Duplicate: er.Duplicate, People: er.People, Held: er.HeldGrants, RejectsFile: rejectsName, JSONFile: jsonName,
		Generated: now}
	if er.People == nil && !er.Duplicate {
		// The export's own name heads the page already.
		summary.Cause = strings.TrimPrefix(er.Cause, "read export "+er.Source+": ")
	}
	for _, t := range er.Safeguards {
		summary.Stops = append(summary.Stops, t.Message)
	}
	for _, r := range er.Rejections {
		summary.Rejections = append(summary.Rejections, reports.Rejection{Line: r.Line, Column: r.Field, Reason: r.Reason})
	}
	if l := er.ArchivedLate; l != nil {
		summary.Late = &reports.Late{SentAt: l.SentAt, Cause: l.Cause}
	}
	summary.Approval = er.Approval.report()
	summary.Next = hrNext(er, rejectsName)
	return summary
}

// hrNext is an HR admin's next step after an export: what to fix and
// where, in words; empty when nothing is to do.
func hrNext(er ExportReport, rejectsName string) string {
	var steps []string
	if n := er.NotArchived; n != nil {
		steps = append(steps, "it was not archived: "+joinNonEmpty(n.Cause, n.Next))
	}
	if l := er.ArchivedLate; l != nil {
		steps = append(steps, "it was archived late because "+l.Cause+"; to keep that from happening again, "+l.Next)
		if er.People == nil {
			return reports.Sentence(steps)
		}
	}
	switch {
	case er.Duplicate:
		return ""
	case er.Outcome == model.OutcomeSafeguard && er.Directory:
		return "Check the changes the identity provider pushed: if they are right, ask your hrsync operator to apply them once " +
			"past the safeguards; if they are not, correct them in the identity provider"
	case er.Outcome == model.OutcomeSafeguard:
		return "Check the export against the HR system. " + stopNextForHR(!er.approveOff) + " If it is not right, drop a corrected export instead."
	case er.People == nil:
		return "Fix the export and drop it into the drop folder again; this one is kept in failed/"
	}
	refused := er.Result != nil && er.Result.Refused > 0
	switch {
	case rejectsName != "":
		steps = append(steps, "fix the rejected rows in "+rejectsName+" (beside this report) and drop that file into the drop folder again")
	case len(er.Rejections) > 0 && refused:
		steps = append(steps, "fix the refused people in the HR system: the next export that lists them sends them again")
	case len(er.Rejections) > 0:
		steps = append(steps, "fix the rejected rows in the HR system; the next export brings them")
	}
	if len(er.HeldGrants) > 0 {
		steps = append(steps, "nothing to do for the people waiting for confirmation: your hrsync operator confirms their grant with the platform")
	}
	return reports.Sentence(steps)
}

// rejectedRows joins the rejections of each line with the row's values, in
// line order, one row per line.
func rejectedRows(rejections []model.Rejection, values map[int][]string) []reports.RejectedRow {
	var out []reports.RejectedRow
	at := map[int]int{}
	for _, r := range rejections {
		i, ok := at[r.Line]
		if !ok {
			i = len(out)
			at[r.Line] = i
			out = append(out, reports.RejectedRow{Line: r.Line, Values: values[r.Line]})
		}
		col := r.Field
		if col == "" {
			col = "(row)"
		}
		out[i].Columns = append(out[i].Columns, col)
		out[i].Reasons = append(out[i].Reasons, r.Reason)
	}
	slices.SortStableFunc(out, func(a, b reports.RejectedRow) int { return a.Line - b.Line })
	return out
}

// names are the names of the reports the last render made, beside an
// export archived as archivedAs.
func (rs *reportSet) names(archivedAs string) []string {
	names := make([]string, 0, len(rs.suffixes))
	for _, s := range rs.suffixes {
		names = append(names, archivedAs+s)
	}
	return names
}

// baseName is the last element of a slash-separated path.
func baseName(p string) string {
	return p[strings.LastIndexByte(p, '/')+1:]
}

// recordReports links the reports written beside an archived export from
// its run record; a failure is logged (the reports are there all the same).
func (j *Job) recordReports(ctx context.Context, er ExportReport) {
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), j.opts.FinishTimeout)
	defer cancel()
	if err := j.store.SetRunReports(fctx, er.RunID, er.Reports); err != nil {
		j.log.Warn("link the reports from the run record", zap.String("run", er.RunID), zap.Error(err))
	}
}
