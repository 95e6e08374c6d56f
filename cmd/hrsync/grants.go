package main

// The grants job (birthday, work-anniversary and campaign rules): its
// runner.Func, `hrsync plan grants`, and what `plan` and `status` show of it.

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"hrsync/model"
	"hrsync/sync/grants"
)

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
// a tenant the command runs (grants.CheckAsOf).
func notAhead(cmd *cobra.Command, a *app, asOf time.Time) error {
	if asOf.IsZero() {
		return nil
	}
	tenants, err := a.tenants(cmd)
	if err != nil {
		return err
	}
	if err := grants.CheckAsOf(tenants, asOf, time.Now()); err != nil {
		return withCode(exitUsage, err)
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
			if _, err := outputFormat(cmd); err != nil {
				return err
			}
			asOf, err := parseDay(cmd)
			if err != nil {
				return err
			}
			return withReadOnly(cmd, false, func(ro readOnly) error {
				plans, err := grants.Plans(cmd.Context(), ro.a.planEnv(ro.st), ro.st, ro.tenants, asOf)
				if err != nil {
					return err
				}
				if ro.asJSON {
					return printJSON(cmd.OutOrStdout(), plans)
				}
				for _, p := range plans {
					grants.PrintPlan(cmd.OutOrStdout(), p, true)
				}
				if len(plans) == 0 {
					fmt.Fprintln(cmd.OutOrStdout(), "no tenant has grant rules")
				}
				return nil
			})
		},
	}
	addConfigFlags(cmd)
	addOutputFlag(cmd)
	cmd.Flags().String("date", "", "plan as of this day (YYYY-MM-DD, in the rules' time zone) instead of today")
	return cmd
}
