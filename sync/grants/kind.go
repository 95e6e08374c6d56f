package grants

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"hrsync/config"
	"hrsync/internal/metrics"
	"hrsync/internal/runner"
	"hrsync/internal/textfmt"
	"hrsync/model"
	"hrsync/store"
	"hrsync/sync/personalize"
	"hrsync/sync/sender"
)

// The grants job registers with the runner after the people sync, whose
// new people it may grant.
func init() {
	runner.RegisterKind(runner.Kind{
		Job:      model.JobGrants,
		Order:    20,
		Short:    "Grant birthdays, work anniversaries and campaigns by the tenants' rules, exactly once",
		Schedule: func(t config.Tenant) string { return t.Schedules.Grants },
		Cycle:    cycle,
	})
}

// OptionsFor maps a tenant's configuration to the grants job's options;
// trustIdempotencyKey is api.trustIdempotencyKey.
func OptionsFor(t config.Tenant, trustIdempotencyKey bool) Options {
	return Options{
		Tenant:              t.Name,
		CompanyID:           t.CompanyID,
		CollectionID:        t.CollectionID,
		Grants:              t.Grants,
		BatchSize:           t.People.BatchSize,
		Concurrency:         t.People.Concurrency,
		TrustIdempotencyKey: trustIdempotencyKey,
	}
}

// NewFor builds the grants job of tenant t from env over st; api may be
// nil for a job that only plans.
func NewFor(env runner.Env, st *store.Store, t config.Tenant, api sender.Creator) (*Job, error) {
	var export personalize.LastExport
	if env.Sources != nil {
		export = env.Sources.LastExport(t)
	}
	return New(OptionsFor(t, env.Config != nil && env.Config.API.TrustIdempotencyKey), st, sender.NewJournal(st), api, export,
		env.JobLog(model.JobGrants, t.Name))
}

// cycle is one grants cycle of a tenant as a runner.Func: its report is
// printed to env.Out and its per-rule counts feed the metrics.
func cycle(env runner.Env, t config.Tenant) runner.Func {
	return func(ctx context.Context) (runner.Result, error) {
		job, err := NewFor(env, env.Store, t, env.API)
		if err != nil {
			return runner.Result{Outcome: model.OutcomeFailed}, err
		}
		if !job.Enabled() {
			if env.Out != nil {
				fmt.Fprintf(env.Out, "tenant %s: no grant rule\n", t.Name)
			}
			return runner.Result{Outcome: model.OutcomeOK, Cause: "no grant rule: nothing to do"}, nil
		}
		rep, err := job.RunOnce(ctx, RunFlags{AsOf: env.Flags.AsOf, OverrideSafeguards: env.Flags.OverrideSafeguards})
		if rep == nil {
			return runner.Result{}, err
		}
		if env.Out != nil {
			PrintReport(env.Out, rep)
		}
		res := runner.Result{Counts: map[string]int{metrics.CountGrantsApplied: rep.Counts["grantsApplied"]}, Report: rep}
		res.Outcome, res.Cause, res.Next = rep.Summary()
		for _, r := range rep.Rules {
			res.RuleGrants = append(res.RuleGrants, metrics.RuleGrants{Rule: r.Rule, Applied: r.Applied, Held: r.Held, Skipped: r.Skipped})
		}
		return res, err
	}
}

// PrintReport prints what a grants run did, rule by rule.
func PrintReport(w io.Writer, rep *Report) {
	fmt.Fprintf(w, "tenant %s, grants: %s (run %s) %s\n", rep.Tenant, rep.Outcome, rep.RunID, rep.Cause)
	if rep.Plan != nil {
		fmt.Fprintf(w, "  as of %s\n", rep.Plan.Day.Format(model.DateLayout))
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  RULE\tAPPLIED\tGRANTED\tHELD\tNOT APPLIED\tREFUSED\tSKIPPED")
	for _, r := range rep.Rules {
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%d\t%d\t%d\t%d\n", r.Rule, r.Applied, textfmt.Money(r.Granted), r.Held, r.NotApplied, r.Refused, r.Skipped)
	}
	_ = tw.Flush()
	if rep.Next != "" {
		fmt.Fprintf(w, "  next: %s\n", rep.Next)
	}
}

// Plans plans the grants of each tenant with rules as of asOf (zero:
// today), over st; a tenant without rules has no plan.
func Plans(ctx context.Context, env runner.Env, st *store.Store, tenants []config.Tenant, asOf time.Time) ([]*Plan, error) {
	plans := []*Plan{}
	for _, t := range tenants {
		job, err := NewFor(env, st, t, nil)
		if err != nil {
			return nil, fmt.Errorf("tenant %s: %w", t.Name, err)
		}
		if !job.Enabled() {
			continue
		}
		p, err := job.BuildPlan(ctx, asOf)
		if err != nil {
			return nil, fmt.Errorf("tenant %s: %w", t.Name, err)
		}
		plans = append(plans, p)
	}
	return plans, nil
}

// PrintPlan prints a grants plan: per rule its window, count and total;
// with all, every grant due by person (externalId only).
func PrintPlan(w io.Writer, p *Plan, all bool) {
	fmt.Fprintf(w, "tenant %s, grants as of %s: %d due, %s in all (this month so far %s)\n",
		p.Tenant, p.Day.Format(model.DateLayout), len(p.Due), textfmt.Money(p.Total), textfmt.Money(p.MonthSpent))
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  RULE\tDAYS\tDUE\tTOTAL\tALREADY GRANTED\tHELD\tSKIPPED")
	for _, r := range p.Rules {
		fmt.Fprintf(tw, "  %s\t%s..%s\t%d\t%s\t%d\t%d\t%d\n", r.Rule, r.From.Format(model.DateLayout), r.To.Format(model.DateLayout),
			r.Due, textfmt.Money(r.Total), r.Already, r.Held, r.Skipped)
	}
	_ = tw.Flush()
	if p.NoBirthDate > 0 {
		fmt.Fprintf(w, "  %d active people have no birth date in the last good export\n", p.NoBirthDate)
	}
	if all {
		tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		for _, d := range p.Due {
			fmt.Fprintf(tw, "  grant\t%s\t%s\t%s\t%s\t%s\n", d.Rule, d.Day.Format(model.DateLayout), d.ExternalID, d.Occurrence, textfmt.Money(d.Amount))
		}
		_ = tw.Flush()
	}
	if p.Safeguard != "" {
		fmt.Fprintf(w, "  SAFEGUARD budget: %s\n", p.Safeguard)
	}
}

// PrintLedger prints grants of the ledger as a table, amounts as money,
// with the note of each decision (why a grant was voided).
func PrintLedger(w io.Writer, grants []model.Grant) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tJOB\tSTATE\tAMOUNT\tATTEMPTS\tUPDATED\tLAST ERROR\tNOTE")
	if len(grants) == 0 {
		fmt.Fprintln(tw, "(none)\t\t\t\t\t\t\t")
	}
	for _, g := range grants {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", g.Key, g.Job, g.State, textfmt.Money(g.Amount), g.Attempts,
			g.UpdatedAt.UTC().Format("2006-01-02T15:04:05Z"), g.LastError, g.Note)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("print grants: %w", err)
	}
	return nil
}

// CheckAsOf refuses a day asOf after today (as of now) in the rules' time
// zone of any of the tenants: a run never grants ahead of the day (a plan
// may preview any day).
func CheckAsOf(tenants []config.Tenant, asOf, now time.Time) error {
	for _, t := range tenants {
		loc := t.Grants.Location()
		y, m, d := now.In(loc).Date()
		if today := time.Date(y, m, d, 0, 0, 0, 0, time.UTC); asOf.After(today) {
			return fmt.Errorf("--date %s is after today (%s in %s, tenant %s): a run never grants ahead of the day; "+
				"hrsync plan grants --date previews it", asOf.Format(model.DateLayout), today.Format(model.DateLayout), loc, t.Name)
		}
	}
	return nil
}
