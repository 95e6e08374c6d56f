package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"go.uber.org/zap"

	"hrsync/config"
	"hrsync/internal/runner"
	"hrsync/model"
	"hrsync/sources"
	"hrsync/store"
	"hrsync/sync/personalize"
)

// personalizeFunc is one personalization cycle of a tenant as a
// runner.Func (`hrsync run personalize`, `run all` and the daemon): its
// report is printed to opts.out. A tenant without collections does nothing.
func (a *app) personalizeFunc(t config.Tenant, st *store.Store, client any, opts jobOptions) runner.Func {
	return func(ctx context.Context) (runner.Result, error) {
		api, ok := client.(personalize.Personalizer)
		if !ok {
			return runner.Result{Outcome: model.OutcomeFailed}, fmt.Errorf("personalize job of %s: the API client cannot personalize", t.Name)
		}
		job, err := a.personalizeJob(t, st, api)
		if err != nil {
			return runner.Result{Outcome: model.OutcomeFailed}, err
		}
		if !job.Enabled() {
			if opts.out != nil {
				fmt.Fprintf(opts.out, "tenant %s: no collection to personalize\n", t.Name)
			}
			return runner.Result{Outcome: model.OutcomeOK}, nil
		}
		rep, err := job.RunOnce(ctx)
		if rep == nil {
			return runner.Result{}, err
		}
		if opts.out != nil {
			printPersonalizeReport(opts.out, rep)
		}
		return runner.Result{Outcome: rep.Outcome(), Counts: rep.Counts, Report: rep}, err
	}
}

// personalizeJob builds the personalization job of one tenant. p may be nil
// for a job that only plans.
func (a *app) personalizeJob(t config.Tenant, st *store.Store, p personalize.Personalizer) (*personalize.Job, error) {
	return personalize.New(personalize.Options{
		Tenant:       t.Name,
		CompanyID:    t.CompanyID,
		Collections:  t.Personalize.Collections,
		WindowBefore: t.Personalize.WindowBefore.Duration,
		WindowAfter:  t.Personalize.WindowAfter.Duration,
		Concurrency:  t.Personalize.Concurrency,
		MaxAttempts:  t.Personalize.MaxAttempts,
	}, st, p, a.lastExport(t, st), a.log.With(zap.String("tenant", t.Name), zap.String("job", "personalize")))
}

// lastExport finds a tenant's last good export, as its kind of source
// keeps it (for a drop folder, the newest file the store records as
// processed; for a SQL source, the query itself).
func (a *app) lastExport(t config.Tenant, st *store.Store) personalize.LastExport {
	last := func(ctx context.Context) (string, string, bool, error) {
		rec, ok, err := st.LastProcessedFile(ctx, t.Name)
		return rec.Name, rec.SHA256, ok, err
	}
	return func(ctx context.Context) (sources.Source, bool, error) {
		src, err := a.openSource(ctx, t)
		if err != nil {
			return nil, false, fmt.Errorf("tenant %s: %w", t.Name, err)
		}
		return src.LastExport(ctx, last)
	}
}

// printPersonalizePlans prints, for `hrsync plan`, who each tenant's next
// personalize run would personalize. Tenants without collections print
// nothing.
func (a *app) printPersonalizePlans(ctx context.Context, w io.Writer, st *store.Store, tenants []config.Tenant) error {
	for _, t := range tenants {
		job, err := a.personalizeJob(t, st, nil)
		if err != nil {
			return withCode(exitUsage, err)
		}
		if !job.Enabled() {
			continue
		}
		p, err := job.BuildPlan(ctx)
		if err != nil {
			return err
		}
		printPersonalizePlan(w, p)
	}
	return nil
}

func printPersonalizePlan(w io.Writer, p *personalize.Plan) {
	if p.Source == "" {
		fmt.Fprintf(w, "tenant %s, personalize: no good export yet\n", p.Tenant)
		return
	}
	fmt.Fprintf(w, "tenant %s, personalize from the last good export %s: %s\n", p.Tenant, p.Source, counts(p.Counts()))
	for _, r := range p.Refused {
		fmt.Fprintf(w, "  collection %s skipped: refused by the platform at %s\n", r.CollectionID, r.RefusedAt.UTC().Format("2006-01-02T15:04:05Z"))
	}
	for _, it := range p.Items {
		fmt.Fprintf(w, "  would personalize %s for collection %s (%s)\n", it.ExternalID, it.CollectionID, it.Reason)
	}
}

func printPersonalizeReport(w io.Writer, rep *personalize.Report) {
	src := rep.Source
	if src == "" {
		src = "no good export yet"
	}
	fmt.Fprintf(w, "tenant %s, personalize from %s: %s (run %s) %s\n", rep.Tenant, src, rep.Outcome(), rep.RunID, counts(rep.Counts))
	for _, r := range rep.Refused {
		fmt.Fprintf(w, "  collection %s is not personalizable (%s); skipped until rechecked\n", r.CollectionID, r.Reason)
	}
	for _, g := range rep.GaveUp {
		fmt.Fprintf(w, "  gave up on %s for collection %s: %s\n", g.ExternalID, g.CollectionID, g.Reason)
	}
	if rep.Error != "" {
		fmt.Fprintf(w, "  error: %s\n", rep.Error)
	}
}

// counts renders named counts as "a=1 b=2", sorted by name.
func counts(c map[string]int) string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, c[k]))
	}
	return strings.Join(parts, " ")
}
