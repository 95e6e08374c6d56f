package runner

import (
	"fmt"
	"slices"
	"strings"

	"hrsync/apiclient"
	"hrsync/internal/jsonstream"
	"hrsync/internal/notify"
	"hrsync/internal/textfmt"
	"hrsync/model"
)

// End is how one cycle of a run ended: what RunOnce returned for its key.
type End struct {
	Key Key
	Res Result
	Err error
}

// Describe is a cycle's cause and next step: the job's own words when it
// gave them, else words made from its error or counts.
func (e *End) Describe() (cause, next string) {
	res := e.Res
	if res.Cause != "" {
		return res.Cause, res.Next
	}
	switch res.Outcome {
	case model.OutcomeLocked:
		return "another run of this job and tenant holds the lock", "the next run goes ahead once it ends; nothing to do unless it repeats"
	case model.OutcomeInterrupted:
		return interruptedCause, interruptedNext
	case model.OutcomeFailed:
		if e.Err == nil {
			return "the run failed", "see the logs"
		}
		if class := apiclient.ClassOf(e.Err); class != apiclient.ClassOther && class != apiclient.ClassStopped {
			return e.Err.Error(), class.NextStep()
		}
		return e.Err.Error(), "see the logs"
	case model.OutcomeAttention:
		return "done, needs attention: " + nonZeroCounts(res.Counts, attentionCount), "see the run's report and 'hrsync status'"
	}
	if len(res.Counts) == 0 {
		return "done", ""
	}
	return "done: " + nonZeroCounts(res.Counts, nil), ""
}

// The words of a cycle cut short when its process stopped.
const (
	interruptedCause = "stopped before the run finished (the process was told to stop)"
	interruptedNext  = "nothing to do: the next run picks its work up"
)

// attentionCount reports whether a count of the personalize or orders job
// makes a cycle need attention.
func attentionCount(k string) bool {
	switch k {
	case "retry", "gaveUp", "unusable", "leftForOperator", "pollErrors", "productErrors", "refused":
		return true
	}
	return false
}

// nonZeroCounts renders the counts that are not zero as k=v, sorted; only
// the keys keep accepts when keep is not nil.
func nonZeroCounts(counts map[string]int, keep func(string) bool) string {
	if c := notify.CountsText(counts, keep); c != "" {
		return c
	}
	return "nothing to do"
}

// LastLine is a run's worst outcome and its last line: "OUTCOME: JOB
// TENANT: CAUSE; NEXT STEP", naming the first cycle that ended worst, and
// how many other cycles did not end ok.
func LastLine(ends []End) (model.RunOutcome, string) {
	if len(ends) == 0 {
		return model.OutcomeOK, "ok: nothing to run"
	}
	worst := model.OutcomeOK
	for _, e := range ends {
		worst = Worst(worst, e.Res.Outcome)
	}
	var first *End
	others := 0
	for i := range ends {
		e := &ends[i]
		switch {
		case first == nil && e.Res.Outcome == worst:
			first = e
		case e.Res.Outcome != model.OutcomeOK:
			others++
		}
	}
	cause, next := first.Describe()
	line := fmt.Sprintf("%s: %s %s: %s", worst, first.Key.Job, first.Key.Tenant, cause)
	if next != "" {
		line += "; " + next
	}
	if len(ends) > 1 && worst == model.OutcomeOK {
		line = "ok: " + cyclesDone(ends)
	}
	if others > 0 {
		line += fmt.Sprintf(" (and %s that did not end ok: see above)", textfmt.Plural(others, "other cycle", "other cycles"))
	}
	return worst, line
}

// cyclesDone says which cycles a run made: "3 cycles done (people,
// personalize, orders of tenant acme)".
func cyclesDone(ends []End) string {
	var jobs, tenants []string
	for _, e := range ends {
		if !slices.Contains(jobs, string(e.Key.Job)) {
			jobs = append(jobs, string(e.Key.Job))
		}
		if !slices.Contains(tenants, e.Key.Tenant) {
			tenants = append(tenants, e.Key.Tenant)
		}
	}
	of := "tenant " + tenants[0]
	if len(tenants) > 1 {
		of = textfmt.Plural(len(tenants), "tenant", "tenants")
	}
	return fmt.Sprintf("%d cycles done (%s of %s)", len(ends), strings.Join(jobs, ", "), of)
}

// Summary is what `hrsync run -o json` prints on stdout: the run's
// outcome, exit code and last line, the shard (--shard) and the tenants it
// ran, and each cycle with its job's report.
type Summary struct {
	Outcome  model.RunOutcome `json:"outcome"`
	ExitCode int              `json:"exitCode"`
	Message  string           `json:"message"`
	Shard    string           `json:"shard,omitempty"`
	Tenants  []string         `json:"tenants"`
	Cycles   []CycleSummary   `json:"cycles"`
}

// StreamJSON writes the summary a member at a time (jsonstream.Streamer),
// so that a job's report that streams (a first import's people) streams.
func (s Summary) StreamJSON(w *jsonstream.Writer) { w.Fields(s) }

// CycleSummary is one cycle of a run in its JSON summary.
type CycleSummary struct {
	Job     model.Job        `json:"job"`
	Tenant  string           `json:"tenant"`
	Outcome model.RunOutcome `json:"outcome"`
	Cause   string           `json:"cause"`
	Next    string           `json:"next"`
	Counts  map[string]int   `json:"counts"`
	Error   string           `json:"error,omitempty"`
	// Report is the job's own report; left out when the job made none
	// (a grants cycle of a tenant without a rule).
	Report any `json:"report,omitempty"`
}

// StreamJSON writes the cycle a member at a time (jsonstream.Streamer).
func (c CycleSummary) StreamJSON(w *jsonstream.Writer) { w.Fields(c) }

// NewSummary builds a run's JSON summary from its ends; code is the exit
// code of outcome, line its last line.
func NewSummary(outcome model.RunOutcome, code int, line string, ends []End, shard string, tenants []string) Summary {
	s := Summary{Outcome: outcome, ExitCode: code, Message: line, Shard: shard,
		Tenants: tenants, Cycles: make([]CycleSummary, 0, len(ends))}
	for i := range ends {
		e := &ends[i]
		cause, next := e.Describe()
		c := CycleSummary{Job: e.Key.Job, Tenant: e.Key.Tenant, Outcome: e.Res.Outcome, Cause: cause, Next: next,
			Counts: e.Res.Counts, Report: e.Res.Report}
		if c.Counts == nil {
			c.Counts = map[string]int{}
		}
		if e.Err != nil {
			c.Error = e.Err.Error()
		}
		s.Cycles = append(s.Cycles, c)
	}
	return s
}
