// Package status is what `hrsync status` shows: the last run of each job
// and tenant, and each tenant's backlog (held grants, files waiting,
// personalizations pending, orders still polled, the days each grant rule
// processed), read from the state without changing it.
package status

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"hrsync/config"
	"hrsync/internal/runner"
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
	Name string `json:"name"`
	// Source is the kind of the tenant's source ("csv", "sql", "scim").
	Source string `json:"source"`
	// SourceProblems are what keeps the tenant's source from being used
	// (its configuration or its folder), empty when it can be read; the
	// history and the backlog are shown all the same.
	SourceProblems []string `json:"sourceProblems"`
	HeldGrants     int      `json:"heldGrants"`
	// Files counts the drop folder's files; nil for a source without one
	// (a SQL query, a SCIM directory), or when the source has a problem.
	Files *Files `json:"files,omitempty"`
	// ApproveFromDropFolder says an HR admin may approve a stopped export
	// by moving it into approve/ (safeguards.approveFromDropFolder).
	ApproveFromDropFolder bool `json:"approveFromDropFolder"`
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
	// Approve counts the files an HR admin placed in approve/.
	Approve int `json:"approve"`
}

// Build reads the state and the drop folders of the tenants. A source
// that cannot be read is the tenant's SourceProblems, never an error: only
// a state that cannot be read fails it.
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
	runs = runner.WorstOfCycles(runs) // a cycle's outcome is its worst run's
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
		stt := Tenant{Name: t.Name, Source: t.Source.Kind(), HeldGrants: len(held), SourceProblems: sourceProblems(t),
			ApproveFromDropFolder: t.Safeguards.ApproveFromDropFolder}
		if len(stt.SourceProblems) == 0 {
			if stt.Files, err = countFiles(ctx, t); err != nil {
				stt.SourceProblems = []string{err.Error()}
			}
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

// sourceProblems are the problems of the tenant's source that the
// configuration set aside, without the tenant's index ("source.sql.dsnEnv:
// environment variable X is not set (line 12)"); empty when none.
func sourceProblems(t config.Tenant) []string {
	out := []string{}
	for _, p := range t.SourceProblems {
		if _, rest, ok := strings.Cut(p.Path, "]."); ok && strings.HasPrefix(p.Path, "tenants[") {
			p.Path = rest
		}
		out = append(out, p.String())
	}
	return out
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
