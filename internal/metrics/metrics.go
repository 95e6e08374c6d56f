// Package metrics holds hrsync's Prometheus metrics: runs with their
// outcomes and durations per job and tenant, the outcome of the last run,
// what the jobs did (people created, grants applied and held, rows
// rejected, orders by status), the time of the last successful run, the
// build, and the API client's calls, retries and rate-limit waits through an
// apiclient.Observer. Gauges read at scrape time (files waiting in a drop
// folder, personalizations and orders waiting in the store) are added with
// WatchFolders and WatchBacklog; a one-shot run pushes its metrics to a
// Pushgateway with a Pusher.
//
// Every metric lives in a registry of its own, created by New: nothing is
// registered with the process-wide default registry, so two Metrics values
// (two tests, two daemons in one process) never collide.
package metrics

import (
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"

	"hrsync/apiclient"
)

// Namespace prefixes every metric name.
const Namespace = "hrsync"

// Count keys a job's result may carry; Metrics.ObserveCounts turns them into
// counters. Other keys are ignored.
const (
	CountCreated       = "created"       // people created on the platform
	CountGrantsApplied = "grantsApplied" // balance grants the platform applied
	CountRejected      = "rejected"      // rows of a source refused
)

// Metrics is the set of hrsync's metrics, registered in its own registry.
// Its methods are safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	// mu guards outcomes, the outcomes hrsync_last_outcome knows for every
	// job and tenant: those given to Init and those seen since; and the
	// read-then-set of the timestamp gauges, which never go back.
	mu       sync.Mutex
	outcomes []string

	runs           *prometheus.CounterVec
	runDuration    *prometheus.HistogramVec
	running        *prometheus.GaugeVec
	skipped        *prometheus.CounterVec
	panics         *prometheus.CounterVec
	lastSuccess    *prometheus.GaugeVec
	lastRun        *prometheus.GaugeVec
	peopleCreated  *prometheus.CounterVec
	grantsApplied  *prometheus.CounterVec
	grantsHeld     *prometheus.GaugeVec
	ruleGrants     *prometheus.CounterVec
	rowsRejected   *prometheus.CounterVec
	ordersByStatus *prometheus.GaugeVec
	apiCalls       *prometheus.CounterVec
	apiDuration    *prometheus.HistogramVec
	apiRetries     *prometheus.CounterVec
	rateWaits      *prometheus.CounterVec
	rateWaitSecs   *prometheus.CounterVec
	lastOutcome    *prometheus.GaugeVec
	buildInfo      *prometheus.GaugeVec
	collectErrors  *prometheus.CounterVec
	notifications  notificationCounters
}

// New creates the metrics in a new registry, with the Go runtime and
// process collectors beside them.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	jt := []string{"job", "tenant"}
	m.runs = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "runs_total",
		Help: "Runs finished, by job, tenant and outcome (ok, attention, safeguard, failed, locked)."},
		[]string{"job", "tenant", "outcome"})
	m.runDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "run_duration_seconds",
		Help:    "How long runs took, by job and tenant.",
		Buckets: []float64{0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600}}, jt)
	m.running = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "runs_in_progress",
		Help: "Runs in progress, by job and tenant."}, jt)
	m.skipped = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "runs_skipped_total",
		Help: "Scheduled runs skipped because the previous run of the job was still going."}, jt)
	m.panics = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "run_panics_total",
		Help: "Runs that panicked (recovered and recorded as failed)."}, jt)
	m.lastSuccess = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "last_success_timestamp_seconds",
		Help: "Unix time of the last run that ended ok or attention, by job and tenant; it never goes back."}, jt)
	m.lastRun = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "last_run_timestamp_seconds",
		Help: "Unix time of the end of the last run of the job and tenant that had the outcome, by job, tenant and outcome; it never goes back."},
		[]string{"job", "tenant", "outcome"})
	m.lastOutcome = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "last_outcome",
		Help: "1 for the outcome of the last finished run of the job and tenant, 0 for the other outcomes (all 0 before the first run)."},
		[]string{"job", "tenant", "outcome"})
	m.peopleCreated = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "people_created_total",
		Help: "People created on the platform, by the job that created them and tenant."}, jt)
	m.ruleGrants = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "rule_grants_total",
		Help: "Grants of the grants job's rules, by job, tenant, rule and result: applied (the platform confirmed it), " +
			"held (outcome unknown, waiting for an operator) or skipped (an occurrence owed to nobody: not active on the day, " +
			"outside the rule's filters, not yet on the platform)."},
		[]string{"job", "tenant", "rule", "result"})
	m.grantsApplied = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "grants_applied_total",
		Help: "Balance grants the platform applied, by the job that sent them and tenant."}, jt)
	m.grantsHeld = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "grants_held",
		Help: "Grants whose outcome is unknown, held for an operator, after the tenant's last run of the job."}, jt)
	m.rowsRejected = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "rows_rejected_total",
		Help: "Source rows rejected, by job and tenant."}, jt)
	m.ordersByStatus = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "orders",
		Help: "Orders in the reporting tables, by status, after the tenant's last orders run."}, []string{"job", "tenant", "status"})
	m.apiCalls = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "api_calls_total",
		Help: "HTTP attempts to the platform's API, by endpoint (operation) and status (0 when no answer came)."},
		[]string{"endpoint", "status"})
	m.apiDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "api_call_duration_seconds",
		Help:    "How long HTTP attempts to the platform took, by endpoint.",
		Buckets: []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60}}, []string{"endpoint"})
	m.apiRetries = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "api_retries_total",
		Help: "Retries of calls to the platform, by endpoint."}, []string{"endpoint"})
	m.rateWaits = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "api_rate_limit_waits_total",
		Help: "Attempts that waited for the client-side rate limit, by endpoint."}, []string{"endpoint"})
	m.rateWaitSecs = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "api_rate_limit_wait_seconds_total",
		Help: "Time spent waiting for the client-side rate limit, by endpoint."}, []string{"endpoint"})
	m.buildInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "build_info",
		Help: "Always 1; its labels name hrsync's version and the Go version it was built with."}, []string{"version", "goversion"})
	m.collectErrors = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "metrics_collect_errors_total",
		Help: "Scrapes that could not read a gauge's source, by source (dropfolder, store) and tenant; the gauges of that tenant are left out of that scrape."},
		[]string{"source", "tenant"})

	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.runs, m.runDuration, m.running, m.skipped, m.panics, m.lastSuccess, m.lastRun,
		m.peopleCreated, m.grantsApplied, m.grantsHeld, m.ruleGrants, m.rowsRejected, m.ordersByStatus,
		m.apiCalls, m.apiDuration, m.apiRetries, m.rateWaits, m.rateWaitSecs,
		m.lastOutcome, m.buildInfo, m.collectErrors,
	)
	m.notifications = newNotificationCounters(m.reg)
	return m
}

// Registry is the registry that holds the metrics, for tests and for
// adding collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Known are the jobs, tenants and outcomes whose series Init creates at
// zero, so that an alert or a rate sees them from the first scrape.
type Known struct {
	// Jobs are the job names (people, personalize, orders, ...).
	Jobs []string
	// Tenants are the configured tenants.
	Tenants []string
	// Outcomes are the outcomes a finished run may have (ok, attention,
	// safeguard, failed, locked).
	Outcomes []string
	// Rules are the configured grant rules, whose
	// hrsync_rule_grants_total series start at zero for every result.
	Rules []Rule
}

// Rule names one configured grant rule of a job and tenant.
type Rule struct {
	Job, Tenant, Rule string
}

// ruleResults are the results hrsync_rule_grants_total counts.
func ruleResults() []string { return []string{"applied", "held", "skipped"} }

// Init sets hrsync_build_info for version and creates every series of the
// known jobs, tenants and outcomes at zero: runs by outcome, the last
// outcome, durations, runs in progress, skipped and panicked runs, people
// created, grants applied and held, rows rejected, the collection errors
// of each tenant, and the API's durations, retries and rate-limit waits of
// each endpoint (api_calls_total, by status, appears with its first call),
// and the per-rule grants of each configured rule.
// The times of the last success and of the last run are not created: 0
// would read as a run in 1970.
func (m *Metrics) Init(version string, known Known) {
	m.buildInfo.WithLabelValues(version, runtime.Version()).Set(1)
	m.mu.Lock()
	for _, o := range known.Outcomes {
		if !slices.Contains(m.outcomes, o) {
			m.outcomes = append(m.outcomes, o)
		}
	}
	m.mu.Unlock()
	for _, op := range apiclient.Operations() {
		endpoint := string(op)
		m.apiDuration.WithLabelValues(endpoint)
		m.apiRetries.WithLabelValues(endpoint)
		m.rateWaits.WithLabelValues(endpoint)
		m.rateWaitSecs.WithLabelValues(endpoint)
	}
	for _, tenant := range known.Tenants {
		for _, source := range []string{SourceDropFolder, SourceStore} {
			m.collectErrors.WithLabelValues(source, tenant)
		}
		for _, job := range known.Jobs {
			for _, o := range known.Outcomes {
				m.runs.WithLabelValues(job, tenant, o)
				m.lastOutcome.WithLabelValues(job, tenant, o)
			}
			m.runDuration.WithLabelValues(job, tenant)
			m.running.WithLabelValues(job, tenant)
			m.skipped.WithLabelValues(job, tenant)
			m.panics.WithLabelValues(job, tenant)
			m.peopleCreated.WithLabelValues(job, tenant)
			m.grantsApplied.WithLabelValues(job, tenant)
			m.grantsHeld.WithLabelValues(job, tenant)
			m.rowsRejected.WithLabelValues(job, tenant)
		}
	}
	for _, r := range known.Rules {
		for _, result := range ruleResults() {
			m.ruleGrants.WithLabelValues(r.Job, r.Tenant, r.Rule, result)
		}
	}
}

// setLastOutcome sets hrsync_last_outcome of job and tenant to 1 for
// outcome and to 0 for every other outcome known.
func (m *Metrics) setLastOutcome(job, tenant, outcome string) {
	m.mu.Lock()
	if !slices.Contains(m.outcomes, outcome) {
		m.outcomes = append(m.outcomes, outcome)
	}
	outcomes := slices.Clone(m.outcomes)
	m.mu.Unlock()
	for _, o := range outcomes {
		v := 0.0
		if o == outcome {
			v = 1
		}
		m.lastOutcome.WithLabelValues(job, tenant, o).Set(v)
	}
}

// RunStarted counts a run of job for tenant as in progress.
func (m *Metrics) RunStarted(job, tenant string) {
	m.running.WithLabelValues(job, tenant).Inc()
}

// RunFinished records the end of a run started with RunStarted: its
// outcome, its duration, the time of the last run with that outcome and,
// when it ended ok or attention, the time of the last success. Neither time
// goes back: an earlier at than the gauge holds leaves it.
func (m *Metrics) RunFinished(job, tenant, outcome string, took time.Duration, at time.Time) {
	m.running.WithLabelValues(job, tenant).Dec()
	m.runs.WithLabelValues(job, tenant, outcome).Inc()
	m.runDuration.WithLabelValues(job, tenant).Observe(took.Seconds())
	m.setLastOutcome(job, tenant, outcome)
	m.SetLastRun(job, tenant, outcome, at)
	if IsSuccess(outcome) {
		m.SetLastSuccess(job, tenant, at)
	}
}

// IsSuccess reports whether a run that ended with outcome counts as a
// success for hrsync_last_success_timestamp_seconds: ok or attention.
func IsSuccess(outcome string) bool { return outcome == "ok" || outcome == "attention" }

// SetLastSuccess raises the time of the last success of job and tenant to
// at (read from the store when the process starts, or the end of a run); a
// time earlier than the gauge holds is ignored, so the gauge never goes
// back.
func (m *Metrics) SetLastSuccess(job, tenant string, at time.Time) {
	m.raise(m.lastSuccess.WithLabelValues(job, tenant), at)
}

// SetLastRun raises the time of the last run of job and tenant that ended
// with outcome to at; a time earlier than the gauge holds is ignored.
func (m *Metrics) SetLastRun(job, tenant, outcome string, at time.Time) {
	m.raise(m.lastRun.WithLabelValues(job, tenant, outcome), at)
}

// raise sets g to at in Unix seconds unless it already holds a later time.
func (m *Metrics) raise(g prometheus.Gauge, at time.Time) {
	v := float64(at.UnixNano()) / 1e9
	m.mu.Lock()
	defer m.mu.Unlock()
	var cur dto.Metric
	if err := g.Write(&cur); err == nil && cur.GetGauge().GetValue() >= v {
		return
	}
	g.Set(v)
}

// RunSkipped counts a scheduled run skipped because the previous one was
// still going.
func (m *Metrics) RunSkipped(job, tenant string) {
	m.skipped.WithLabelValues(job, tenant).Inc()
}

// RunPanicked counts a run that panicked.
func (m *Metrics) RunPanicked(job, tenant string) {
	m.panics.WithLabelValues(job, tenant).Inc()
}

// ObserveCounts adds a run's counts under the well-known keys (CountCreated,
// CountGrantsApplied, CountRejected) to their counters.
func (m *Metrics) ObserveCounts(job, tenant string, counts map[string]int) {
	if n := counts[CountCreated]; n > 0 {
		m.peopleCreated.WithLabelValues(job, tenant).Add(float64(n))
	}
	if n := counts[CountGrantsApplied]; n > 0 {
		m.grantsApplied.WithLabelValues(job, tenant).Add(float64(n))
	}
	if n := counts[CountRejected]; n > 0 {
		m.rowsRejected.WithLabelValues(job, tenant).Add(float64(n))
	}
}

// RuleGrants are what one run of the grants job did for one rule.
type RuleGrants struct {
	Rule    string
	Applied int
	Held    int
	Skipped int
}

// ObserveRuleGrants adds the counts of one rule of a run of job to
// hrsync_rule_grants_total{job,tenant,rule,result}. The job label lets a
// one-shot run push the series with its job's group.
func (m *Metrics) ObserveRuleGrants(job, tenant string, rg RuleGrants) {
	for i, result := range ruleResults() {
		c := m.ruleGrants.WithLabelValues(job, tenant, rg.Rule, result)
		if n := [...]int{rg.Applied, rg.Held, rg.Skipped}[i]; n > 0 {
			c.Add(float64(n))
		}
	}
}

// SetGrantsHeld sets how many of the tenant's grants are held after a run
// of job.
func (m *Metrics) SetGrantsHeld(job, tenant string, n int) {
	m.grantsHeld.WithLabelValues(job, tenant).Set(float64(n))
}

// SetOrdersByStatus replaces the tenant's orders-by-status gauge with
// counts (status -> orders) after a run of job; statuses absent from counts
// are removed.
func (m *Metrics) SetOrdersByStatus(job, tenant string, counts map[string]int) {
	m.ordersByStatus.DeletePartialMatch(prometheus.Labels{"job": job, "tenant": tenant})
	for status, n := range counts {
		m.ordersByStatus.WithLabelValues(job, tenant, status).Set(float64(n))
	}
}

// Observer returns the apiclient.Observer that feeds the API metrics; pass
// it in apiclient.Config.Observer.
func (m *Metrics) Observer() apiclient.Observer { return observer{m} }

// observer implements apiclient.Observer on Metrics. Its methods never block.
type observer struct{ m *Metrics }

// OnCall counts one HTTP attempt by endpoint and status.
func (o observer) OnCall(op apiclient.Operation, status int, took time.Duration, _ error) {
	o.m.apiCalls.WithLabelValues(string(op), strconv.Itoa(status)).Inc()
	o.m.apiDuration.WithLabelValues(string(op)).Observe(took.Seconds())
}

// OnRetry counts one retry.
func (o observer) OnRetry(op apiclient.Operation, _ int, _ time.Duration) {
	o.m.apiRetries.WithLabelValues(string(op)).Inc()
}

// OnRateLimitWait counts one wait for the rate limit and its length.
func (o observer) OnRateLimitWait(op apiclient.Operation, wait time.Duration) {
	o.m.rateWaits.WithLabelValues(string(op)).Inc()
	o.m.rateWaitSecs.WithLabelValues(string(op)).Add(wait.Seconds())
}
