package main

// The metrics of `hrsync daemon` and `hrsync run`: every series of the known
// jobs, tenants and outcomes created at zero, the gauges the daemon reads at
// scrape time, and the push of a one-shot run to a Pushgateway.

import (
	"context"
	"hrsync/internal/runner"
	"slices"
	"time"

	"go.uber.org/zap"

	"hrsync/config"
	"hrsync/internal/metrics"
	"hrsync/model"
	"hrsync/sources"
	"hrsync/sources/registry"
	"hrsync/store"
)

// pushTimeout bounds the push at the end of a run, retries included: short
// enough to end within a pod's termination grace period after a SIGTERM.
const pushTimeout = 15 * time.Second

// newMetrics returns metrics with hrsync_build_info set and every series of
// the jobs (allJobs), the tenants, the finished outcomes and the tenants'
// grant rules at zero.
func newMetrics(tenants []config.Tenant) *metrics.Metrics {
	m := metrics.New()
	known := metrics.Known{Tenants: tenantNames(tenants)}
	for _, j := range runner.Jobs() {
		known.Jobs = append(known.Jobs, string(j))
	}
	for _, o := range model.FinishedOutcomes() {
		known.Outcomes = append(known.Outcomes, string(o))
	}
	for _, t := range tenants {
		for _, r := range t.Grants.Rules {
			known.Rules = append(known.Rules, metrics.Rule{Job: string(model.JobGrants), Tenant: t.Name, Rule: r.Name})
		}
	}
	m.Init(version, known)
	return m
}

// seedTimeout bounds the reads of seedMetrics.
const seedTimeout = 10 * time.Second

// seedRuns is how many of the newest runs seedMetrics reads for the times of
// the last run of each job, tenant and outcome: an outcome absent from them
// is left out (never given a wrong time).
const seedRuns = 2000

// seedMetrics starts the time of the last success of each job and tenant
// (the newest finished ok or attention run, whichever replica made it), the
// time of the last run of each outcome, and the grants held of each tenant,
// from the store: a restarted daemon
// (or a run whose Pushgateway lost its groups) shows them before its first
// run, so that an alert on an old success or on held grants does not go
// blind at a restart. A store that cannot be read is logged; the series
// then wait for the first run.
func (a *app) seedMetrics(ctx context.Context, m *metrics.Metrics, st *store.Store, tenants []config.Tenant) {
	ctx, cancel := context.WithTimeout(ctx, seedTimeout)
	defer cancel()
	names := tenantNames(tenants)
	last, err := st.LastSuccesses(ctx)
	if err != nil {
		a.log.Warn("the time of the last success is not read from the store; it shows after the next success", zap.Error(err))
	}
	for k, at := range last {
		if slices.Contains(names, k.Tenant) && slices.Contains(runner.Jobs(), k.Job) {
			m.SetLastSuccess(string(k.Job), k.Tenant, at)
		}
	}
	runs, err := st.LastRuns(ctx, seedRuns)
	if err != nil {
		a.log.Warn("the times of the last runs are not read from the store; they show after the next runs", zap.Error(err))
	}
	for _, r := range runner.WorstOfCycles(runs) {
		if !r.DryRun && !r.FinishedAt.IsZero() && slices.Contains(names, r.Tenant) && slices.Contains(runner.Jobs(), r.Job) {
			m.SetLastRun(string(r.Job), r.Tenant, string(r.Outcome), r.FinishedAt)
		}
	}
	held, err := st.HeldGrantCounts(ctx)
	if err != nil {
		a.log.Warn("the grants held are not read from the store; they show after the next people run", zap.Error(err))
		return
	}
	for _, t := range names {
		m.SetGrantsHeld(string(model.JobPeople), t, held[t])
	}
}

// tenantNames lists the tenants' names (never nil, for JSON).
func tenantNames(tenants []config.Tenant) []string {
	names := make([]string, 0, len(tenants))
	for _, t := range tenants {
		names = append(names, t.Name)
	}
	return names
}

// watchGauges adds the gauges the daemon reads at scrape time: the files
// waiting in each CSV drop folder, and each tenant's personalizations and
// orders waiting in st. A source that starts failing is logged once.
func (a *app) watchGauges(m *metrics.Metrics, tenants []config.Tenant, st *store.Store) {
	var folders []metrics.Folder
	for _, t := range tenants {
		if o, err := registry.Of(t.Source.Options); err != nil || !o.HasFolder() {
			continue
		}
		folders = append(folders, metrics.Folder{Tenant: t.Name, Waiting: func(ctx context.Context) ([]time.Time, error) {
			return waitingTimes(ctx, t)
		}})
	}
	onError := func(source, tenant string, err error) {
		a.log.Warn("a metric's source cannot be read; its gauges are left out of the scrapes until it can",
			zap.String("source", source), zap.String("tenant", tenant), zap.Error(err))
	}
	m.WatchFolders(folders, onError)
	m.WatchBacklog(tenantNames(tenants), func(ctx context.Context, tenant string) (metrics.Backlog, error) {
		b, err := st.Backlog(ctx, tenant)
		return metrics.Backlog{PersonalizationsPending: b.PersonalizationsPending,
			PersonalizationsFailed: b.PersonalizationsFailed, OrdersNotPolled: b.OrdersNotPolled}, err
	}, 0, onError)
}

// waitingTimes lists the modification times of the files waiting in a
// tenant's drop folder, whatever backend holds it: listed at once, no link
// followed, no file read (sources.DropFolder.Waiting).
func waitingTimes(ctx context.Context, t config.Tenant) ([]time.Time, error) {
	folder, err := openFolder(ctx, t)
	if err != nil {
		return nil, err
	}
	return folder.Waiting(ctx)
}

// openFolder opens a tenant's drop folder, whatever kind holds it, for
// status and metrics (no warning logged: they only list it).
func openFolder(ctx context.Context, t config.Tenant) (sources.DropFolder, error) {
	src, err := registry.Open(ctx, t.Source.Options, registry.Env{Tenant: t.Name})
	if err != nil {
		return nil, err
	}
	return src.Folder()
}

// pushMetrics pushes the metrics of the cycles a run made to the
// Pushgateway of the configuration, one group per job and tenant; without
// one it does nothing. A failed push is logged, never returned: it must not
// change the run's outcome or exit code.
func (a *app) pushMetrics(ctx context.Context, m *metrics.Metrics, ends []runner.End) {
	mc := a.cfg.Metrics
	if m == nil || mc.Pushgateway.Value() == "" || len(ends) == 0 {
		return
	}
	groups := make([]metrics.Group, 0, len(ends))
	for _, e := range ends {
		groups = append(groups, metrics.Group{Job: string(e.Key.Job), Tenant: e.Key.Tenant, TenantGauges: runner.GaugesOf(e.Key.Job)})
	}
	// Pushed even when the run was stopped by a signal: its outcome is what
	// an alert wants to see.
	pctx := context.WithoutCancel(ctx)
	err := m.Push(pctx, metrics.PushOptions{URL: mc.Pushgateway.Value(), BearerToken: mc.PushgatewayToken.Value(),
		Timeout: pushTimeout}, groups)
	where := zap.String("pushgateway", metrics.RedactURL(mc.Pushgateway.Value()))
	if err != nil {
		a.log.Warn("metrics not pushed; the run's outcome stands", where, zap.Error(err))
		return
	}
	a.log.Info("metrics pushed", where, zap.Int("groups", len(groups)))
}
