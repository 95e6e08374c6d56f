package people

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"hrsync/apiclient"
	"hrsync/internal/jsonstream"
	"hrsync/internal/reports"
	"hrsync/internal/runner"
	"hrsync/model"
	"hrsync/sources"
	"hrsync/store"
)

// Export is one export waiting to be processed: a file of a drop folder or
// the result of a SQL query (see sources.Export).
type Export = sources.Export

// Feed lists the exports ready to process, oldest first.
type Feed = func(ctx context.Context) ([]Export, error)

// RunFlags are the per-run choices of an operator.
type RunFlags struct {
	// OverrideSafeguards lets a run go on although a safeguard trips. It
	// is a deliberate per-run flag, never a default.
	OverrideSafeguards bool
}

// ErrLocked says another run of the same job and tenant holds the lock.
var ErrLocked = model.ErrLocked

// ErrUnusable marks an error of Export.Read that makes the export unusable
// as a whole, so that no later run can read it either: a file that cannot
// be read (no permission, an I/O error), an empty file, a link. Such an
// export goes to failed/ with its report, like one missing a column, and
// the other exports of the run go on.
var ErrUnusable = sources.ErrUnusable

// ExportReport is what became of one export: the report written beside an
// archived file, and a part of the run's summary.
type ExportReport struct {
	RunID      string            `json:"runId"`
	Tenant     string            `json:"tenant"`
	Source     string            `json:"source"`
	Outcome    model.RunOutcome  `json:"outcome"`
	Duplicate  bool              `json:"duplicate,omitempty"`
	Counts     map[string]int    `json:"counts"`
	Safeguards []Trip            `json:"safeguards,omitempty"`
	Rejections []model.Rejection `json:"rejections,omitempty"`
	// People says what became of the export's people by name; after a
	// safeguard stop, what would have (nothing was changed).
	People *reports.People `json:"people,omitempty"`
	Result *Result         `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
	// Cause says in one phrase why the export ended as it did, and Next
	// what the operator does about it (empty when nothing).
	Cause string `json:"cause"`
	Next  string `json:"next,omitempty"`
	// Directory says the export is a snapshot of the directory the
	// tenant's identity provider pushes over SCIM (sources.Pushed): nothing
	// is archived, and a safeguard stop is lifted only by the operator's
	// run with --override-safeguards.
	Directory bool `json:"directory,omitempty"`
	// ArchivedAs is where the export was archived, relative to its drop
	// folder ("failed/employees.csv"); empty while it stays in place and
	// for a query.
	ArchivedAs string `json:"archivedAs,omitempty"`
	// HeldGrants are the externalIds of the tenant's people whose grant
	// waits for an operator when the export was archived (in the reports
	// beside it).
	HeldGrants []string `json:"heldExternalIds,omitempty"`
	// Reports names the reports written beside the archived export,
	// relative to its drop folder (in the run's summary, not beside it).
	Reports []string `json:"reports,omitempty"`
	// ArchivedLate says the run that sent the export could not archive it:
	// a later run archived it with this report.
	ArchivedLate *LateArchive `json:"archivedLate,omitempty"`
	// NotArchived says, in plain words, why the export could not be
	// archived (it stays in the drop folder) and what prevents it.
	NotArchived *LateArchive `json:"notArchived,omitempty"`
	// Approval, when not nil, says that an HR admin approved the export
	// from the drop folder's approve/ after a safeguard stop.
	Approval *Approval `json:"approval,omitempty"`
	// approveOff says approval from the drop folder is off for the tenant:
	// the HR admin's next step after a stop goes through the operator.
	approveOff bool
}

// StreamJSON writes the report a member at a time (jsonstream.Streamer):
// the people it names go out one by one.
func (er ExportReport) StreamJSON(s *jsonstream.Writer) { s.Fields(er) }

// writeJSON writes the JSON report beside an archived export: the report
// indented as json.MarshalIndent(er, "", "  ") would, and a newline, made
// as it is written.
func (er ExportReport) writeJSON(w io.Writer) error {
	if err := jsonstream.Encode(w, er, "", "  "); err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	return nil
}

// Report is what one RunOnce did.
type Report struct {
	Tenant string `json:"tenant"`
	// RunID is the run recorded for a cycle that processed no export
	// (none was ready, or the source could not be read); each export
	// processed has its own run (ExportReport.RunID).
	RunID string `json:"runId,omitempty"`
	// HeldAtStart counts the grants an interrupted run left pending, now held.
	HeldAtStart int `json:"heldAtStart"`
	// Exports lists each export processed, in order.
	Exports []ExportReport `json:"exports"`
	// HeldGrants counts the grants waiting for an operator after the run,
	// and HeldExternalIDs names their people.
	HeldGrants      int      `json:"heldGrants"`
	HeldExternalIDs []string `json:"heldExternalIds,omitempty"`
	// Error is why the exports could not be listed (the drop folder or the
	// SQL source could not be read), and Next what to do about it.
	Error string `json:"error,omitempty"`
	Next  string `json:"next,omitempty"`
}

// StreamJSON writes the report a member at a time (jsonstream.Streamer),
// each export's report streaming.
func (r Report) StreamJSON(s *jsonstream.Writer) { s.Fields(r) }

// Outcome is the run's overall outcome: the worst of its exports'; with held
// grants, at least attention.
func (r *Report) Outcome() model.RunOutcome {
	rank := map[model.RunOutcome]int{model.OutcomeOK: 0, model.OutcomeAttention: 1, model.OutcomeInterrupted: 2,
		model.OutcomeSafeguard: 3, model.OutcomeFailed: 4}
	worst := model.OutcomeOK
	if r.Error != "" {
		return model.OutcomeFailed
	}
	for _, e := range r.Exports {
		if rank[e.Outcome] > rank[worst] {
			worst = e.Outcome
		}
	}
	if worst == model.OutcomeOK && r.HeldGrants > 0 {
		worst = model.OutcomeAttention
	}
	return worst
}

// RunOnce runs one cycle of the people sync: under the tenant's lock, it
// holds the grants an interrupted run left pending, then processes every
// ready export in order. It returns ErrLocked at once when another run holds
// the lock.
func (j *Job) RunOnce(ctx context.Context, feed Feed, flags RunFlags) (*Report, error) {
	release, err := runner.LockJob(ctx, j.store, model.JobPeople, j.opts.Tenant, j.log)
	if err != nil {
		return nil, err
	}
	defer release()

	// The plans of this run record where their state came from, for the
	// snapshot's refresh at the end.
	var loads stateLoads
	rep := &Report{Tenant: j.opts.Tenant, Exports: []ExportReport{}}
	if rep.HeldAtStart, err = j.sender.HoldInterrupted(ctx); err != nil {
		return rep, fmt.Errorf("hold interrupted grants: %w", err)
	}
	if rep.HeldAtStart > 0 {
		j.log.Warn("an interrupted run left grants whose outcome is unknown; they are held for an operator",
			zap.Int("grants", rep.HeldAtStart))
	}
	exports, err := feed(ctx)
	if err != nil {
		return rep, j.failSource(ctx, rep, err)
	}
	var firstErr error
	// The runs of the cycle's exports share its id: status shows the
	// worst of them, the outcome the cycle ended in.
	cycle := uuid.NewString()
	for _, export := range exports {
		if ctx.Err() != nil {
			break
		}
		er, err := j.processExport(ctx, cycle, export, flags, &loads)
		rep.Exports = append(rep.Exports, er)
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	held, err := j.store.ListGrants(ctx, store.GrantFilter{Tenant: j.opts.Tenant, States: heldStates()})
	if err != nil && firstErr == nil {
		firstErr = fmt.Errorf("count held grants: %w", err)
	}
	rep.HeldGrants = len(held)
	for _, g := range held {
		rep.HeldExternalIDs = append(rep.HeldExternalIDs, g.ExternalID)
	}
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	if firstErr == nil && len(rep.Exports) == 0 {
		firstErr = j.recordIdle(ctx, rep)
	}
	if ctx.Err() == nil {
		if loads.bad != nil {
			j.log.Warn("the stored state snapshot could not be used; the plan scanned the state, and the snapshot is rewritten", zap.Error(loads.bad))
		}
		j.refreshSnapshot(ctx, &loads)
	}
	return rep, firstErr
}

// refreshSnapshot rewrites the tenant's state snapshot when it is missing
// or stale (the run, or anyone, changed the people since it was built), or
// when a plan of the run could not use it (loads.scanned). The state a plan
// of the run scanned is saved as it is when the people have not changed
// since (the store checks the version); otherwise the state is scanned and
// saved with the version the scan saw (the store refuses it if the state
// moved again meanwhile). A run that changed nothing and found a valid
// snapshot writes nothing. It runs under the job's lock, once per RunOnce;
// a failure is logged and leaves the run's outcome as it is.
func (j *Job) refreshSnapshot(ctx context.Context, loads *stateLoads) {
	if !loads.scanned {
		valid, err := j.store.PeopleSnapshotValid(ctx, j.opts.Tenant)
		if err != nil {
			j.log.Warn("check the state snapshot; not refreshed", zap.Error(err))
			return
		}
		if valid {
			return
		}
	}
	if s := loads.state; s != nil {
		loads.state = nil
		if saved, err := j.saveSnapshot(ctx, s); saved || err != nil {
			return
		}
	}
	s, err := scanState(ctx, j.store, j.opts.Tenant)
	if err != nil {
		j.log.Warn("refresh the state snapshot: scan failed; plans scan until a run saves one", zap.Error(err))
		return
	}
	if saved, err := j.saveSnapshot(ctx, s); !saved && err == nil {
		j.log.Info("state snapshot not saved: the people changed while it was built", zap.Int64("version", s.version))
	}
}

// saveSnapshot saves s as the tenant's snapshot at the version s was read
// at. saved is false when the people changed since; a failure is logged
// and returned.
func (j *Job) saveSnapshot(ctx context.Context, s *stateIndex) (saved bool, err error) {
	saved, err = j.store.SavePeopleSnapshot(ctx, j.opts.Tenant, s.version, s.snapshotParts(snapshotPartSize))
	switch {
	case err != nil:
		j.log.Warn("refresh the state snapshot: save failed; plans scan until a run saves one", zap.Error(err))
	case saved:
		j.log.Debug("state snapshot saved", zap.Int64("version", s.version), zap.Int("people", len(s.people)))
	}
	return saved, err
}

// processExport plans and applies one export and commits its outcome, then
// archives it; its run belongs to cycle.
func (j *Job) processExport(ctx context.Context, cycle string, export Export, flags RunFlags, loads *stateLoads) (ExportReport, error) {
	runID := uuid.NewString()
	x := &exportRun{tenant: j.opts.Tenant, export: export,
		log: j.log.With(zap.String("run", runID), zap.String("source", export.Name())),
		er: ExportReport{RunID: runID, Tenant: j.opts.Tenant, Source: export.Name(), Counts: map[string]int{},
			Directory: sources.IsPushed(export), approveOff: !j.opts.ApproveFromDropFolder}}
	// The API client's lines of this run carry its id too.
	ctx = apiclient.WithLogFields(ctx, zap.String("run", runID), zap.String("tenant", j.opts.Tenant))
	if err := j.store.StartRun(ctx, store.Run{ID: runID, Job: model.JobPeople, Tenant: j.opts.Tenant, Cycle: cycle}); err != nil {
		x.er.Outcome, x.er.Error = model.OutcomeFailed, err.Error()
		return x.er, fmt.Errorf("record run start: %w", err)
	}
	var duplicate bool
	var firstRun string
	var err error
	if sha := export.SHA256(); sha != "" {
		prev, seen, err := j.store.SourceFileByHash(ctx, j.opts.Tenant, sha)
		if err != nil {
			return j.fail(ctx, x.log, x.er, nil, fmt.Errorf("look up file hash: %w", err))
		}
		duplicate, firstRun = seen && prev.Outcome == store.SourceProcessed, prev.RunID
	}
	if duplicate {
		if sent, ok := j.sentReport(ctx, x, firstRun); ok {
			return j.archiveLate(ctx, x, sent)
		}
	}

	if a, ok := export.(sources.Approved); ok && !duplicate {
		if x.approval, err = j.approvalOf(ctx, a); err != nil {
			return j.fail(ctx, x.log, x.er, nil, err)
		}
		if x.approval == nil {
			return j.notApprovable(ctx, x)
		}
	}
	plan, err := j.buildPlan(ctx, export, true)
	if err == nil {
		loads.note(plan)
	}
	if duplicate {
		var done bool
		if plan, done, err = j.duplicateExport(ctx, x, plan, err, firstRun); done {
			return x.er, err
		}
	}
	if err != nil {
		return j.planFailed(ctx, x, err)
	}
	x.er.Counts = plan.Summary()
	x.er.Rejections = plan.Rejections
	switch {
	case x.approval != nil:
		x.approved(plan.Trips)
	case len(plan.Trips) > 0:
		if !flags.OverrideSafeguards {
			return j.safeguardStop(ctx, x, plan)
		}
		x.er.Safeguards = plan.Trips
		x.log.Warn("safeguards overridden for this run", zap.Any("safeguards", plan.Trips))
	}
	return j.applyExport(ctx, x, plan)
}

// exportRun is one export's run in progress: its report and its log.
type exportRun struct {
	tenant string
	export Export
	er     ExportReport
	log    *zap.Logger
	// approval, when not nil, takes an export an HR admin approved from
	// approve/ past the safeguards; the run that records its outcome uses
	// it (store.RunResult.Approval).
	approval *Approval
}

// sourceFile is the record of the export's file with the given outcome;
// nil for a query, or for content processed before (a duplicate).
func (x *exportRun) sourceFile(outcome store.SourceOutcome, st sources.Stats) *store.SourceFile {
	if x.export.SHA256() == "" || x.er.Duplicate {
		return nil
	}
	return &store.SourceFile{Tenant: x.tenant, SHA256: x.export.SHA256(), Name: x.export.Name(),
		Size: x.export.Size(), Rows: st.Rows, Rejected: st.Rejected, Outcome: outcome}
}

// duplicateExport handles content processed before: it is not processed
// again, except for people of it whose creation still waits (an operator
// released their grant): only those are sent. done tells that the export
// was archived without a change (the report is in x.er, err the archive's).
func (j *Job) duplicateExport(ctx context.Context, x *exportRun, plan *Plan, planErr error, firstRun string) (_ *Plan, done bool, err error) {
	if planErr == nil {
		plan.resendsOnly()
		planErr = j.dropRefused(ctx, plan)
	}
	if planErr != nil || plan.Create.Len() == 0 {
		x.er.Duplicate = true
		x.er.Counts = map[string]int{"duplicate": 1}
		cause := "already processed (same content); archived without a change"
		msg := "file already processed (same content); archived without a change"
		if x.er.Directory {
			cause = "the directory has not changed since it was last applied; nothing to do"
			msg = cause
		}
		v := withHeld(verdict{outcome: model.OutcomeOK, cause: cause}, j.heldNow(ctx, x.log))
		x.er.Outcome, x.er.Cause, x.er.Next = v.outcome, v.cause, v.next
		x.log.Info(msg, zap.String("firstRun", firstRun))
		x.er, err = j.finish(ctx, x.export, x.er, store.RunResult{ID: x.er.RunID, Outcome: v.outcome, Counts: x.er.Counts,
			Err: v.err()}, true)
		return plan, true, err
	}
	x.er.Duplicate = true
	x.log.Info("file already processed (same content); sending only the people still waiting to be created",
		zap.Int("people", plan.Create.Len()), zap.String("firstRun", firstRun))
	return plan, false, nil
}

// planFailed ends a run whose plan could not be built: a file that changed
// while read stays for the next run; an unusable file goes to failed/ with
// its report; any other error fails the run and leaves the export in place.
func (j *Job) planFailed(ctx context.Context, x *exportRun, err error) (ExportReport, error) {
	if errors.Is(err, sources.ErrChanged) {
		return j.changedWhileRead(ctx, x.log, x.er)
	}
	if sources.IsFileError(err) || errors.Is(err, ErrUnusable) {
		x.log.Error("the export cannot be used; it goes to failed/", zap.Error(err))
		// A link is never followed: no retry changes that, so its run asks
		// for attention rather than failing (a CronJob retries a failure).
		outcome := model.OutcomeFailed
		if errors.Is(err, sources.ErrLinkEntry) {
			outcome = model.OutcomeAttention
		}
		x.er.Outcome, x.er.Error = outcome, err.Error()
		x.er.Cause, x.er.Next = err.Error(), "fix the export and drop it again; it is in the drop folder's failed/"
		return j.finish(ctx, x.export, x.er, store.RunResult{ID: x.er.RunID, Outcome: outcome, Err: err,
			SourceFile: x.sourceFile(store.SourceFailed, sources.Stats{})}, false)
	}
	return j.fail(ctx, x.log, x.er, nil, err)
}

// safeguardStop ends a run a safeguard stopped before any call: the export
// goes to failed/ with its report.
func (j *Job) safeguardStop(ctx context.Context, x *exportRun, plan *Plan) (ExportReport, error) {
	x.er.Safeguards = plan.Trips
	x.er.Outcome = model.OutcomeSafeguard
	x.er.Counts = wouldCounts(x.er.Counts)
	x.er.People = peopleReport(plan, nil, nil)
	err := fmt.Errorf("safeguard: %s", plan.Trips[0].Message)
	x.er.Error = err.Error()
	x.er.Cause = fmt.Sprintf("a safeguard stopped the run before any call: %s", tripMessages(plan.Trips))
	x.er.Next = "check the export; if it is right, run it once with --override-safeguards"
	switch {
	case x.er.Directory:
		x.er.Next = "check the changes the identity provider pushed (a mass deactivation?); if they are right, run the people job once with --override-safeguards"
	case j.opts.ApproveFromDropFolder && x.export.SHA256() != "":
		x.er.Next = "check the export; if it is right, move it from the drop folder's failed/ into approve/: the next run takes it past the safeguards once"
	}
	x.log.Warn("a safeguard stopped the run before any call", zap.Any("safeguards", plan.Trips))
	return j.finish(ctx, x.export, x.er, store.RunResult{ID: x.er.RunID, Outcome: model.OutcomeSafeguard, Err: errors.New(x.er.Cause),
		Counts: x.er.Counts, Rejections: plan.Rejections, SourceFile: x.sourceFile(store.SourceFailed, plan.Stats),
		Stops: tripTexts(plan.Trips)}, false)
}

// applyExport applies the plan, judges the outcome (judgeApply) and
// commits it; the export is archived unless the platform refused the run or
// some calls were certainly not processed (the next run reads it again).
func (j *Job) applyExport(ctx context.Context, x *exportRun, plan *Plan) (ExportReport, error) {
	res, err := j.Apply(ctx, x.er.RunID, plan)
	x.er.Result = res
	if res != nil {
		for k, v := range map[string]int{"created": res.Applied, "notApplied": res.NotApplied, "unknown": res.Unknown,
			"resent": res.Resent, "calls": res.Calls, "skipped": res.Skipped, "refused": res.Refused} {
			x.er.Counts[k] = v
		}
		// The people the platform refused on their own are rejected rows
		// of the export, with the platform's reason.
		x.er.Rejections = withRefusals(plan, res.Refusals)
	}
	if err == nil && res != nil {
		waiting, werr := j.blockedPeople(ctx)
		if werr != nil {
			x.log.Warn("list held grants for the report; the people added are listed without that check", zap.Error(werr))
		}
		x.er.People = peopleReport(plan, res.Refusals, waiting)
		if x.er.Duplicate {
			// Content processed before: only its people still waiting were sent.
			x.er.People.AlreadyThere, x.er.People.AlreadyThereCount = nil, 0
		}
	}
	if err != nil {
		// The file stays where it is: the next run picks it up again and,
		// from the committed state, reaches the same end.
		return j.fail(ctx, x.log, x.er, x.er.Rejections, err)
	}
	v := judgeApply(plan, res, j.heldNow(ctx, x.log))
	x.er.Outcome, x.er.Cause, x.er.Next = v.outcome, x.approvedCause(v.cause), v.next
	rows := plan.Stats.Rows
	result := store.RunResult{ID: x.er.RunID, Outcome: x.er.Outcome, Counts: x.er.Counts,
		Rejections: x.er.Rejections, SourceFile: x.sourceFile(store.SourceProcessed, plan.Stats), SourceRows: &rows,
		Corrections: plan.Stats.Corrections, Err: v.err()}
	if x.approval != nil && result.SourceFile != nil {
		result.Approval = &store.Approval{By: x.approval.By}
	}
	switch {
	case v.outcome == model.OutcomeFailed:
		// Nothing the platform refused is lost: the export stays in place,
		// unrecorded, and the next run sends the people again.
		x.er.Error = v.cause
		x.log.Error("people sync failed at the platform", zap.String("cause", v.cause), zap.Any("counts", x.er.Counts))
		result.SourceFile, result.SourceRows, result.Approval = nil, nil, nil
		return x.er, j.commit(ctx, result)
	case res.NotApplied > 0:
		// Some calls were certainly not processed (rate limited, refused
		// as a whole): the export stays in place, unrecorded, so the next
		// run sends them. The people refused on their own are not among
		// them: they have their outcome.
		x.log.Warn("some people were not created; the export stays for the next run", zap.Int("people", res.NotApplied))
		result.SourceFile, result.Approval = nil, nil
		return x.er, j.commit(ctx, result)
	}
	x.log.Info("people sync done", zap.Any("counts", x.er.Counts))
	return j.finish(ctx, x.export, x.er, result, true)
}

// withRefusals returns the plan's rejections followed by the people the
// platform refused on their own, as rejected rows of the export, in line
// order.
func withRefusals(plan *Plan, refusals []Refusal) []model.Rejection {
	if len(refusals) == 0 {
		return plan.Rejections
	}
	out := make([]model.Rejection, 0, len(plan.Rejections)+len(refusals))
	out = append(out, plan.Rejections...)
	for _, r := range refusals {
		out = append(out, r.Rejection(plan.Source))
	}
	slices.SortStableFunc(out, func(a, b model.Rejection) int { return cmp.Compare(a.Line, b.Line) })
	return out
}

// dropRefused takes out of a re-dropped file's plan the people the platform
// refused on their own when the file was processed: their grant is not
// applied, like a grant an operator released, but the same content would
// be refused the same way. An export with other content sends them again.
func (j *Job) dropRefused(ctx context.Context, plan *Plan) error {
	var err error
	plan.Create.Filter(func(p model.Person, _ sources.Hashes) bool {
		if err != nil {
			return false
		}
		var refused bool
		refused, err = j.refusedAlone(ctx, p.ExternalID)
		return err == nil && !refused
	})
	return err
}

// refusedAlone tells whether the person's initial grant is not applied
// because the platform refused them alone (see splittable).
func (j *Job) refusedAlone(ctx context.Context, externalID string) (bool, error) {
	refused, err := j.sender.GrantRefusedAlone(ctx, model.GrantKey(j.opts.Tenant, externalID, j.opts.GrantReason, "1"))
	if err != nil {
		return false, fmt.Errorf("initial grant of %s: %w", externalID, err)
	}
	return refused, nil
}

// failSource records a failed run for a source that could not be read
// (a drop folder missing or unreadable, a SQL source down): nothing was
// read, nothing was sent.
func (j *Job) failSource(ctx context.Context, rep *Report, err error) error {
	err = fmt.Errorf("read the source: %w", err)
	rep.Error, rep.Next = err.Error(), "check the tenant's source (drop folder or SQL query) and its permissions"
	runID := uuid.NewString()
	rep.RunID = runID
	j.log.Error("people sync failed: the source could not be read", zap.String("run", runID), zap.Error(err))
	if serr := j.store.StartRun(ctx, store.Run{ID: runID, Job: model.JobPeople, Tenant: j.opts.Tenant}); serr != nil {
		return errors.Join(err, fmt.Errorf("record run start: %w", serr))
	}
	outcome := runner.CutShort(ctx, model.OutcomeFailed)
	if outcome == model.OutcomeInterrupted {
		err = runner.Cut(err)
	}
	if cerr := j.commit(ctx, store.RunResult{ID: runID, Outcome: outcome, Err: err}); cerr != nil {
		return errors.Join(err, cerr)
	}
	return err
}

// commit records the run's outcome.
func (j *Job) commit(ctx context.Context, res store.RunResult) error {
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), j.opts.FinishTimeout)
	defer cancel()
	if err := j.store.FinishRun(fctx, res); err != nil {
		return fmt.Errorf("record run outcome: %w", err)
	}
	return nil
}

// fail records a failed run whose export stays in place for the next run.
// A run that a stop of the process cut short is recorded as interrupted.
func (j *Job) fail(ctx context.Context, log *zap.Logger, er ExportReport, rejections []model.Rejection, err error) (ExportReport, error) {
	er.Outcome, er.Error = model.OutcomeFailed, err.Error()
	er.Cause, er.Next = err.Error(), "see the logs; "+stays
	if er.Outcome = runner.CutShort(ctx, er.Outcome); er.Outcome == model.OutcomeInterrupted {
		log.Warn("people sync cut short: the process is stopping", zap.NamedError("cause", err))
		err = runner.Cut(err)
		er.Error, er.Cause, er.Next = err.Error(), err.Error(), "nothing to do; "+stays
	} else {
		log.Error("people sync failed", zap.Error(err))
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), j.opts.FinishTimeout)
	defer cancel()
	if ferr := j.store.FinishRun(fctx, store.RunResult{ID: er.RunID, Outcome: er.Outcome, Counts: er.Counts,
		Err: err, Rejections: rejections}); ferr != nil {
		log.Error("record failed run", zap.Error(ferr))
	}
	return er, err
}

// changedWhileRead ends the run of an export that changed while it was
// read: what was read may mix two versions, so nothing of it is applied or
// recorded; it stays in place and the next run reads it whole.
func (j *Job) changedWhileRead(ctx context.Context, log *zap.Logger, er ExportReport) (ExportReport, error) {
	er.Outcome = model.OutcomeAttention
	er.Cause = "changed while it was read, so nothing of it was applied: it stays in the drop folder, and the next run reads it whole again"
	er.Next = "nothing is lost; if exports are still being written when hrsync reads them, raise the drop folder's stableFor or use done markers"
	log.Warn("the export changed while it was read; nothing applied, it stays for the next run")
	return er, j.commit(ctx, store.RunResult{ID: er.RunID, Outcome: er.Outcome, Err: errors.New(er.Cause)})
}

// joinNonEmpty joins the non-empty parts with "; ".
func joinNonEmpty(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "; ")
}
