package people

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"

	"hrsync/model"
	"hrsync/store"
)

// LateArchive says, in the report of an export, that the run which sent
// it could not archive it, and why; a later run archived it with this
// report.
type LateArchive struct {
	// SentAt is when the sending run tried to archive the export.
	SentAt time.Time `json:"sentAt"`
	// Cause is why the archive failed and Next what prevents it, in plain
	// words (no path, no server address).
	Cause string `json:"cause"`
	Next  string `json:"next"`
	// ByRun is the id of the run that archived the export late.
	ByRun string `json:"byRun,omitempty"`
}

// archiveTrouble says in plain words why an archive failed (the
// connection to the drop folder's server lost, permission denied, the disk
// full) and what prevents it.
func archiveTrouble(err error) (cause, next string) {
	text := strings.ToLower(err.Error())
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(text, w) {
				return true
			}
		}
		return false
	}
	var netErr net.Error
	switch {
	case errors.Is(err, fs.ErrPermission) || has("permission denied", "access denied", "accessdenied"):
		return "hrsync was not allowed to write into the drop folder's processed/ or failed/ (permission denied)",
			"give hrsync's account the right to write into the drop folder's processed/ and failed/"
	case errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || has("no space left", "quota", "disk full"):
		return "the drop folder's disk was full", "free space on the drop folder's disk, or raise its quota"
	case errors.As(err, &netErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		has("connection lost", "connection refused", "connection reset", "broken pipe", "handshake failed", "closed network connection", "eof"):
		return "the connection to the drop folder's server was lost",
			"check that the drop folder's server is up and that hrsync can reach it"
	}
	return "the drop folder refused to move it", "check that the drop folder and its processed/ and failed/ are writable"
}

// keepForLateArchive keeps, with the run record, the report of an export
// the run applied but could not archive, so that the next run archives it
// with this report rather than as content processed before.
func (j *Job) keepForLateArchive(ctx context.Context, er ExportReport, held []string, cause, next string) {
	er.HeldGrants = held
	er.ArchivedLate = &LateArchive{SentAt: j.now().UTC(), Cause: cause, Next: next}
	body, err := json.Marshal(er)
	if err == nil {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), j.opts.FinishTimeout)
		defer cancel()
		err = j.store.KeepUnarchivedReport(fctx, er.RunID, body)
	}
	if err != nil {
		j.log.Error("keep the report for the late archive; the next run archives the export as processed before",
			zap.String("run", er.RunID), zap.Error(err))
	}
}

// sentReport returns the report the run that sent an export kept when it
// could not archive it; ok is false when none waits.
func (j *Job) sentReport(ctx context.Context, x *exportRun, sentBy string) (sent ExportReport, ok bool) {
	kept, ok, err := j.store.UnarchivedReport(ctx, sentBy)
	if err == nil && ok {
		err = json.Unmarshal(kept, &sent)
	}
	if err != nil {
		x.log.Warn("read the report kept for the late archive; archived as processed before", zap.Error(err))
		return ExportReport{}, false
	}
	if ok && sent.ArchivedLate == nil {
		sent.ArchivedLate = &LateArchive{}
	}
	return sent, ok
}

// archiveLate archives an export that the run which sent it could not
// archive, with that run's report (its people, counts and grants), marked
// archived late; nothing is sent again. This run's record says so and
// links the reports, as does the sending run's.
func (j *Job) archiveLate(ctx context.Context, x *exportRun, sent ExportReport) (ExportReport, error) {
	sent.ArchivedLate.ByRun = x.er.RunID
	x.er.Counts, x.er.ArchivedLate = map[string]int{"archivedLate": 1}, sent.ArchivedLate
	// Grants held from earlier runs make it need attention, as any
	// export's run (withHeld).
	v := withHeld(verdict{outcome: model.OutcomeOK, cause: fmt.Sprintf(
		"archived late, with the report of run %s, which sent it and could not archive it (%s); nothing was sent again",
		sent.RunID, sent.ArchivedLate.Cause)}, j.heldNow(ctx, x.log))
	x.er.Outcome, x.er.Cause, x.er.Next = v.outcome, v.cause, v.next
	x.log.Info("archiving an export late, with the report of the run that sent it", zap.String("sentBy", sent.RunID))
	res := store.RunResult{ID: x.er.RunID, Outcome: v.outcome, Counts: x.er.Counts, Err: v.err()}
	if err := j.commit(ctx, res); err != nil {
		return x.er, err
	}
	gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), j.opts.FinishTimeout)
	rs := j.gatherReports(gctx, x.export, sent)
	cancel()
	rs.held = sent.HeldGrants
	dest, err := x.export.Archive(true, rs.render)
	if err != nil {
		return j.notArchived(ctx, x.er, res, err, nil), nil
	}
	x.er.ArchivedAs = dest
	if dest != "" {
		x.er.Reports = rs.names(dest)
		j.recordReports(ctx, x.er)
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), j.opts.FinishTimeout)
		defer cancel()
		if err := j.store.ArchivedLate(fctx, sent.RunID, x.er.Reports); err != nil {
			x.log.Warn("record the late archive in the sending run's record", zap.Error(err))
		}
	}
	return x.er, nil
}
