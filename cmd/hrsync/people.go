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

	"hrsync/config"
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
with the tenant's column mapping and prints each export's counts and its rejected rows with their
line, field and reason: the first 50 of each export, or every one with --all (-o json lists every one).
Exit code 0 when every row is valid, 4 when rows were rejected, 1 when a file cannot be read.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, files []string) error {
			format, err := outputFormat(cmd)
			if err != nil {
				return err
			}
			a, err := loadApp(cmd)
			if err != nil {
				return err
			}
			res, err := validateExports(cmd, a, files)
			if err != nil && format == outputText {
				all, _ := cmd.Flags().GetBool("all")
				printValidation(cmd.OutOrStdout(), res, all)
			}
			if err != nil {
				return err
			}
			if format == outputJSON {
				err = printJSON(cmd.OutOrStdout(), res)
			} else {
				all, _ := cmd.Flags().GetBool("all")
				printValidation(cmd.OutOrStdout(), res, all)
			}
			if err == nil && res.Rejected > 0 {
				err = withCode(exitAttention, fmt.Errorf("%d rows rejected", res.Rejected))
			}
			return err
		},
	}
	addConfigFlags(cmd)
	addOutputFlag(cmd)
	cmd.Flags().Bool("all", false, "list every rejected row (default: the first 50 of each export)")
	return cmd
}

// validateRejectionLimit is how many rejections of an export validate
// prints as text without --all.
const validateRejectionLimit = 50

// validation is what `hrsync validate -o json` prints.
type validation struct {
	Exports []validatedExport `json:"exports"`
	// Rejected counts the rows rejected in all exports.
	Rejected int `json:"rejected"`
}

// validatedExport is one export validate read.
type validatedExport struct {
	Tenant string        `json:"tenant"`
	Source string        `json:"source"`
	Stats  sources.Stats `json:"stats"`
	// Rejections lists every rejection, in line order.
	Rejections []model.Rejection `json:"rejections"`
}

// validateExports reads the exports named (or each tenant's ready ones)
// with the tenant's mapping. On an error it returns the exports read until
// then with it.
func validateExports(cmd *cobra.Command, a *app, files []string) (*validation, error) {
	res := &validation{Exports: []validatedExport{}}
	tenants, err := a.tenants(cmd)
	if err != nil {
		return res, err
	}
	for _, t := range tenants {
		feed, err := a.feed(t, files)
		if err != nil {
			return res, err
		}
		exports, err := feed(cmd.Context())
		if err != nil {
			return res, err
		}
		for _, e := range exports {
			ve, err := validateExport(cmd.Context(), t.Name, e)
			if err != nil {
				return res, err
			}
			res.Exports = append(res.Exports, ve)
			res.Rejected += ve.Stats.Rejected
		}
		if len(files) > 0 {
			break // the files were read with the first tenant's mapping
		}
	}
	return res, nil
}

// validateExport reads one export and collects its rejections.
func validateExport(ctx context.Context, tenant string, e people.Export) (validatedExport, error) {
	rej := []model.Rejection{}
	st, err := e.Read(ctx, sources.Handler{
		Accept: func(model.Person) error { return nil },
		Reject: func(r model.Rejection) error { rej = append(rej, r); return nil },
	})
	if err != nil {
		return validatedExport{}, fmt.Errorf("%s: %w", e.Name(), err)
	}
	// The first row of a duplicated key is rejected after the last row:
	// the report goes in line order.
	slices.SortStableFunc(rej, func(a, b model.Rejection) int { return cmp.Compare(a.Line, b.Line) })
	return validatedExport{Tenant: tenant, Source: e.Name(), Stats: st, Rejections: rej}, nil
}

// printValidation prints each export's counts and its rejections: the
// first validateRejectionLimit of each, or every one when all is set.
func printValidation(w io.Writer, res *validation, all bool) {
	if len(res.Exports) == 0 {
		fmt.Fprintln(w, "no export is ready")
		return
	}
	for _, e := range res.Exports {
		fmt.Fprintf(w, "%s (tenant %s): %d rows, %d accepted, %d rejected\n", e.Source, e.Tenant, e.Stats.Rows, e.Stats.Accepted, e.Stats.Rejected)
		shown := len(e.Rejections)
		if !all {
			shown = min(shown, validateRejectionLimit)
		}
		for _, r := range e.Rejections[:shown] {
			fmt.Fprintf(w, "  %s\n", r.Error())
		}
		if more := len(e.Rejections) - shown; more > 0 {
			fmt.Fprintf(w, "  and %d more rejections (--all lists every one)\n", more)
		}
	}
}

func newPlanCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plan [FILE...]",
		Short: "Show the diff and every call a run would make, without making any",
		Long: `plan diffs each ready export (or each FILE) against hrsync's state and prints what a run
would do: new, changed, returned, departed and held people (the first 20 of each by externalId
and name), rejected rows, the createPeople calls with the balances they grant, and the safeguards
the export trips. It changes nothing. -o json prints the plans as a JSON list.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, files []string) error {
			format, err := outputFormat(cmd)
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
			plans, err := buildPlans(cmd, a, st, tenants, files)
			if err != nil {
				return err
			}
			if format == outputJSON {
				return printJSON(cmd.OutOrStdout(), plans)
			}
			for _, p := range plans {
				printPlan(cmd.OutOrStdout(), p)
			}
			if len(plans) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "no export is ready")
			}
			if err := a.printPersonalizePlans(cmd.Context(), cmd.OutOrStdout(), st, tenants); err != nil {
				return err
			}
			return a.printGrantsPlans(cmd.Context(), cmd.OutOrStdout(), st, tenants)
		},
	}
	addConfigFlags(cmd)
	addOutputFlag(cmd)
	cmd.AddCommand(newPlanGrantsCmd())
	return cmd
}

// buildPlans plans each ready export of each tenant, or each file.
func buildPlans(cmd *cobra.Command, a *app, st *store.Store, tenants []config.Tenant, files []string) ([]*people.Plan, error) {
	plans := []*people.Plan{}
	for _, t := range tenants {
		job, err := a.peopleJob(t, st, nil)
		if err != nil {
			return nil, withCode(exitUsage, err)
		}
		feed, err := a.feed(t, files)
		if err != nil {
			return nil, err
		}
		exports, err := feed(cmd.Context())
		if err != nil {
			return nil, err
		}
		for _, e := range exports {
			p, err := job.BuildPlan(cmd.Context(), e)
			if err != nil {
				return nil, err
			}
			plans = append(plans, p)
		}
	}
	return plans, nil
}

// printPlan prints a plan as text: its counts, its calls, the people it
// would create, change, bring back, mark departed or hold (the first
// listLimit of each, by externalId and name only), its rejections and
// the safeguards it trips.
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
		fmt.Fprintf(w, "  would call createPeople %s for %d people, granting %s in all\n", times(len(p.Calls)), p.Create.Len(), money(total))
	}
	printPlanPeople(w, p)
	for _, r := range p.Rejections {
		fmt.Fprintf(w, "  rejected %s\n", r.Error())
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
func printPlanPeople(w io.Writer, p *people.Plan) {
	printList(w, "new", p.Create.Len(), listLimit, func(i int) string {
		person := p.Create.At(i)
		return personLabel(person) + ", granted " + money(grantOf(p, i))
	})
	changed := p.ChangedPeople()
	printList(w, "changed", len(p.Changed), listLimit, func(i int) string {
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
	printList(w, "returned", len(p.Returned), listLimit, func(i int) string {
		if i < returned.Len() {
			return personLabel(returned.At(i))
		}
		return p.Returned[i]
	})
	printList(w, "departed", len(p.Departed), listLimit, func(i int) string { return p.Departed[i] })
	printList(w, "held (a grant waits for an operator)", len(p.Held), listLimit, func(i int) string { return p.Held[i] })
}

// grantOf returns what the plan grants the i-th person to create: the
// calls list the people of Create in order.
func grantOf(p *people.Plan, i int) float64 {
	for _, pc := range p.Calls {
		if i < len(pc.Grants) {
			return pc.Grants[i]
		}
		i -= len(pc.Grants)
	}
	return 0
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

func newRunCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run one cycle of a job and exit (the Kubernetes CronJob entry point)",
		Long: `run runs one cycle of a job for each tenant (or the one --tenant names), through the same
code path as the daemon's scheduled runs, and exits with a code that tells the outcome:
0 done, 1 failed, 2 usage or configuration, 3 safeguard, 4 attention, 5 another run holds the lock.

--shard i/n runs only the tenants of shard i of n (numbered from 1): a tenant's shard depends only
on its name and n, so n CronJobs with --shard 1/n ... n/n split the tenants between them, each
tenant in exactly one. A shard that holds no tenant exits 0.`,
	}
	cmd.PersistentFlags().String("shard", "", "run only the tenants of shard i of n, e.g. 2/3 (a stable split of the tenants over n CronJobs)")
	cmd.AddCommand(
		newRunJobCmd("people", "Sync people from each tenant's exports to the platform, granting balances exactly once", []model.Job{model.JobPeople}),
		newRunJobCmd("personalize", "Personalize collections for new hires", []model.Job{model.JobPersonalize}),
		newRunJobCmd("orders", "Poll orders into the reporting tables", []model.Job{model.JobOrders}),
		newRunJobCmd("grants", "Grant birthdays, work anniversaries and campaigns by the tenants' rules, exactly once", []model.Job{model.JobGrants}),
		newRunJobCmd("all", "Run people, grants, personalize and orders, one after the other, for each tenant", allJobs()),
	)
	return cmd
}

// printReport prints what a people run did; configPath is the configuration
// file as the operator named it, for the next step after a safeguard stop.
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
		if e.Next != "" {
			fmt.Fprintf(w, "  next: %s\n", e.Next)
		}
	}
	if rep.HeldGrants > 0 {
		fmt.Fprintf(w, "tenant %s: %d grants held for an operator (hrsync grants list)\n", rep.Tenant, rep.HeldGrants)
	}
}

// addScopeFlags adds --job and --rule, which narrow a grants command to
// the grants of one job and rule.
func addScopeFlags(c *cobra.Command) {
	c.Flags().String("job", "", "only the grants of this job (people, grants)")
	c.Flags().String("rule", "", "only the grants of this rule (a grant's reason: initial, or a grants rule's name)")
}

// grantScope reads --job and --rule; a job that grants nothing is a
// usage error.
func grantScope(cmd *cobra.Command) (model.Job, string, error) {
	job, _ := cmd.Flags().GetString("job")
	rule, _ := cmd.Flags().GetString("rule")
	if j := model.Job(job); j != "" && j != model.JobPeople && j != model.JobGrants {
		return "", "", withCode(exitUsage, fmt.Errorf("--job %q: want %s or %s", job, model.JobPeople, model.JobGrants))
	}
	return model.Job(job), rule, nil
}

// inScope refuses a decision about grant key when it is not of job and
// rule (either empty means any). A grant's job and rule never change.
func inScope(ctx context.Context, st *store.Store, key string, job model.Job, rule string) error {
	if job == "" && rule == "" {
		return nil
	}
	g, err := st.Grant(ctx, key)
	if err != nil {
		return err
	}
	if job != "" && g.Job != string(job) || rule != "" && g.Reason != rule {
		return fmt.Errorf("grant %s is of job %s, rule %s: outside --job %s --rule %s; nothing decided for it",
			key, g.Job, g.Reason, orAny(string(job)), orAny(rule))
	}
	return nil
}

// orAny renders an empty filter as "any".
func orAny(s string) string {
	if s == "" {
		return "any"
	}
	return s
}

// printGrants prints grants as a table, amounts as money.
func printGrants(w io.Writer, grants []model.Grant) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tJOB\tSTATE\tAMOUNT\tATTEMPTS\tUPDATED\tLAST ERROR\tNOTE")
	if len(grants) == 0 {
		fmt.Fprintln(tw, "(none)\t\t\t\t\t\t\t")
	}
	for _, g := range grants {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", g.Key, g.Job, g.State, money(g.Amount), g.Attempts,
			g.UpdatedAt.UTC().Format("2006-01-02T15:04:05Z"), g.LastError, g.Note)
	}
	return tw.Flush()
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
