package main

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"hrsync/config"
	"hrsync/internal/jsonstream"
	"hrsync/model"
	"hrsync/store"
	"hrsync/sync/grants"
	"hrsync/sync/people"
	"hrsync/sync/personalize"
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
			all, _ := cmd.Flags().GetBool("all")
			switch {
			case format == outputText: // what was read, before any error
				people.PrintValidation(cmd.OutOrStdout(), res, all)
			case err == nil:
				err = printJSON(cmd.OutOrStdout(), res)
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

// validateExports reads the exports named (or each tenant's ready ones)
// with the tenant's mapping. On an error it returns the exports read until
// then with it.
func validateExports(cmd *cobra.Command, a *app, files []string) (*people.Validation, error) {
	tenants, err := a.tenants(cmd)
	if err != nil {
		return &people.Validation{Exports: []people.ValidatedExport{}}, err
	}
	// A tenant fed by SCIM keeps its directory in the state: without FILE,
	// validate reads it there, opened read-only (nothing is created).
	var st *store.Store
	if len(files) == 0 && slices.ContainsFunc(tenants, readsState) {
		if st, err = a.openStoreReadOnly(cmd); err != nil {
			return &people.Validation{Exports: []people.ValidatedExport{}}, err
		}
		defer st.Close()
	}
	feed := func(t config.Tenant) (people.Feed, error) { return a.feed(t, st, files) }
	// Files named are read with the first tenant's mapping.
	return people.Validate(cmd.Context(), tenants, feed, len(files) > 0)
}

// readsState reports whether a tenant's source is read from hrsync's own
// state (the SCIM directory) rather than from outside it.
func readsState(t config.Tenant) bool { return t.Source.Section == "scim" }

func newPlanCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plan [FILE...]",
		Short: "Show the diff and every call a run would make, without making any",
		Long: `plan diffs each ready export (or each FILE) against hrsync's state and prints what a run
would do: new, changed, returned, departed and held people (the first 20 of each by externalId
and name), rejected rows, the createPeople calls with the balances they grant, and the safeguards
the export trips, then who the next personalize run would personalize and what the grant rules
would grant. It changes nothing. -o json prints one object with the same sections: people (each
export's plan, with the new people and their grants), personalize and grants.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, files []string) error {
			return withReadOnly(cmd, false, func(ro readOnly) error { return runPlan(cmd, ro, files) })
		},
	}
	addConfigFlags(cmd)
	addOutputFlag(cmd)
	cmd.AddCommand(newPlanGrantsCmd())
	return cmd
}

// plans is what `hrsync plan -o json` prints: the sections the text shows.
type plans struct {
	// People are the plans of each ready export (or each file).
	People []*people.Plan `json:"people"`
	// Personalize are the plans of the tenants that personalize.
	Personalize []*personalize.Plan `json:"personalize"`
	// Grants are the plans of the tenants with grant rules.
	Grants []*grants.Plan `json:"grants"`
}

// runPlan prints the people plans of each ready export (or each file),
// then the personalize and grants plans of the tenants.
func runPlan(cmd *cobra.Command, ro readOnly, files []string) error {
	var doc plans
	var err error
	if doc.People, err = buildPlans(cmd, ro, files); err != nil {
		return err
	}
	env := ro.a.planEnv(ro.st)
	if doc.Personalize, err = personalize.Plans(cmd.Context(), env, ro.st, ro.tenants); err != nil {
		return err
	}
	if doc.Grants, err = grants.Plans(cmd.Context(), env, ro.st, ro.tenants, time.Time{}); err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	if ro.asJSON {
		return printPlansJSON(w, doc)
	}
	for _, p := range doc.People {
		people.PrintPlan(w, p)
	}
	if len(doc.People) == 0 {
		fmt.Fprintln(w, "no export is ready")
	}
	for _, p := range doc.Personalize {
		personalize.PrintPlan(w, p)
	}
	for _, p := range doc.Grants {
		grants.PrintPlan(w, p, false)
	}
	return nil
}

// printPlansJSON prints doc as printJSON does, each people plan streamed
// (a first import's calls and new people are never held as JSON).
func printPlansJSON(w io.Writer, doc plans) error {
	s := jsonstream.New(w, "", "  ")
	s.Begin('{')
	s.Key("people")
	if doc.People == nil {
		s.Value(doc.People)
	} else {
		s.Begin('[')
		for _, p := range doc.People {
			s.Elem()
			s.Nested(func(w io.Writer, prefix string) error { return p.WriteJSON(w, prefix, "  ") })
		}
		s.End(']')
	}
	s.Key("personalize")
	s.Value(doc.Personalize)
	s.Key("grants")
	s.Value(doc.Grants)
	s.End('}')
	s.Raw("\n")
	return s.Flush()
}

// buildPlans plans each ready export of each tenant, or each file.
func buildPlans(cmd *cobra.Command, ro readOnly, files []string) ([]*people.Plan, error) {
	plans := []*people.Plan{}
	for _, t := range ro.tenants {
		job, err := people.NewFor(ro.a.planEnv(ro.st), ro.st, t, nil)
		if err != nil {
			return nil, withCode(exitUsage, err)
		}
		feed, err := ro.a.feed(t, ro.st, files)
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
	cmd.AddCommand(newRunCmds()...)
	return cmd
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
			defer st.Close()
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
