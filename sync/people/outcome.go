package people

import (
	"fmt"
	"strings"

	"hrsync/apiclient"
	"hrsync/model"
)

// verdict is how a people run ended, in the words of its last line: the
// outcome, its cause and the operator's next step.
type verdict struct {
	outcome model.RunOutcome
	cause   string
	next    string
}

// seeReport is the next step of a run whose report says what to fix.
const seeReport = "see the run's report"

// stays is said of an export that is not archived, so the next run reads it again.
const stays = "the export is read again by the next run"

// judgeApply decides the outcome of an export whose plan was applied
// without a state error (DESIGN.md, invariant 7): failed when the platform
// refused the token or the company, or when no call of the run was applied
// and none has an unknown outcome (every call refused, or the platform not
// reached); attention when rows were rejected, grants are held, the
// platform refused some people on their own (they have their outcome:
// Refused, not NotApplied) or some people were not created; ok otherwise.
func judgeApply(plan *Plan, res *Result) verdict {
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
		return verdict{outcome: model.OutcomeOK, cause: done}
	}
	next := seeReport
	if res.Refused > 0 {
		next = "see the run's report for the platform's reason; fix the refused people in the HR system: " +
			"an export that lists them again sends them again"
	}
	if res.Unknown > 0 || len(plan.Held) > 0 {
		next = "check the platform, then 'hrsync grants list' and confirm or release the held grants"
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

// Summary is the run's outcome with its cause and next step, for the last
// line of `hrsync run` and the run's record: the worst export's, or, with no
// export, what waits (held grants) or why the exports could not be listed.
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
	if n := len(r.Exports); n > 1 {
		cause = fmt.Sprintf("%d exports; %s", n, cause)
	}
	if len(r.Exports) == 0 {
		cause = "no export ready"
	}
	if outcome == model.OutcomeAttention && next == "" && r.HeldGrants > 0 {
		cause += fmt.Sprintf("; %s held from earlier runs", plural(r.HeldGrants, "grant", "grants"))
		next = "check the platform, then 'hrsync grants list' and confirm or release the held grants"
	}
	return outcome, cause, next
}
