// Package metrics holds hrsync's Prometheus metrics: runs with their
// outcomes and durations per job and tenant, what the jobs did (people
// created, grants applied and held, rows rejected, orders by status), the
// time of the last successful run, and the API client's calls, retries and
// rate-limit waits through an apiclient.Observer.
//
// Every metric lives in a registry of its own, created by New: nothing is
// registered with the process-wide default registry, so two Metrics values
// (two tests, two daemons in one process) never collide.
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

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

	runs           *prometheus.CounterVec
	runDuration    *prometheus.HistogramVec
	running        *prometheus.GaugeVec
	skipped        *prometheus.CounterVec
	panics         *prometheus.CounterVec
	lastSuccess    *prometheus.GaugeVec
	peopleCreated  *prometheus.CounterVec
	grantsApplied  *prometheus.CounterVec
	grantsHeld     *prometheus.GaugeVec
	rowsRejected   *prometheus.CounterVec
	ordersByStatus *prometheus.GaugeVec
	apiCalls       *prometheus.CounterVec
	apiDuration    *prometheus.HistogramVec
	apiRetries     *prometheus.CounterVec
	rateWaits      *prometheus.CounterVec
	rateWaitSecs   *prometheus.CounterVec
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
		Help: "Unix time of the last run that ended ok or attention, by job and tenant."}, jt)
	m.peopleCreated = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "people_created_total",
		Help: "People created on the platform."}, []string{"tenant"})
	m.grantsApplied = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "grants_applied_total",
		Help: "Balance grants the platform applied."}, []string{"tenant"})
	m.grantsHeld = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "grants_held",
		Help: "Grants whose outcome is unknown, held for an operator, after the tenant's last people run."}, []string{"tenant"})
	m.rowsRejected = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "rows_rejected_total",
		Help: "Source rows rejected, by job and tenant."}, jt)
	m.ordersByStatus = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "orders",
		Help: "Orders in the reporting tables, by tenant and status, after the tenant's last orders run."}, []string{"tenant", "status"})
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

	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.runs, m.runDuration, m.running, m.skipped, m.panics, m.lastSuccess,
		m.peopleCreated, m.grantsApplied, m.grantsHeld, m.rowsRejected, m.ordersByStatus,
		m.apiCalls, m.apiDuration, m.apiRetries, m.rateWaits, m.rateWaitSecs,
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

// RunStarted counts a run of job for tenant as in progress.
func (m *Metrics) RunStarted(job, tenant string) {
	m.running.WithLabelValues(job, tenant).Inc()
}

// RunFinished records the end of a run started with RunStarted: its
// outcome, its duration and, when it ended ok or attention, the time of the
// last success.
func (m *Metrics) RunFinished(job, tenant, outcome string, took time.Duration, at time.Time) {
	m.running.WithLabelValues(job, tenant).Dec()
	m.runs.WithLabelValues(job, tenant, outcome).Inc()
	m.runDuration.WithLabelValues(job, tenant).Observe(took.Seconds())
	if outcome == "ok" || outcome == "attention" {
		m.lastSuccess.WithLabelValues(job, tenant).Set(float64(at.UnixNano()) / 1e9)
	}
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
		m.peopleCreated.WithLabelValues(tenant).Add(float64(n))
	}
	if n := counts[CountGrantsApplied]; n > 0 {
		m.grantsApplied.WithLabelValues(tenant).Add(float64(n))
	}
	if n := counts[CountRejected]; n > 0 {
		m.rowsRejected.WithLabelValues(job, tenant).Add(float64(n))
	}
}

// SetGrantsHeld sets how many of the tenant's grants are held.
func (m *Metrics) SetGrantsHeld(tenant string, n int) {
	m.grantsHeld.WithLabelValues(tenant).Set(float64(n))
}

// SetOrdersByStatus replaces the tenant's orders-by-status gauge with
// counts (status -> orders); statuses absent from counts are removed.
func (m *Metrics) SetOrdersByStatus(tenant string, counts map[string]int) {
	m.ordersByStatus.DeletePartialMatch(prometheus.Labels{"tenant": tenant})
	for status, n := range counts {
		m.ordersByStatus.WithLabelValues(tenant, status).Set(float64(n))
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
