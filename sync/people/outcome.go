package people

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"hrsync/apiclient"
	"hrsync/model"
	"hrsync/store"
)

// verdict is how a people run ended, in the words of its last line: the
// outcome, its cause and the operator's next step.
type verdict struct {
	outcome model.RunOutcome
	cause   string
	next    string
}

// err is the error a run record keeps of v: its cause, unless v is ok.
func (v verdict) err() error {
	if v.outcome == model.OutcomeOK {
		return nil
	}
	return errors.New(v.cause)
}

// seeReport is the next step of a run whose report says what to fix.
const seeReport = "see the run's report"

// stays is said of an export that is not archived, so the next run reads it again.
const stays = "the export is read again by the next run"

// heldNext is the next step of a run that leaves grants held.
const heldNext = "check the platform, then 'hrsync grants list' and confirm or release the held grants"

// withHeld is v, raised to attention when v is ok and held grants (from
// earlier runs) wait for an operator: a run that ends while grants are
// held needs attention, whatever export it read, so that its record, its
// report, its last line and its exit code say the same.
func withHeld(v verdict, held int) verdict {
	if v.outcome != model.OutcomeOK || held == 0 {
		return v
	}
	return verdict{model.OutcomeAttention, joinNonEmpty(v.cause, heldPhrase(held)), heldNext}
}

// heldPhrase says how many grants earlier runs left held.
func heldPhrase(held int) string {
	return plural(held, "grant", "grants") + " held from earlier runs"
}

// judgeApply decides the outcome of an export whose plan was applied
// without a state error (DESIGN.md, invariant 7): failed when the platform
// refused the token or the company, or when no call of the run was applied
// and none has an unknown outcome (every call refused, or the platform not
// reached); attention when rows were rejected, grants are held (by this
// run, for people of the export, or held counts the tenant's held grants
// after the run), the platform refused some people on their own (they have
// their outcome: Refused, not NotApplied) or some people were not created;
// ok otherwise.
func judgeApply(plan *Plan, res *Result, held int) verdict {
	fatal, dominant := failureClasses(res)
	switch {
	case fatal != "":
		return verdict{model.OutcomeFailed, refusedCause(fatal, res), fatal.NextStep() + "; " + stays}
	case res.Calls > 0 && res.Applied == 0 && res.Unknown == 0 && res.NotApplied > 0:
		return verdict{model.OutcomeFailed, refusedCause(dominant, res), dominant.NextStep() + "; " + stays}
	}
	var parts []string
	if n := plan.Stats.Rejected; n > 0 { // rows, whatever their problems
		parts = append(parts, plural(n, "row", "rows")+" rejected")
	}
	if n := res.Unknown; n > 0 {
		parts = append(parts, plural(n, "grant", "grants")+" held: the platform's answer is unknown")
	}
	if n := len(plan.Held); n > 0 {
		parts = append(parts, plural(n, "person", "people")+" waiting for a decision on a held grant")
	}
	if res.Refused > 0 {
		parts = append(parts, refusedPhrase(res.Refusals))
	}
	if n := res.NotApplied; n > 0 {
		parts = append(parts, fmt.Sprintf("%s not created (%s)", plural(n, "person", "people"), dominant.Describe()))
	}
	done := createdPhrase(res)
	if len(parts) == 0 {
		return withHeld(verdict{outcome: model.OutcomeOK, cause: done}, held)
	}
	next := seeReport
	if res.Refused > 0 {
		next = "see the run's report for the platform's reason; fix the refused people in the HR system: " +
			"an export that lists them again sends them again"
	}
	if res.Unknown > 0 || len(plan.Held) > 0 {
		next = heldNext
	}
	if res.NotApplied > 0 {
		next = dominant.NextStep() + "; the people not created are sent again by the next run"
	}
	return verdict{model.OutcomeAttention, done + "; " + strings.Join(parts, "; "), next}
}

// maxNamed bounds the externalIds a cause names.
const maxNamed = 5

// refusedPhrase says which people the platform refused on their own and
// why: "2 people refused by the platform (400 invalid_input: addBalance:
// ...): E1, E2". The reason is the first refusal's; other reasons are
// in the report.
func refusedPhrase(refusals []Refusal) string {
	var b strings.Builder
	b.WriteString(plural(len(refusals), "person", "people") + " refused by the platform")
	if len(refusals) > 0 {
		first := refusals[0]
		why := strings.TrimPrefix(first.Reason, "refused by the platform: ")
		others := false
		for _, r := range refusals[1:] {
			others = others || r.Reason != first.Reason
		}
		if others {
			why += "; and other reasons"
		}
		fmt.Fprintf(&b, " (%s): ", why)
		for i, r := range refusals[:min(len(refusals), maxNamed)] {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(r.ExternalID)
		}
		if n := len(refusals) - maxNamed; n > 0 {
			fmt.Fprintf(&b, " and %d more", n)
		}
	}
	return b.String()
}

// failureClasses returns the class of a fatal failure of the run, if any,
// and the class of most failed calls.
func failureClasses(res *Result) (fatal, dominant apiclient.Class) {
	most := 0
	for c, n := range res.Failures {
		if c.Fatal() && (fatal == "" || c < fatal) {
			fatal = c
		}
		if n > most || n == most && c < dominant {
			dominant, most = c, n
		}
	}
	return fatal, dominant
}

// refusedCause says why a run that failed at the platform granted what it did.
func refusedCause(class apiclient.Class, res *Result) string {
	calls := res.Failures[class]
	var b strings.Builder
	b.WriteString(class.Describe())
	if calls == res.Calls {
		fmt.Fprintf(&b, " on %s", plural(calls, "createPeople call", "createPeople calls"))
		if calls > 1 {
			b.WriteString(" (every call of the run)")
		}
	} else {
		fmt.Fprintf(&b, " on %d of %d createPeople calls", calls, res.Calls)
	}
	if res.Applied == 0 {
		b.WriteString("; nothing was granted")
	} else {
		b.WriteString("; " + createdPhrase(res) + " before that")
	}
	if res.Skipped > 0 {
		fmt.Fprintf(&b, "; %s not sent", plural(res.Skipped, "person", "people"))
	}
	if class == apiclient.ClassRefused && len(res.Errors) > 0 {
		// No report is written for an export that stays: the reason goes here.
		fmt.Fprintf(&b, "; the platform said: %s", res.Errors[0])
	}
	return b.String()
}

// createdPhrase says what the platform accepted.
func createdPhrase(res *Result) string {
	if res.Calls == 0 {
		return "nothing to create"
	}
	return fmt.Sprintf("%s created, %s granted", plural(res.Applied, "person", "people"), money(res.Granted))
}

// money renders an amount of credits with two decimals, never in
// scientific notation.
func money(v float64) string { return fmt.Sprintf("%.2f", v) }

// plural renders n with the singular or plural noun.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// tripMessages joins the messages of the safeguards a plan tripped.
func tripMessages(trips []Trip) string { return strings.Join(tripTexts(trips), "; ") }

// tripTexts are the messages of the trips, in order.
func tripTexts(trips []Trip) []string {
	msgs := make([]string, 0, len(trips))
	for _, t := range trips {
		msgs = append(msgs, t.Message)
	}
	return msgs
}

// Summary is the cycle's outcome with its cause and next step, for the last
// line of `hrsync run` and the record of a cycle with no export: the worst
// export's, or, with no export, what waits (held grants) or why the exports
// could not be listed. The cause is never empty.
func (r *Report) Summary() (outcome model.RunOutcome, cause, next string) {
	outcome = r.Outcome()
	if r.Error != "" {
		return model.OutcomeFailed, r.Error, r.Next
	}
	for _, e := range r.Exports {
		if e.Outcome == outcome {
			cause, next = e.Source+": "+e.Cause, e.Next
			break
		}
	}
	if n := len(r.Exports); n > 1 && cause != "" {
		cause = fmt.Sprintf("%d exports; %s", n, cause)
	}
	if len(r.Exports) == 0 {
		cause = noExport
	}
	if outcome == model.OutcomeAttention && next == "" && r.HeldGrants > 0 {
		cause, next = joinNonEmpty(cause, heldPhrase(r.HeldGrants)), heldNext
	}
	return outcome, cause, next
}

// noExport is the cause of a cycle that found no export ready.
const noExport = "no export ready"

// recordIdle records the run of a cycle that found no export ready: ok,
// or attention while grants are held (Report.Summary), so that every
// cycle, one with nothing to do included, has its run record.
func (j *Job) recordIdle(ctx context.Context, rep *Report) error {
	rep.RunID = uuid.NewString()
	outcome, cause, _ := rep.Summary()
	if err := j.store.StartRun(ctx, store.Run{ID: rep.RunID, Job: model.JobPeople, Tenant: j.opts.Tenant}); err != nil {
		return fmt.Errorf("record run start: %w", err)
	}
	res := store.RunResult{ID: rep.RunID, Outcome: outcome, Counts: map[string]int{}}
	if outcome != model.OutcomeOK {
		res.Err = errors.New(cause)
	}
	j.log.Info("no export ready", zap.String("run", rep.RunID), zap.String("outcome", string(outcome)))
	return j.commit(ctx, res)
}

// heldNow counts the tenant's grants held for an operator now. A store
// error is logged and counts none: the cycle counts them again at its end
// (Report.HeldGrants), and its outcome follows.
func (j *Job) heldNow(ctx context.Context, log *zap.Logger) int {
	held, err := j.store.ListGrants(ctx, store.GrantFilter{Tenant: j.opts.Tenant, States: heldStates()})
	if err != nil {
		log.Warn("count held grants", zap.Error(err))
		return 0
	}
	return len(held)
}

// heldStates are the states of a grant held for an operator.
func heldStates() []model.GrantState {
	return []model.GrantState{model.GrantUnknown, model.GrantPending}
}
