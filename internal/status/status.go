// Package status is what `hrsync status` shows: the last run of each job
// and tenant, and each tenant's backlog (held grants, files waiting,
// personalizations pending, orders still polled, the days each grant rule
// processed), read from the state without changing it.
package status

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"hrsync/config"
	"hrsync/model"
	"hrsync/store"
)

// FilesFunc counts the files of a tenant's drop folder; nil, with no
// error, for a tenant whose source has no folder (a SQL query).
type FilesFunc func(ctx context.Context, t config.Tenant) (*Files, error)

// runsScanned is how many of the newest runs status reads to find
// the last run of each job and tenant.
const runsScanned = 1000

// Report is what `hrsync status --json` prints.
type Report struct {
	Runs    []Run    `json:"runs"`
	Tenants []Tenant `json:"tenants"`
}

// Run is the last run of one job and tenant.
type Run struct {
	Job        string         `json:"job"`
	Tenant     string         `json:"tenant"`
	RunID      string         `json:"runId"`
	Outcome    string         `json:"outcome"`
	StartedAt  time.Time      `json:"startedAt"`
	FinishedAt *time.Time     `json:"finishedAt,omitempty"`
	Counts     map[string]int `json:"counts"`
	Error      string         `json:"error,omitempty"`
	// Reports names the reports beside the run's archived export, relative
	// to the tenant's drop folder.
	Reports []string `json:"reports,omitempty"`
}

// Tenant is a tenant's backlog.
type Tenant struct {
	Name       string `json:"name"`
	HeldGrants int    `json:"heldGrants"`
	// Source is the kind of the tenant's source ("csv", "sql", "scim").
	Source string `json:"source"`
	// Files counts the drop folder's files; nil for a source without one
	// (a SQL query, a SCIM directory).
	Files *Files `json:"files,omitempty"`
	// PersonalizationsPending counts the personalizations still waiting for
	// a Done (pending at the platform, or to be retried).
	PersonalizationsPending *int `json:"personalizationsPending"`
	// Personalizations counts the tenant's personalizations per collection
	// and state (pending, retry, done, error, failed).
	Personalizations map[string]map[string]int `json:"personalizations"`
	// OrdersPolling counts the orders whose status is still polled (neither
	// final nor stopped).
	OrdersPolling *int `json:"ordersPolling"`
	// GrantRules are the tenant's grant rules with the last day the grants
	// job processed for each.
	GrantRules []Rule `json:"grantRules"`
}

// Files counts a drop folder's files.
type Files struct {
	Waiting   int `json:"waiting"`
	Processed int `json:"processed"`
	Failed    int `json:"failed"`
}

// Build reads the state and the drop folders of the tenants.
func Build(ctx context.Context, st *store.Store, tenants []config.Tenant, countFiles FilesFunc) (*Report, error) {
	rep := &Report{Runs: []Run{}, Tenants: []Tenant{}}
	wanted := map[string]bool{}
	for _, t := range tenants {
		wanted[t.Name] = true
	}
	runs, err := st.LastRuns(ctx, runsScanned)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, r := range runs { // newest first: the first of each job and tenant is its last
		key := string(r.Job) + "/" + r.Tenant
		if seen[key] || !wanted[r.Tenant] {
			continue
		}
		seen[key] = true
		sr := Run{Job: string(r.Job), Tenant: r.Tenant, RunID: r.ID, Outcome: string(r.Outcome),
			StartedAt: r.StartedAt.UTC(), Counts: r.Counts, Error: r.Error, Reports: r.Reports}
		if sr.Counts == nil {
			sr.Counts = map[string]int{}
		}
		if !r.FinishedAt.IsZero() {
			f := r.FinishedAt.UTC()
			sr.FinishedAt = &f
		}
		rep.Runs = append(rep.Runs, sr)
	}
	sort.SliceStable(rep.Runs, func(i, j int) bool {
		if rep.Runs[i].Tenant != rep.Runs[j].Tenant {
			return rep.Runs[i].Tenant < rep.Runs[j].Tenant
		}
		return rep.Runs[i].Job < rep.Runs[j].Job
	})
	counts, err := st.PersonalizationCounts(ctx)
	if err != nil {
		return nil, err
	}
	for _, t := range tenants {
		held, err := st.ListGrants(ctx, store.GrantFilter{Tenant: t.Name, States: []model.GrantState{model.GrantUnknown, model.GrantPending}})
		if err != nil {
			return nil, err
		}
		stt := Tenant{Name: t.Name, HeldGrants: len(held), Source: t.Source.Kind()}
		if stt.Files, err = countFiles(ctx, t); err != nil {
			return nil, fmt.Errorf("tenant %s: %w", t.Name, err)
		}
		stt.Personalizations, stt.PersonalizationsPending = personalizationCounts(counts, t.Name)
		if stt.OrdersPolling, err = ordersPolling(ctx, st, t.Name); err != nil {
			return nil, fmt.Errorf("tenant %s: %w", t.Name, err)
		}
		if stt.GrantRules, err = grantRules(ctx, st, t); err != nil {
			return nil, err
		}
		rep.Tenants = append(rep.Tenants, stt)
	}
	return rep, nil
}

// personalizationCounts groups a tenant's personalization counts by
// collection and state, and sums those still waiting for a Done.
func personalizationCounts(all []store.PersonalizationCount, tenant string) (map[string]map[string]int, *int) {
	byCollection := map[string]map[string]int{}
	pending := 0
	for _, c := range all {
		if c.Tenant != tenant {
			continue
		}
		if byCollection[c.CollectionID] == nil {
			byCollection[c.CollectionID] = map[string]int{}
		}
		byCollection[c.CollectionID][string(c.State)] += c.Count
		if c.State == store.PersonalizationPending || c.State == store.PersonalizationRetry {
			pending += c.Count
		}
	}
	return byCollection, &pending
}

// ordersPolling counts the tenant's orders whose status the orders job
// still polls: those neither final nor stopped (store.OpenOrders).
func ordersPolling(ctx context.Context, st *store.Store, tenant string) (*int, error) {
	open, err := st.OpenOrders(ctx, tenant)
	if err != nil {
		return nil, err
	}
	n := len(open)
	return &n, nil
}

// Print prints the status as tables.
func Print(w io.Writer, rep *Report) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tTENANT\tOUTCOME\tSTARTED\tTOOK\tCOUNTS\tERROR")
	if len(rep.Runs) == 0 {
		fmt.Fprintln(tw, "(no run yet)\t\t\t\t\t\t")
	}
	for _, r := range rep.Runs {
		took := "-"
		if r.FinishedAt != nil {
			took = r.FinishedAt.Sub(r.StartedAt).Round(time.Millisecond).String()
		}
		keys := make([]string, 0, len(r.Counts))
		for k := range r.Counts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s=%d", k, r.Counts[k]))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Job, r.Tenant, r.Outcome,
			r.StartedAt.Format(time.RFC3339), took, strings.Join(parts, " "), r.Error)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("print status: %w", err)
	}
	for _, r := range rep.Runs {
		if len(r.Reports) > 0 {
			fmt.Fprintf(w, "%s %s reports (in the drop folder): %s\n", r.Job, r.Tenant, strings.Join(r.Reports, ", "))
		}
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TENANT\tHELD GRANTS\tFILES WAITING\tPROCESSED\tFAILED\tPERSONALIZATIONS PENDING\tORDERS POLLED")
	na := func(p *int) string {
		if p == nil {
			return "n/a"
		}
		return fmt.Sprint(*p)
	}
	for _, t := range rep.Tenants {
		waiting, processed, failed := "n/a ("+t.Source+")", "n/a", "n/a"
		if t.Files != nil {
			waiting, processed, failed = fmt.Sprint(t.Files.Waiting), fmt.Sprint(t.Files.Processed), fmt.Sprint(t.Files.Failed)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", t.Name, t.HeldGrants, waiting, processed, failed,
			na(t.PersonalizationsPending), na(t.OrdersPolling))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("print status: %w", err)
	}
	printPersonalizations(w, rep)
	printGrantRules(w, rep)
	return nil
}

// printPersonalizations prints pending, done and failed personalizations
// per tenant and collection, when there are any.
func printPersonalizations(w io.Writer, rep *Report) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	header := false
	for _, t := range rep.Tenants {
		collections := make([]string, 0, len(t.Personalizations))
		for c := range t.Personalizations {
			collections = append(collections, c)
		}
		sort.Strings(collections)
		for _, c := range collections {
			if !header {
				fmt.Fprintln(w)
				fmt.Fprintln(tw, "TENANT\tCOLLECTION\tPENDING\tDONE\tFAILED")
				header = true
			}
			n := t.Personalizations[c]
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\n", t.Name, c,
				n[string(store.PersonalizationPending)]+n[string(store.PersonalizationRetry)],
				n[string(store.PersonalizationDone)],
				n[string(store.PersonalizationError)]+n[string(store.PersonalizationFailed)])
		}
	}
	_ = tw.Flush()
}

// Rule is, in `hrsync status`, what the grants job did of one rule.
type Rule struct {
	Rule     string  `json:"rule"`
	LastDay  *string `json:"lastDay"`
	FirstDay *string `json:"firstDay"`
}

// grantRules reads the days the grants job processed for each of a
// tenant's rules; a rule never run has no days.
func grantRules(ctx context.Context, st *store.Store, t config.Tenant) ([]Rule, error) {
	out := []Rule{}
	if len(t.Grants.Rules) == 0 {
		return out, nil
	}
	days, err := st.GrantDays(ctx, t.Name)
	if err != nil {
		return nil, fmt.Errorf("tenant %s: %w", t.Name, err)
	}
	for _, r := range t.Grants.Rules {
		sr := Rule{Rule: r.Name}
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
func printGrantRules(w io.Writer, rep *Report) {
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
