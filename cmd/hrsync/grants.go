package main

// The grants job (birthday, work-anniversary and campaign rules): its
// runner.Func, `hrsync plan grants`, and what `plan` and `status` show of it.

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"hrsync/config"
	"hrsync/internal/metrics"
	"hrsync/internal/runner"
	"hrsync/model"
	"hrsync/store"
	"hrsync/sync/grants"
	"hrsync/sync/sender"
)

// grantsJob builds the grants job of one tenant; api may be nil for a job
// that only plans.
func (a *app) grantsJob(t config.Tenant, st *store.Store, api sender.Creator) (*grants.Job, error) {
	return grants.New(grants.Options{
		Tenant:              t.Name,
		CompanyID:           t.CompanyID,
		CollectionID:        t.CollectionID,
		Grants:              t.Grants,
		BatchSize:           t.People.BatchSize,
		Concurrency:         t.People.Concurrency,
		TrustIdempotencyKey: a.cfg.API.TrustIdempotencyKey,
	}, st, sender.NewJournal(st), api, a.lastExport(t, st), a.log.With(zap.String("tenant", t.Name), zap.String("job", "grants")))
}

// grantsFunc is one grants cycle of a tenant as a runner.Func: its report
// is printed to opts.out and its per-rule counts feed the metrics.
func (a *app) grantsFunc(t config.Tenant, st *store.Store, client sender.Creator, opts jobOptions) runner.Func {
	return func(ctx context.Context) (runner.Result, error) {
		job, err := a.grantsJob(t, st, client)
		if err != nil {
			return runner.Result{Outcome: model.OutcomeFailed}, err
		}
		if !job.Enabled() {
			if opts.out != nil {
				fmt.Fprintf(opts.out, "tenant %s: no grant rule\n", t.Name)
			}
			return runner.Result{Outcome: model.OutcomeOK}, nil
		}
		rep, err := job.RunOnce(ctx, opts.grantFlags)
		if rep == nil {
			return runner.Result{}, err
		}
		if opts.out != nil {
			printGrantsReport(opts.out, rep)
		}
		res := runner.Result{Counts: map[string]int{metrics.CountGrantsApplied: rep.Counts["grantsApplied"]}, Report: rep}
		res.Outcome, res.Cause, res.Next = rep.Summary()
		for _, r := range rep.Rules {
			res.RuleGrants = append(res.RuleGrants, metrics.RuleGrants{Rule: r.Rule, Applied: r.Applied, Held: r.Held, Skipped: r.Skipped})
		}
		return res, err
	}
}

// printGrantsReport prints what a grants run did, rule by rule.
func printGrantsReport(w io.Writer, rep *grants.Report) {
	fmt.Fprintf(w, "tenant %s, grants: %s (run %s) %s\n", rep.Tenant, rep.Outcome, rep.RunID, rep.Cause)
	if rep.Plan != nil {
		fmt.Fprintf(w, "  as of %s\n", rep.Plan.Day.Format(model.DateLayout))
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  RULE\tAPPLIED\tGRANTED\tHELD\tNOT APPLIED\tREFUSED\tSKIPPED")
	for _, r := range rep.Rules {
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%d\t%d\t%d\t%d\n", r.Rule, r.Applied, money(r.Granted), r.Held, r.NotApplied, r.Refused, r.Skipped)
	}
	_ = tw.Flush()
	if rep.Next != "" {
		fmt.Fprintf(w, "  next: %s\n", rep.Next)
	}
}

// parseDay reads a --date flag: a calendar date YYYY-MM-DD, or "" for today.
func parseDay(cmd *cobra.Command) (time.Time, error) {
	v, _ := cmd.Flags().GetString("date")
	if v == "" {
		return time.Time{}, nil
	}
	d, err := time.Parse(model.DateLayout, v)
	if err != nil {
		return time.Time{}, withCode(exitUsage, fmt.Errorf("--date %q is not a date such as 2026-12-01 (YYYY-MM-DD)", v))
	}
	return d, nil
}

// notAhead refuses a --date after today in the grant rules' time zone of
// a tenant the command runs: a run never grants ahead of the day (plan
// grants may preview any day).
func notAhead(cmd *cobra.Command, a *app, asOf time.Time) error {
	if asOf.IsZero() {
		return nil
	}
	tenants, err := a.tenants(cmd)
	if err != nil {
		return err
	}
	for _, t := range tenants {
		loc := t.Grants.Location()
		y, m, d := time.Now().In(loc).Date()
		if today := time.Date(y, m, d, 0, 0, 0, 0, time.UTC); asOf.After(today) {
			return withCode(exitUsage, fmt.Errorf("--date %s is after today (%s in %s, tenant %s): a run never grants ahead of the day; "+
				"hrsync plan grants --date previews it", asOf.Format(model.DateLayout), today.Format(model.DateLayout), loc, t.Name))
		}
	}
	return nil
}

// newPlanGrantsCmd is `hrsync plan grants`.
func newPlanGrantsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "grants",
		Short: "Show the grants a run of the grants job would make, per rule, as of today or --date",
		Long: `plan grants prints, for each tenant with grant rules, what 'hrsync run grants' would do as of
today (or as of --date YYYY-MM-DD, any day, in the rules' time zone): per rule, the window of grant
days it covers (the look-back before the day), the grants due with their total, those already in the
ledger, held or skipped, then every grant due (rule, day, person, occurrence, amount), and the budget
safeguard it would trip. It changes nothing and makes no call.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := outputFormat(cmd)
			if err != nil {
				return err
			}
			asOf, err := parseDay(cmd)
			if err != nil {
				return err
			}
			a, st, err := loadAppStoreReadOnly(cmd)
			if err != nil {
				return err
			}
			defer st.Close() //nolint:errcheck // read only
			tenants, err := a.tenants(cmd)
			if err != nil {
				return err
			}
			plans, err := a.grantsPlans(cmd.Context(), st, tenants, asOf)
			if err != nil {
				return err
			}
			if format == outputJSON {
				return printJSON(cmd.OutOrStdout(), plans)
			}
			for _, p := range plans {
				printGrantsPlan(cmd.OutOrStdout(), p, true)
			}
			if len(plans) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "no tenant has grant rules")
			}
			return nil
		},
	}
	addConfigFlags(cmd)
	addOutputFlag(cmd)
	cmd.Flags().String("date", "", "plan as of this day (YYYY-MM-DD, in the rules' time zone) instead of today")
	return cmd
}

// grantsPlans plans the grants of each tenant with rules as of asOf.
func (a *app) grantsPlans(ctx context.Context, st *store.Store, tenants []config.Tenant, asOf time.Time) ([]*grants.Plan, error) {
	plans := []*grants.Plan{}
	for _, t := range tenants {
		job, err := a.grantsJob(t, st, nil)
		if err != nil {
			return nil, withCode(exitUsage, err)
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

// printGrantsPlans prints, for `hrsync plan`, the grants due today per rule.
func (a *app) printGrantsPlans(ctx context.Context, w io.Writer, st *store.Store, tenants []config.Tenant) error {
	plans, err := a.grantsPlans(ctx, st, tenants, time.Time{})
	if err != nil {
		return err
	}
	for _, p := range plans {
		printGrantsPlan(w, p, false)
	}
	return nil
}

// printGrantsPlan prints a grants plan: per rule its window, count and
// total; with all, every grant due by person (externalId only).
func printGrantsPlan(w io.Writer, p *grants.Plan, all bool) {
	fmt.Fprintf(w, "tenant %s, grants as of %s: %d due, %s in all (this month so far %s)\n",
		p.Tenant, p.Day.Format(model.DateLayout), len(p.Due), money(p.Total), money(p.MonthSpent))
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  RULE\tDAYS\tDUE\tTOTAL\tALREADY GRANTED\tHELD\tSKIPPED")
	for _, r := range p.Rules {
		fmt.Fprintf(tw, "  %s\t%s..%s\t%d\t%s\t%d\t%d\t%d\n", r.Rule, r.From.Format(model.DateLayout), r.To.Format(model.DateLayout),
			r.Due, money(r.Total), r.Already, r.Held, r.Skipped)
	}
	_ = tw.Flush()
	if p.NoBirthDate > 0 {
		fmt.Fprintf(w, "  %d active people have no birth date in the last good export\n", p.NoBirthDate)
	}
	if all {
		tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		for _, d := range p.Due {
			fmt.Fprintf(tw, "  grant\t%s\t%s\t%s\t%s\t%s\n", d.Rule, d.Day.Format(model.DateLayout), d.ExternalID, d.Occurrence, money(d.Amount))
		}
		_ = tw.Flush()
	}
	if p.Safeguard != "" {
		fmt.Fprintf(w, "  SAFEGUARD budget: %s\n", p.Safeguard)
	}
}

// statusRule is, in `hrsync status`, what the grants job did of one rule.
type statusRule struct {
	Rule     string  `json:"rule"`
	LastDay  *string `json:"lastDay"`
	FirstDay *string `json:"firstDay"`
}

// grantRules reads the days the grants job processed for each of a
// tenant's rules; a rule never run has no days.
func grantRules(ctx context.Context, st *store.Store, t config.Tenant) ([]statusRule, error) {
	out := []statusRule{}
	if len(t.Grants.Rules) == 0 {
		return out, nil
	}
	days, err := st.GrantDays(ctx, t.Name)
	if err != nil {
		return nil, fmt.Errorf("tenant %s: %w", t.Name, err)
	}
	for _, r := range t.Grants.Rules {
		sr := statusRule{Rule: r.Name}
		if d, ok := days[r.Name]; ok {
			last, first := d.LastDay.Format(model.DateLayout), d.FirstDay.Format(model.DateLayout)
			sr.LastDay, sr.FirstDay = &last, &first
		}
		out = append(out, sr)
	}
	return out, nil
}

// printGrantRules prints the last day processed per rule, when any tenant
// has rules.
func printGrantRules(w io.Writer, rep *statusReport) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	header := false
	for _, t := range rep.Tenants {
		for _, r := range t.GrantRules {
			if !header {
				fmt.Fprintln(w)
				fmt.Fprintln(tw, "TENANT\tGRANT RULE\tLAST DAY PROCESSED")
				header = true
			}
			last := "never"
			if r.LastDay != nil {
				last = *r.LastDay
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, r.Rule, last)
		}
	}
	_ = tw.Flush()
}
