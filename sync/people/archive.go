package people

import (
	"context"
	"errors"
	"io/fs"

	"go.uber.org/zap"

	"hrsync/model"
	"hrsync/sources"
	"hrsync/store"
)

// finish commits the run's outcome, then archives the export; the report
// it returns says where the export went. An export that could not be
// archived (it changed after it was read, it is gone, or the move failed)
// stays where it is, and the run's outcome and record say so
// (notArchived).
func (j *Job) finish(ctx context.Context, export Export, er ExportReport, res store.RunResult, processed bool) (ExportReport, error) {
	if err := j.commit(ctx, res); err != nil {
		return er, err
	}
	// The outcome is committed: the reports are written even when the run
	// is being stopped, within the finish timeout.
	gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), j.opts.FinishTimeout)
	rs := j.gatherReports(gctx, export, er)
	cancel()
	dest, err := export.Archive(processed, rs.render)
	if err != nil {
		er = j.notArchived(ctx, er, res, err, rs)
	} else {
		er.ArchivedAs, er.HeldGrants = dest, rs.held
		if dest != "" {
			er.Reports = rs.names(dest)
			j.recordReports(ctx, er)
		}
	}
	if res.Err != nil && res.Outcome == model.OutcomeFailed {
		return er, res.Err
	}
	return er, nil
}

// notArchived completes the report and the committed run record of an
// export Archive left in place. Changed after it was read (a row appended
// while the run was in flight): nothing is lost, the next run reads the
// new content whole (a new hash; the rows already applied are unchanged
// against the state), and the run needs attention so that slow writers are
// noticed. Gone: the content read was applied; the outcome stands. Any
// other failure: the run needs attention, its next step names the cause
// (archiveTrouble), and the next run archives it with this run's report
// (rs, kept in the run record) when its hash is recorded as processed, or
// reads it again.
func (j *Job) notArchived(ctx context.Context, er ExportReport, res store.RunResult, aerr error, rs *reportSet) ExportReport {
	log := j.log.With(zap.String("run", er.RunID), zap.String("source", er.Source))
	var note, next string
	outcome := er.Outcome
	switch {
	case errors.Is(aerr, sources.ErrChanged):
		note = "it changed after it was read, so it was not archived: it stays in the drop folder, and the next run reads it whole again"
		next = "nothing is lost: the next run applies what was added; if exports are still being written when hrsync reads them, " +
			"raise the drop folder's stableFor or use done markers"
		log.Warn("the export changed after it was read; it stays for the next run")
		er.NotArchived = &LateArchive{Cause: "it changed after it was read, so it stays in the drop folder and the next run reads it again",
			Next: "nothing is lost; upload an export under a temporary name (ending in .part) and rename it once it is complete"}
	case errors.Is(aerr, fs.ErrNotExist):
		note = "it was removed from the drop folder before it could be archived"
		er.NotArchived = &LateArchive{Cause: "it was removed from the drop folder before it could be archived"}
		log.Warn("the export was removed from the drop folder before it could be archived")
	default:
		cause, fix := archiveTrouble(aerr)
		note = "it could not be archived: " + cause + " (" + aerr.Error() + "): it stays in the drop folder, and the next run tries again"
		next = fix
		er.NotArchived = &LateArchive{Cause: cause + "; it stays in the drop folder", Next: fix}
		log.Error("archive the export", zap.Error(aerr))
		if rs != nil && res.SourceFile != nil && res.SourceFile.Outcome == store.SourceProcessed {
			note = "it could not be archived: " + cause + " (" + aerr.Error() + "): it stays in the drop folder, " +
				"and the next run archives it with this run's report"
			j.keepForLateArchive(ctx, rs.er, rs.held, cause, fix)
			er.NotArchived.Cause = cause + "; the next run archives it with this report"
		}
	}
	if next != "" && outcome == model.OutcomeOK {
		outcome = model.OutcomeAttention
	}
	er.Outcome, er.Cause, er.Next = outcome, joinNonEmpty(er.Cause, note), joinNonEmpty(er.Next, next)
	errText := note
	if res.Err != nil {
		errText = res.Err.Error() + "; " + note
	}
	if er.Error != "" {
		er.Error = joinNonEmpty(er.Error, note)
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), j.opts.FinishTimeout)
	defer cancel()
	if err := j.store.AmendRun(fctx, res.ID, outcome, errText); err != nil {
		log.Error("record that the export was not archived", zap.Error(err))
	}
	return er
}
