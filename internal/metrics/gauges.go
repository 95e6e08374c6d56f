package metrics

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Sources of the gauges read at scrape time, as hrsync_metrics_collect_errors_total names them.
const (
	SourceDropFolder = "dropfolder" // a tenant's drop folder
	SourceStore      = "store"      // the state: personalizations and orders
)

// Names of the gauges read at scrape time, for Group.TenantGauges.
const (
	NameFilesWaiting            = Namespace + "_dropfolder_files_waiting"
	NameOldestFileAge           = Namespace + "_dropfolder_oldest_file_age_seconds"
	NamePersonalizationsPending = Namespace + "_personalizations_pending"
	NamePersonalizationsFailed  = Namespace + "_personalizations_failed"
	NameOrdersNotPolled         = Namespace + "_orders_not_polled"
)

// DefaultBacklogTimeout bounds the store queries of one scrape.
const DefaultBacklogTimeout = 5 * time.Second

// Folder is a tenant's drop folder as the scrape-time gauges see it.
type Folder struct {
	Tenant string
	// Waiting returns the modification times of the files waiting in the
	// folder, or why the folder could not be listed, within ctx (a
	// folder on a server is listed over the network). It must neither
	// follow a link nor read a file.
	Waiting func(ctx context.Context) ([]time.Time, error)
}

// Backlog is what waits in the store for one tenant.
type Backlog struct {
	// PersonalizationsPending are personalizations the next run asks
	// about or tries again.
	PersonalizationsPending int
	// PersonalizationsFailed are personalizations hrsync no longer tries:
	// they wait for an operator or for the person's source fields to change.
	PersonalizationsFailed int
	// OrdersNotPolled are orders not final whose status is no longer polled.
	OrdersNotPolled int
}

// BacklogFunc reads the backlog of a tenant; one bounded query.
type BacklogFunc func(ctx context.Context, tenant string) (Backlog, error)

// ErrorFunc is told when a source of the scrape-time gauges starts failing
// for a tenant; it is not told again while the source keeps failing.
type ErrorFunc func(source, tenant string, err error)

// WatchFolders adds hrsync_dropfolder_files_waiting{tenant} and
// hrsync_dropfolder_oldest_file_age_seconds{tenant}, read from each folder
// at every scrape. A folder that cannot be listed is left out of that
// scrape and counted in hrsync_metrics_collect_errors_total; onError, when
// not nil, is told when it starts failing.
func (m *Metrics) WatchFolders(folders []Folder, onError ErrorFunc) {
	m.reg.MustRegister(&folderCollector{
		folders: folders,
		now:     time.Now,
		errs:    newErrorLatch(m.collectErrors, SourceDropFolder, onError),
		waiting: prometheus.NewDesc(NameFilesWaiting,
			"Files waiting in the tenant's drop folder (matching its pattern; hidden and partial files left out), read at scrape time.",
			[]string{"tenant"}, nil),
		oldest: prometheus.NewDesc(NameOldestFileAge,
			"Age (from its modification time) of the oldest file waiting in the tenant's drop folder; 0 when none waits.",
			[]string{"tenant"}, nil),
	})
}

// WatchBacklog adds hrsync_personalizations_pending{tenant},
// hrsync_personalizations_failed{tenant} and hrsync_orders_not_polled{tenant},
// read with read for each tenant at every scrape, all within timeout
// (DefaultBacklogTimeout when 0). A tenant whose read fails is left out of
// that scrape and counted in hrsync_metrics_collect_errors_total.
func (m *Metrics) WatchBacklog(tenants []string, read BacklogFunc, timeout time.Duration, onError ErrorFunc) {
	if timeout <= 0 {
		timeout = DefaultBacklogTimeout
	}
	desc := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, []string{"tenant"}, nil)
	}
	m.reg.MustRegister(&backlogCollector{
		tenants: tenants, read: read, timeout: timeout,
		errs:    newErrorLatch(m.collectErrors, SourceStore, onError),
		pending: desc(NamePersonalizationsPending, "Personalizations waiting for the platform or for a retry (states pending and retry), read from the store at scrape time."),
		failed:  desc(NamePersonalizationsFailed, "Personalizations hrsync gave up on (states failed and error): they wait for an operator or for new source fields."),
		notPolled: desc(NameOrdersNotPolled,
			"Orders not final whose status is no longer polled (older than tenants[].orders.stopPollingAfter), read from the store at scrape time."),
	})
}

// folderCollector reads the drop folders at scrape time.
type folderCollector struct {
	folders         []Folder
	now             func() time.Time
	errs            *errorLatch
	waiting, oldest *prometheus.Desc
}

// Describe implements prometheus.Collector.
func (c *folderCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.waiting
	ch <- c.oldest
}

// FolderListTimeout bounds the listing of one drop folder at a scrape.
const FolderListTimeout = 10 * time.Second

// Collect lists each folder once, each within FolderListTimeout.
func (c *folderCollector) Collect(ch chan<- prometheus.Metric) {
	now := c.now()
	for _, f := range c.folders {
		ctx, cancel := context.WithTimeout(context.Background(), FolderListTimeout)
		times, err := f.Waiting(ctx)
		cancel()
		if err != nil {
			c.errs.failed(f.Tenant, err)
			continue
		}
		c.errs.ok(f.Tenant)
		age := 0.0
		for _, t := range times {
			age = max(age, now.Sub(t).Seconds())
		}
		ch <- prometheus.MustNewConstMetric(c.waiting, prometheus.GaugeValue, float64(len(times)), f.Tenant)
		ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, age, f.Tenant)
	}
}

// backlogCollector reads the store's backlog at scrape time.
type backlogCollector struct {
	tenants                    []string
	read                       BacklogFunc
	timeout                    time.Duration
	errs                       *errorLatch
	pending, failed, notPolled *prometheus.Desc
}

// Describe implements prometheus.Collector.
func (c *backlogCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.pending
	ch <- c.failed
	ch <- c.notPolled
}

// Collect reads each tenant's backlog, one query each, within the timeout.
func (c *backlogCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	for _, tenant := range c.tenants {
		b, err := c.read(ctx, tenant)
		if err != nil {
			c.errs.failed(tenant, err)
			continue
		}
		c.errs.ok(tenant)
		ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(b.PersonalizationsPending), tenant)
		ch <- prometheus.MustNewConstMetric(c.failed, prometheus.GaugeValue, float64(b.PersonalizationsFailed), tenant)
		ch <- prometheus.MustNewConstMetric(c.notPolled, prometheus.GaugeValue, float64(b.OrdersNotPolled), tenant)
	}
}

// errorLatch counts every failure of a source and tells onError only when
// a tenant's source starts failing, so that a broken folder logs once, not
// at every scrape.
type errorLatch struct {
	counter *prometheus.CounterVec
	source  string
	onError ErrorFunc

	mu      sync.Mutex
	failing map[string]bool
}

func newErrorLatch(counter *prometheus.CounterVec, source string, onError ErrorFunc) *errorLatch {
	return &errorLatch{counter: counter, source: source, onError: onError, failing: map[string]bool{}}
}

// failed counts a failure of tenant's source.
func (l *errorLatch) failed(tenant string, err error) {
	l.counter.WithLabelValues(l.source, tenant).Inc()
	l.mu.Lock()
	first := !l.failing[tenant]
	l.failing[tenant] = true
	l.mu.Unlock()
	if first && l.onError != nil {
		l.onError(l.source, tenant, err)
	}
}

// ok notes that tenant's source answered.
func (l *errorLatch) ok(tenant string) {
	l.mu.Lock()
	delete(l.failing, tenant)
	l.mu.Unlock()
}
