package people

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"hrsync/config"
	"hrsync/internal/metrics"
	"hrsync/internal/runner"
	"hrsync/internal/textfmt"
	"hrsync/model"
	"hrsync/store"
	"hrsync/sync/sender"
)

// The people sync registers with the runner as the first job of a tenant.
func init() {
	runner.RegisterKind(runner.Kind{
		Job:      model.JobPeople,
		Order:    10,
		Short:    "Sync people from each tenant's exports to the platform, granting balances exactly once",
		Schedule: func(t config.Tenant) string { return t.Schedules.People },
		Gauges:   []string{metrics.NameFilesWaiting, metrics.NameOldestFileAge},
		Cycle:    cycle,
	})
}

// OptionsFor maps a tenant's configuration to the people sync's options;
// trustIdempotencyKey is api.trustIdempotencyKey.
func OptionsFor(t config.Tenant, trustIdempotencyKey bool) Options {
	return Options{
		Tenant:         t.Name,
		CompanyID:      t.CompanyID,
		CollectionID:   t.CollectionID,
		BatchSize:      t.People.BatchSize,
		Concurrency:    t.People.Concurrency,
		DefaultBalance: t.People.DefaultBalance,
		Amount:         t.People.Amount,
		SendEmail:      t.People.SendEmail,
		GrantReason:    t.People.GrantReason,
		Safeguards: Safeguards{
			MaxDepartedRatio: t.Safeguards.MaxDepartedRatio,
			MinRowsRatio:     t.Safeguards.MinRowsRatio,
			MaxRejectedRatio: t.Safeguards.MaxRejectedRatio,
			MinPopulation:    t.Safeguards.MinPopulation,
		},
		TrustIdempotencyKey:   trustIdempotencyKey,
		ApproveFromDropFolder: t.Safeguards.ApproveFromDropFolder,
	}
}

// NewFor builds the people sync of tenant t from env: its options, its
// progress hook and the command a safeguard stop suggests. creator may be
// nil for a job that only plans.
func NewFor(env runner.Env, st *store.Store, t config.Tenant, creator Creator) (*Job, error) {
	opts := OptionsFor(t, env.Config != nil && env.Config.API.TrustIdempotencyKey)
	if env.Progress != nil {
		opts.Progress = env.Progress.Func("people " + t.Name + ": new people created")
	}
	opts.OverrideCommand = func(archivedAs string) string {
		return OverrideCommand(env.Flags.ConfigPath, t.Name, archivedAs)
	}
	if st != nil && slices.ContainsFunc(t.Grants.Rules, func(r config.GrantRule) bool { return r.Type == config.RuleBirthday }) {
		opts.Birthdays = st
	}
	return New(opts, st, sender.NewJournal(st), creator, env.JobLog(model.JobPeople, t.Name))
}

// cycle is one people cycle of a tenant as a runner.Func: its report is
// printed to env.Out and its counts feed the metrics.
func cycle(env runner.Env, t config.Tenant) runner.Func {
	return func(ctx context.Context) (runner.Result, error) {
		job, err := NewFor(env, env.Store, t, env.API)
		if err != nil {
			return runner.Result{Outcome: model.OutcomeFailed}, err
		}
		feed, err := env.Sources.Feed(t)
		if err != nil {
			return runner.Result{Outcome: model.OutcomeFailed}, err
		}
		rep, err := job.RunOnce(ctx, feed, RunFlags{OverrideSafeguards: env.Flags.OverrideSafeguards})
		if env.Progress != nil {
			env.Progress.End()
		}
		if rep == nil {
			return runner.Result{}, err
		}
		rep.setNextSteps(env.Flags.ConfigPath, t.Safeguards.ApproveFromDropFolder)
		if env.Out != nil {
			PrintReport(env.Out, rep)
		}
		return rep.result(), err
	}
}

// result is the runner's view of a run: its outcome, cause and next step,
// its counts summed over its exports, and the grants held after it.
func (r *Report) result() runner.Result {
	res := runner.Result{Counts: map[string]int{}, GrantsHeld: &r.HeldGrants, Report: r}
	res.Outcome, res.Cause, res.Next = r.Summary()
	for _, e := range r.Exports {
		for k, v := range e.Counts {
			res.Counts[k] += v
		}
		if e.Result != nil {
			res.Counts[metrics.CountGrantsApplied] += e.Result.Applied
		}
	}
	return res
}

// OverrideCommand is the exact command that runs an export a safeguard
// stopped once more, past the safeguards: archivedAs is where the stop
// archived it ("failed/employees.csv"); empty (a SQL query, or an export
// still in place) runs the tenant's next export with the override.
func OverrideCommand(configPath, tenant, archivedAs string) string {
	args := []string{"hrsync", "run", "people", "--config", ShellQuote(configPath), "--tenant", ShellQuote(tenant), "--override-safeguards"}
	if archivedAs != "" {
		args = append(args, "--file", ShellQuote(archivedAs))
	}
	return strings.Join(args, " ")
}

// shellSafe tells whether a POSIX shell takes s as one word as it is.
func shellSafe(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool {
		plain := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		return !plain && !strings.ContainsRune("_@%+=:,./-", r)
	}) < 0
}

// ShellQuote quotes s for a POSIX shell when it needs it: in single
// quotes, each single quote in s closing the quotes, escaped, reopening them.
func ShellQuote(s string) string {
	if shellSafe(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// setNextSteps gives each export a safeguard stopped its exact next step:
// its move into approve/ when approval from the drop folder is on, and the
// command that runs it once more, past the safeguards.
func (r *Report) setNextSteps(configPath string, approveOn bool) {
	for i := range r.Exports {
		e := &r.Exports[i]
		switch {
		case e.Outcome == model.OutcomeSafeguard && e.Directory:
			// A SCIM directory has no file to approve: the override,
			// from the command line, applies the directory as it is then.
			e.Next = "once you have checked the changes the identity provider pushed, apply the directory once past the safeguards: " +
				OverrideCommand(configPath, r.Tenant, "")
		case e.Outcome == model.OutcomeSafeguard:
			e.Next = stopNext(approveOn, e.ArchivedAs, OverrideCommand(configPath, r.Tenant, e.ArchivedAs))
		}
	}
}

// PrintReport prints what a people run did, export by export.
func PrintReport(w io.Writer, rep *Report) {
	if len(rep.Exports) == 0 {
		// The cycle's one run: a source that could not be read, or no
		// export ready, with the outcome its record and last line carry.
		outcome, cause, next := rep.Summary()
		run := ""
		if rep.RunID != "" {
			run = " (run " + rep.RunID + ")"
		}
		fmt.Fprintf(w, "tenant %s: %s%s %s\n", rep.Tenant, outcome, run, cause)
		if next != "" {
			fmt.Fprintf(w, "  next: %s\n", next)
		}
		return
	}
	for _, e := range rep.Exports {
		fmt.Fprintf(w, "tenant %s, %s: %s (run %s) %s\n", rep.Tenant, e.Source, e.Outcome, e.RunID, textfmt.Counts(e.Counts))
		for _, row := range model.RejectedRows(e.Rejections) {
			fmt.Fprintf(w, "  rejected %s\n", model.RowProblems(row))
		}
		for _, t := range e.Safeguards {
			fmt.Fprintf(w, "  SAFEGUARD %s: %s\n", t.Name, t.Message)
		}
		if e.Error != "" {
			fmt.Fprintf(w, "  error: %s\n", e.Error)
		}
		if e.Next != "" {
			fmt.Fprintf(w, "  next: %s\n", e.Next)
		}
	}
	if rep.HeldGrants > 0 {
		fmt.Fprintf(w, "tenant %s: %d grants held for an operator (hrsync grants list)\n", rep.Tenant, rep.HeldGrants)
	}
}

// PrintPlan prints a plan as text: its counts, its calls, the people it
// would create, change, bring back, mark departed or hold (the first
// textfmt.ListLimit of each, by externalId and name only), its rejections
// and the safeguards it trips.
func PrintPlan(w io.Writer, p *Plan) {
	fmt.Fprintf(w, "tenant %s, export %s\n", p.Tenant, p.Source)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	s := p.Summary()
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(tw, "  %s\t%d\n", k, s[k])
	}
	_ = tw.Flush()
	if n := p.CallCount(); n > 0 {
		fmt.Fprintf(w, "  would call createPeople %s for %d people, granting %s in all\n", times(n), p.Create.Len(), textfmt.Money(p.callsTotal()))
	}
	printPlanPeople(w, p)
	for _, row := range model.RejectedRows(p.Rejections) {
		fmt.Fprintf(w, "  rejected %s\n", model.RowProblems(row))
	}
	for _, tr := range p.Trips {
		fmt.Fprintf(w, "  SAFEGUARD %s: %s\n", tr.Name, tr.Message)
	}
}

// times renders a count of calls: "once", "2 times".
func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

// printPlanPeople lists the people of a plan by kind.
func printPlanPeople(w io.Writer, p *Plan) {
	limit := textfmt.ListLimit
	textfmt.List(w, "new", p.Create.Len(), limit, func(i int) string {
		return personLabel(p.Create.At(i)) + ", granted " + textfmt.Money(grantOf(p, i))
	})
	changed := p.ChangedPeople()
	textfmt.List(w, "changed", len(p.Changed), limit, func(i int) string {
		label := p.Changed[i].ExternalID
		if i < changed.Len() {
			label = personLabel(changed.At(i))
		}
		if p.Changed[i].EmailChanged {
			label += " (e-mail changed)"
		}
		return label
	})
	returned := p.ReturnedPeople()
	textfmt.List(w, "returned", len(p.Returned), limit, func(i int) string {
		if i < returned.Len() {
			return personLabel(returned.At(i))
		}
		return p.Returned[i]
	})
	textfmt.List(w, "departed", len(p.Departed), limit, func(i int) string { return p.Departed[i] })
	textfmt.List(w, "held (a grant waits for an operator)", len(p.Held), limit, func(i int) string { return p.Held[i] })
}

// personLabel names a person in a listing: externalId and name, never the
// e-mail or a date.
func personLabel(p model.Person) string {
	name := strings.TrimSpace(p.FirstName + " " + p.LastName)
	if name == "" {
		return p.ExternalID
	}
	return p.ExternalID + " " + name
}
