package personalize

import (
	"context"
	"fmt"
	"io"

	"hrsync/config"
	"hrsync/internal/metrics"
	"hrsync/internal/runner"
	"hrsync/internal/textfmt"
	"hrsync/model"
	"hrsync/store"
)

// The personalization job registers with the runner after the people sync
// and the grants job, once the day's new hires are known.
func init() {
	runner.RegisterKind(runner.Kind{
		Job:      model.JobPersonalize,
		Order:    30,
		Short:    "Personalize collections for new hires",
		Schedule: func(t config.Tenant) string { return t.Schedules.Personalize },
		Gauges:   []string{metrics.NamePersonalizationsPending, metrics.NamePersonalizationsFailed},
		Cycle:    cycle,
	})
}

// OptionsFor maps a tenant's configuration to the personalization job's
// options.
func OptionsFor(t config.Tenant) Options {
	return Options{
		Tenant:       t.Name,
		CompanyID:    t.CompanyID,
		Collections:  t.Personalize.Collections,
		WindowBefore: t.Personalize.WindowBefore.Duration,
		WindowAfter:  t.Personalize.WindowAfter.Duration,
		Concurrency:  t.Personalize.Concurrency,
		MaxAttempts:  t.Personalize.MaxAttempts,
	}
}

// NewFor builds the personalization job of tenant t from env over st; p
// may be nil for a job that only plans.
func NewFor(env runner.Env, st *store.Store, t config.Tenant, p Personalizer) (*Job, error) {
	var export LastExport
	if env.Sources != nil {
		export = env.Sources.LastExport(t)
	}
	return New(OptionsFor(t), st, p, export, env.JobLog(model.JobPersonalize, t.Name))
}

// cycle is one personalization cycle of a tenant as a runner.Func: its
// report is printed to env.Out. A tenant without collections does nothing.
func cycle(env runner.Env, t config.Tenant) runner.Func {
	return func(ctx context.Context) (runner.Result, error) {
		if env.API == nil {
			return runner.Result{Outcome: model.OutcomeFailed}, fmt.Errorf("personalize job of %s: no API client", t.Name)
		}
		job, err := NewFor(env, env.Store, t, env.API)
		if err != nil {
			return runner.Result{Outcome: model.OutcomeFailed}, err
		}
		if !job.Enabled() {
			if env.Out != nil {
				fmt.Fprintf(env.Out, "tenant %s: no collection to personalize\n", t.Name)
			}
			return runner.Result{Outcome: model.OutcomeOK}, nil
		}
		rep, err := job.RunOnce(ctx)
		if rep == nil {
			return runner.Result{}, err
		}
		if env.Out != nil {
			PrintReport(env.Out, rep)
		}
		return runner.Result{Outcome: rep.Outcome(), Counts: rep.Counts, Report: rep}, err
	}
}

// Plans are, for `hrsync plan`, who each tenant's next personalize run
// would personalize; tenants without collections have none.
func Plans(ctx context.Context, env runner.Env, st *store.Store, tenants []config.Tenant) ([]*Plan, error) {
	plans := []*Plan{}
	for _, t := range tenants {
		job, err := NewFor(env, st, t, nil)
		if err != nil {
			return nil, fmt.Errorf("tenant %s: %w", t.Name, err)
		}
		if !job.Enabled() {
			continue
		}
		p, err := job.BuildPlan(ctx)
		if err != nil {
			return nil, err
		}
		plans = append(plans, p)
	}
	return plans, nil
}

// PrintPlan prints who a personalize run would personalize, and the
// collections it skips.
func PrintPlan(w io.Writer, p *Plan) {
	if p.Source == "" {
		fmt.Fprintf(w, "tenant %s, personalize: no good export yet\n", p.Tenant)
		return
	}
	fmt.Fprintf(w, "tenant %s, personalize from the last good export %s: %s\n", p.Tenant, p.Source, textfmt.Counts(p.Counts()))
	for _, r := range p.Refused {
		fmt.Fprintf(w, "  collection %s skipped: refused by the platform at %s\n", r.CollectionID, r.RefusedAt.UTC().Format("2006-01-02T15:04:05Z"))
	}
	for _, it := range p.Items {
		fmt.Fprintf(w, "  would personalize %s for collection %s (%s)\n", it.ExternalID, it.CollectionID, it.Reason)
	}
}

// PrintReport prints what a personalize run did.
func PrintReport(w io.Writer, rep *Report) {
	src := rep.Source
	if src == "" {
		src = "no good export yet"
	}
	fmt.Fprintf(w, "tenant %s, personalize from %s: %s (run %s) %s\n", rep.Tenant, src, rep.Outcome(), rep.RunID, textfmt.Counts(rep.Counts))
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
