package people

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"hrsync/internal/reports"
	"hrsync/model"
	"hrsync/sources"
	"hrsync/store"
)

// Approval is how an export an HR admin approved from the drop folder's
// approve/ came past the safeguards: in its report's JSON, and in its
// HTML report (reports.Approval).
type Approval struct {
	// At is when the run took the approved export; By who placed it in
	// approve/, where the backend knows (empty when not).
	At time.Time `json:"approvedAt"`
	By string    `json:"approvedBy,omitempty"`
	// StoppedRun is the run a safeguard stopped, and Stops the
	// safeguards that stopped it.
	StoppedRun string   `json:"stoppedRun"`
	Stops      []string `json:"safeguards,omitempty"`
}

// report is the approval as the HTML report shows it.
func (a *Approval) report() *reports.Approval {
	if a == nil {
		return nil
	}
	return &reports.Approval{At: a.At, By: a.By, StoppedRun: a.StoppedRun, Stops: a.Stops}
}

// who names the approver in a sentence.
func (a *Approval) who() string {
	if a.By == "" {
		return "an HR admin"
	}
	return a.By
}

// Approved tells whether the run took an export an HR admin approved
// past the safeguards.
func (r *Report) Approved() bool {
	for _, e := range r.Exports {
		if e.Approval != nil {
			return true
		}
	}
	return false
}

// approvalOf checks the export an HR admin placed in approve/: the
// approval of its safeguard stop, or nil when no safeguard stopped that
// content (or its approval was used: then the content was processed, and
// the run took it as a duplicate before asking).
func (j *Job) approvalOf(ctx context.Context, a sources.Approved) (*Approval, error) {
	if a.SHA256() == "" {
		return nil, nil
	}
	stop, ok, err := j.store.SafeguardStopByHash(ctx, j.opts.Tenant, a.SHA256())
	if err != nil {
		return nil, fmt.Errorf("look up the safeguard stop: %w", err)
	}
	if !ok || stop.Approved {
		return nil, nil
	}
	return &Approval{At: j.now().UTC(), By: a.ApprovedBy(), StoppedRun: stop.RunID, Stops: stop.Stops}, nil
}

// notApprovable ends the run of a file placed in approve/ that no
// safeguard stopped: nothing of it is read or applied; it goes to failed/
// with a report saying why, and the run asks for attention (no retry
// changes it).
func (j *Job) notApprovable(ctx context.Context, x *exportRun) (ExportReport, error) {
	x.er.Outcome = model.OutcomeAttention
	x.er.Cause = "this file was placed in the approve folder, but no safeguard stopped it, so there was nothing to approve: " +
		"nothing in it was applied, and it was moved to the failed folder"
	x.er.Next = "only an export that a safeguard stopped can be approved, by moving it from the failed folder into the approve folder; " +
		"to send a new export, drop it into the drop folder itself"
	x.log.Warn("a file in approve/ that no safeguard stopped; it goes to failed/ unread")
	return j.finish(ctx, x.export, x.er, store.RunResult{ID: x.er.RunID, Outcome: x.er.Outcome, Counts: x.er.Counts,
		Err: fmt.Errorf("not approvable: %s", x.er.Cause)}, false)
}

// approved notes in the report and the log that the export came past the
// safeguards because an HR admin approved it.
func (x *exportRun) approved(trips []Trip) {
	x.er.Approval = x.approval
	x.er.Safeguards = trips
	x.log.Warn("an HR admin approved this export after a safeguard stop: the safeguards are passed this once",
		zap.String("stoppedRun", x.approval.StoppedRun), zap.Bool("approverKnown", x.approval.By != ""))
}

// approvedCause is the cause of an approved export's run: the approval
// first, then what the run did.
func (x *exportRun) approvedCause(cause string) string {
	if x.approval == nil {
		return cause
	}
	return joinNonEmpty(fmt.Sprintf("approved by %s after a safeguard stop, and taken past the safeguards once", x.approval.who()), cause)
}

// stopNext is the next step of a safeguard stop for the operator (the
// JSON report, the last line): for an export archived in failed/, its move
// into approve/ when approval from the drop folder is on; and the command
// that runs it past the safeguards.
func stopNext(approveOn bool, archivedAs, command string) string {
	switch {
	case archivedAs == "":
		return "once you have checked the export, run it once past the safeguards: " + command
	case !approveOn:
		return "approval from the drop folder is off (safeguards.approveFromDropFolder); once you have checked the export, " +
			"run it once past the safeguards: " + command
	}
	return "once you have checked the export, move it from the drop folder's failed/ into approve/ (the next run takes it " +
		"past the safeguards once), or run it once past the safeguards: " + command
}

// stopNextForHR is the next step of a safeguard stop in the HTML report:
// plain words, no folder path, no command.
func stopNextForHR(approveOn bool) string {
	if !approveOn {
		return "Approval from the drop folder is turned off. Once you have checked the export and it is right, " +
			"ask your hrsync operator to run it once past the safeguards."
	}
	return "Once you have checked the export and it is right, move it from the failed folder into the approve folder " +
		"(both are in the drop folder). The next run takes it past the safeguards, once."
}
