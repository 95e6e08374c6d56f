package grants

import (
	"fmt"
	"sort"
	"strings"

	"hrsync/model"
	"hrsync/sync/sender"
)

// RuleResult is what a run did for one rule.
type RuleResult struct {
	Rule string `json:"rule"`
	// Applied counts the grants the platform confirmed; Granted sums them.
	Applied int     `json:"applied"`
	Granted float64 `json:"granted"`
	// Held counts the grants whose outcome is unknown (held for an
	// operator), NotApplied those certainly not applied (sent again by a
	// later run), Refused those the platform refused alone.
	Held       int `json:"held"`
	NotApplied int `json:"notApplied"`
	Refused    int `json:"refused"`
	// Skipped counts occurrences owed to nobody (the person was not active
	// on the day, outside the rule's filters, or not yet on the platform),
	// of the days no run processed before.
	Skipped int `json:"skipped"`
}

// Report is what one run of the grants job did.
type Report struct {
	RunID  string `json:"runId"`
	Tenant string `json:"tenant"`
	// Rules are the per-rule results, by rule name.
	Rules []*RuleResult `json:"rules"`
	// Plan is what the run planned; nil when it stopped before planning.
	Plan *Plan `json:"plan"`
	// Calls counts the createPeople calls made.
	Calls int `json:"calls"`
	// HeldGrants is how many of the tenant's rule grants are held after
	// the run.
	HeldGrants int `json:"heldGrants"`
	// Counts are the run's counters (runs.counts).
	Counts map[string]int `json:"counts"`
	// Errors lists the distinct call errors.
	Errors []string `json:"errors"`
	// Outcome, Cause and Next are how the run ended, why, and what to do.
	Outcome model.RunOutcome `json:"outcome"`
	Cause   string           `json:"cause"`
	Next    string           `json:"next"`

	outcome   model.RunOutcome
	safeguard string
	// sent is what the senders did, over every rule: the counts type the
	// people sync shares (Calls and Errors above are copied from it).
	sent sender.Result
}

func newReport(tenant string) *Report {
	return &Report{Tenant: tenant, Rules: []*RuleResult{}, Counts: map[string]int{}, Errors: []string{}, outcome: model.OutcomeOK, Outcome: model.OutcomeOK,
		sent: sender.Result{Errors: []string{}}}
}

// rule returns the result of a rule, added on first use.
func (r *Report) rule(name string) *RuleResult {
	for _, rr := range r.Rules {
		if rr.Rule == name {
			return rr
		}
	}
	rr := &RuleResult{Rule: name}
	r.Rules = append(r.Rules, rr)
	sort.Slice(r.Rules, func(a, b int) bool { return r.Rules[a].Rule < r.Rules[b].Rule })
	return rr
}

// add counts a sender's result for a rule.
func (r *Report) add(rule string, res *sender.Result) {
	rr := r.rule(rule)
	rr.Applied += res.Applied
	rr.Granted += res.Granted
	rr.Held += res.Unknown
	rr.NotApplied += res.NotApplied + res.Skipped
	rr.Refused += res.Refused
	r.sent.Merge(res)
	r.Calls, r.Errors = r.sent.Calls, r.sent.Errors
}

// settle decides the run's outcome, cause and next step from what it did
// and err, the error that stopped it.
func (r *Report) settle(err error) {
	var applied, held, notApplied, refused, skipped int
	var granted float64
	for _, rr := range r.Rules {
		applied += rr.Applied
		granted += rr.Granted
		held += rr.Held
		notApplied += rr.NotApplied
		refused += rr.Refused
		skipped += rr.Skipped
	}
	r.Counts = map[string]int{"grantsApplied": applied, "held": held, "notApplied": notApplied,
		"refused": refused, "skipped": skipped, "calls": r.Calls}
	if r.Plan != nil {
		r.Counts["due"] = len(r.Plan.Due)
	}
	nothing := fmt.Sprintf("granted %d (%.2f)", applied, granted)
	fatal, _ := r.sent.Fatal()
	switch {
	case err != nil:
		r.outcome, r.Cause, r.Next = model.OutcomeFailed, err.Error(), "fix the cause; the next run grants what is still due"
	case r.safeguard != "":
		r.outcome, r.Cause = model.OutcomeSafeguard, "budget: "+r.safeguard+"; nothing was granted"
		r.Next = "check the rules and the budget; if the grants are right, run again once with --override-safeguards"
	case fatal != "":
		r.outcome = model.OutcomeFailed
		r.Cause = fmt.Sprintf("%s on a createPeople call; %s; %d not sent", fatal.Describe(), nothing, notApplied)
		r.Next = fatal.NextStep() + "; the next run sends what is still due"
	case r.Calls > 0 && applied == 0 && held == 0 && len(r.sent.Failures) > 0:
		r.outcome = model.OutcomeFailed
		r.Cause = fmt.Sprintf("every createPeople call failed (%s); nothing was granted", strings.Join(r.Errors, "; "))
		r.Next = r.sent.Dominant().NextStep() + "; the next run sends what is still due"
	case held > 0 || notApplied > 0 || refused > 0:
		r.outcome = model.OutcomeAttention
		r.Cause = fmt.Sprintf("%s; %d held, %d not applied, %d refused", nothing, held, notApplied, refused)
		r.Next = "hrsync grants list (held grants: check the platform, then grants confirm or release)"
	default:
		r.outcome, r.Cause = model.OutcomeOK, nothing
	}
	r.Outcome = r.outcome
}

// Summary returns the run's outcome, cause and next step.
func (r *Report) Summary() (model.RunOutcome, string, string) { return r.outcome, r.Cause, r.Next }

// heldStates are the states of a held grant.
func heldStates() []model.GrantState { return []model.GrantState{model.GrantUnknown} }
