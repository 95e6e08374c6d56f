package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"hrsync/model"
	"hrsync/sources"
	"hrsync/store"
	"hrsync/sync/people"
)

func newValidateCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "validate [FILE...]",
		Short: "Check exports against the mapping: no state change, no API call",
		Long: `validate reads each FILE (or, without FILE, every ready file of each tenant's drop folder)
with the tenant's column mapping and prints every rejected row with its line, field and reason.
Exit code 0 when every row is valid, 4 when rows were rejected, 1 when a file cannot be read.`,
		RunE: func(cmd *cobra.Command, files []string) error {
			a, err := loadApp(cmd)
			if err != nil {
				return err
			}
			tenants, err := a.tenants(cmd)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			rejected := 0
			for _, t := range tenants {
				feed, err := a.feed(t, files)
				if err != nil {
					return err
				}
				exports, err := feed(cmd.Context())
				if err != nil {
					return err
				}
				for _, e := range exports {
					var rej []model.Rejection
					st, err := e.Read(cmd.Context(), sources.Handler{
						Accept: func(model.Person) error { return nil },
						Reject: func(r model.Rejection) error { rej = append(rej, r); return nil },
					})
					// The first row of a duplicated key is rejected after the
					// last row: the report goes in line order.
					slices.SortStableFunc(rej, func(a, b model.Rejection) int { return cmp.Compare(a.Line, b.Line) })
					if err != nil {
						return fmt.Errorf("%s: %w", e.Name(), err)
					}
					fmt.Fprintf(out, "%s (tenant %s): %d rows, %d accepted, %d rejected\n", e.Name(), t.Name, st.Rows, st.Accepted, st.Rejected)
					for _, r := range rej {
						fmt.Fprintf(out, "  %s\n", r.Error())
					}
					rejected += st.Rejected
				}
				if len(files) > 0 {
					break // the files were read with the first tenant's mapping
				}
			}
			if rejected > 0 {
				return withCode(exitAttention, fmt.Errorf("%d rows rejected", rejected))
			}
			return nil
		},
	}
	addConfigFlags(cmd)
	return cmd
}

func newPlanCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plan [FILE...]",
		Short: "Show the diff and every call a run would make, without making any",
		Long: `plan diffs each ready export (or each FILE) against hrsync's state and prints what a run
would do: new, changed, returned, departed and held people, rejected rows, the createPeople calls
with the balances they grant, and the safeguards the export trips. It changes nothing.`,
		RunE: func(cmd *cobra.Command, files []string) error {
			a, st, err := loadAppStoreReadOnly(cmd)
			if err != nil {
				return err
			}
			asJSON, _ := cmd.Flags().GetBool("json")
			tenants, err := a.tenants(cmd)
			if err != nil {
				_ = st.Close()
				return err
			}
			defer st.Close() //nolint:errcheck // read only
			var plans []*people.Plan
			for _, t := range tenants {
				job, err := a.peopleJob(t, st, nil)
				if err != nil {
					return withCode(exitUsage, err)
				}
				feed, err := a.feed(t, files)
				if err != nil {
					return err
				}
				exports, err := feed(cmd.Context())
				if err != nil {
					return err
				}
				for _, e := range exports {
					p, err := job.BuildPlan(cmd.Context(), e)
					if err != nil {
						return err
					}
					plans = append(plans, p)
				}
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), plans)
			}
			for _, p := range plans {
				printPlan(cmd.OutOrStdout(), p)
			}
			if len(plans) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "no export is ready")
			}
			return a.printPersonalizePlans(cmd.Context(), cmd.OutOrStdout(), st, tenants)
		},
	}
	addConfigFlags(cmd)
	cmd.Flags().Bool("json", false, "print the plans as JSON")
	return cmd
}

func printPlan(w io.Writer, p *people.Plan) {
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
	var total float64
	for _, c := range p.Calls {
		total += c.Total
	}
	if len(p.Calls) > 0 {
		fmt.Fprintf(w, "  would call createPeople %d times for %d people, granting %g in all\n", len(p.Calls), p.Create.Len(), total)
	}
	for _, r := range p.Rejections {
		fmt.Fprintf(w, "  rejected %s\n", r.Error())
	}
	for _, tr := range p.Trips {
		fmt.Fprintf(w, "  SAFEGUARD %s: %s\n", tr.Name, tr.Message)
	}
}

func newRunCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run one cycle of a job and exit (the Kubernetes CronJob entry point)",
		Long: `run runs one cycle of a job for each tenant (or the one --tenant names), through the same
code path as the daemon's scheduled runs, and exits with a code that tells the outcome:
0 done, 1 failed, 2 usage or configuration, 3 safeguard, 4 attention, 5 another run holds the lock.`,
	}
	cmd.AddCommand(
		newRunJobCmd("people", "Sync people from each tenant's exports to the platform, granting balances exactly once", []store.Job{store.JobPeople}),
		newRunJobCmd("personalize", "Personalize collections for new hires", []store.Job{store.JobPersonalize}),
		newRunJobCmd("orders", "Poll orders into the reporting tables", []store.Job{store.JobOrders}),
		newRunJobCmd("all", "Run people, personalize and orders, one after the other, for each tenant", allJobs()),
	)
	return cmd
}

func printReport(w io.Writer, rep *people.Report) {
	if len(rep.Exports) == 0 {
		fmt.Fprintf(w, "tenant %s: no export ready; %d grants held\n", rep.Tenant, rep.HeldGrants)
		return
	}
	for _, e := range rep.Exports {
		keys := make([]string, 0, len(e.Counts))
		for k := range e.Counts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s=%d", k, e.Counts[k]))
		}
		fmt.Fprintf(w, "tenant %s, %s: %s (run %s) %s\n", rep.Tenant, e.Source, e.Outcome, e.RunID, strings.Join(parts, " "))
		for _, r := range e.Rejections {
			fmt.Fprintf(w, "  rejected %s\n", r.Error())
		}
		for _, t := range e.Safeguards {
			fmt.Fprintf(w, "  SAFEGUARD %s: %s\n", t.Name, t.Message)
		}
		if e.Error != "" {
			fmt.Fprintf(w, "  error: %s\n", e.Error)
		}
	}
	if rep.HeldGrants > 0 {
		fmt.Fprintf(w, "tenant %s: %d grants held for an operator (hrsync grants list)\n", rep.Tenant, rep.HeldGrants)
	}
}

func newGrantsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "grants",
		Short: "List the grants ledger and decide about held grants",
		Long: `A grant whose outcome is unknown (a timeout after sending, a 5xx, a crash between the call and
its commit) is held, never resent on its own. Check the person's balance on the platform, then:
  release KEY  it was NOT applied: it is sent again with the next export listing the person
               (dropping the same file again is enough: only released people are sent)
  confirm KEY  it WAS applied: record it as applied
  void KEY     never send it`,
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List grants (default: the held ones)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, st, err := loadAppStoreReadOnly(cmd)
			if err != nil {
				return err
			}
			defer st.Close() //nolint:errcheck // read only
			states, _ := cmd.Flags().GetStringSlice("state")
			f := store.GrantFilter{}
			if name, _ := cmd.Flags().GetString("tenant"); name != "" {
				f.Tenant = name
			}
			for _, s := range states {
				f.States = append(f.States, model.GrantState(s))
			}
			grants, err := st.ListGrants(cmd.Context(), f)
			if err != nil {
				return err
			}
			if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
				return printJSON(cmd.OutOrStdout(), grants)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "KEY\tSTATE\tAMOUNT\tATTEMPTS\tUPDATED\tLAST ERROR")
			for _, g := range grants {
				fmt.Fprintf(tw, "%s\t%s\t%g\t%d\t%s\t%s\n", g.Key, g.State, g.Amount, g.Attempts,
					g.UpdatedAt.UTC().Format("2006-01-02T15:04:05Z"), g.LastError)
			}
			return tw.Flush()
		},
	}
	addConfigFlags(list)
	list.Flags().StringSlice("state", []string{string(model.GrantUnknown), string(model.GrantPending)}, "states to list (pending, applied, not_applied, unknown, voided)")
	list.Flags().Bool("json", false, "print JSON")
	cmd.AddCommand(list)

	decide := func(use, done, short string, do func(ctx context.Context, st *store.Store, key, note string) error) *cobra.Command {
		c := &cobra.Command{
			Use:   use + " KEY...",
			Short: short,
			Args:  cobra.MinimumNArgs(1),
			RunE: func(cmd *cobra.Command, keys []string) error {
				_, st, err := loadAppStore(cmd)
				if err != nil {
					return err
				}
				note, _ := cmd.Flags().GetString("note")
				defer st.Close() //nolint:errcheck // each decision is committed on its own
				for _, k := range keys {
					if err := do(cmd.Context(), st, k, note); err != nil {
						return err
					}
					fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", k, done)
				}
				return nil
			},
		}
		addConfigFlags(c)
		c.Flags().String("note", "", "why (kept in the ledger)")
		return c
	}
	cmd.AddCommand(
		decide("release", "released", "Record that held grants were NOT applied, so they are sent again with the next export listing their people",
			func(ctx context.Context, st *store.Store, k, n string) error { return st.ReleaseGrant(ctx, k, n) }),
		decide("confirm", "confirmed", "Record that held grants WERE applied on the platform",
			func(ctx context.Context, st *store.Store, k, n string) error { return st.ConfirmGrant(ctx, k, n) }),
		decide("void", "voided", "Record that grants must never be sent",
			func(ctx context.Context, st *store.Store, k, n string) error { return st.VoidGrant(ctx, k, n) }),
	)
	return cmd
}

func newMigrateCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Create or upgrade hrsync's tables in the configured store",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, st, err := loadAppStore(cmd)
			if err != nil {
				return err
			}
			defer st.Close() //nolint:errcheck // migrations are committed
			cur, latest, err := st.MigrationVersion(cmd.Context())
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "store %s (%s): schema version %d of %d\n", a.cfg.Store.URL, st.Dialect(), cur, latest)
			return nil
		},
	}
	addConfigFlags(cmd)
	return cmd
}
