package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/push"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/sethvargo/go-retry"
)

// Defaults of PushOptions.
const (
	DefaultPushTimeout  = 30 * time.Second
	DefaultPushAttempts = 3
	DefaultPushBackoff  = 500 * time.Millisecond
)

// maxGatewayBody bounds what is read of the Pushgateway's /metrics.
const maxGatewayBody = 64 << 20

// PushOptions say where and how a one-shot run pushes its metrics.
type PushOptions struct {
	// URL is the Pushgateway's base address (http or https); it may carry
	// user:password@ for basic auth, which never appears in an error.
	URL string
	// BearerToken, when not "", is sent as Authorization: Bearer (instead
	// of the address's basic auth).
	BearerToken string
	// Timeout bounds the whole push, retries included (DefaultPushTimeout).
	Timeout time.Duration
	// Attempts bounds the tries of each request (DefaultPushAttempts).
	Attempts int
	// Backoff is the first wait between tries; it doubles (DefaultPushBackoff).
	Backoff time.Duration
	// Client sends the requests; nil means a client of its own.
	Client *http.Client
}

// Group is one Pushgateway group: the series of one job and tenant.
type Group struct {
	Job    string
	Tenant string
	// TenantGauges name the scrape-time gauges (labelled by tenant only,
	// such as NameFilesWaiting) whose series of the tenant the group
	// carries too.
	TenantGauges []string
}

// gateway is a Pushgateway with its credentials kept out of its address.
type gateway struct {
	base     string // without credentials: safe in errors and logs
	user     string
	password string
	opts     PushOptions
}

// RedactURL returns a Pushgateway address with its credentials masked, for
// logs and errors.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(an address that does not parse)"
	}
	return u.Redacted()
}

// newGateway checks the options and applies their defaults.
func newGateway(opts PushOptions) (*gateway, error) {
	u, err := url.Parse(opts.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("pushgateway address %s: must be an http or https URL", RedactURL(opts.URL))
	}
	g := &gateway{opts: opts}
	if u.User != nil {
		g.user = u.User.Username()
		g.password, _ = u.User.Password()
		u.User = nil
	}
	g.base = strings.TrimRight(u.String(), "/")
	if g.opts.Timeout <= 0 {
		g.opts.Timeout = DefaultPushTimeout
	}
	if g.opts.Attempts <= 0 {
		g.opts.Attempts = DefaultPushAttempts
	}
	if g.opts.Backoff <= 0 {
		g.opts.Backoff = DefaultPushBackoff
	}
	if g.opts.Client == nil {
		g.opts.Client = &http.Client{Timeout: 10 * time.Second}
	}
	return g, nil
}

// Push sends the series of each group to the Pushgateway, each group with
// PUT (it replaces the group), as
// /metrics/job/<job>/tenant/<tenant>. The counters and histograms of a
// group go on from the values the Pushgateway holds for it (read once
// before), so that successive one-shot runs make one counter that only
// grows, as a daemon's would; a gauge the run did not set (the time of the
// last success after a failed run) keeps the value the group held. Each
// request is retried with backoff; a group that cannot be pushed does not
// stop the others. The error names no credentials.
func (m *Metrics) Push(ctx context.Context, opts PushOptions, groups []Group) error {
	g, err := newGateway(opts)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, g.opts.Timeout)
	defer cancel()
	current, err := m.reg.Gather()
	if err != nil {
		return fmt.Errorf("gather metrics: %w", err)
	}
	var previous []*dto.MetricFamily
	if err := g.retry(ctx, func(ctx context.Context) error {
		var rerr error
		previous, rerr = g.read(ctx)
		return rerr
	}); err != nil {
		return fmt.Errorf("read the groups held by the pushgateway at %s (nothing pushed, so that no counter restarts): %w", g.base, err)
	}
	var errs []error
	for _, grp := range groups {
		merged := mergeFamilies(groupFamilies(previous, grp, true), groupFamilies(current, grp, false))
		if err := g.retry(ctx, func(ctx context.Context) error { return g.push(ctx, grp, merged) }); err != nil {
			errs = append(errs, fmt.Errorf("push %s/%s to %s: %w", grp.Job, grp.Tenant, g.base, err))
		}
	}
	return errors.Join(errs...)
}

// retry runs fn until it succeeds, the attempts are spent or ctx ends.
func (g *gateway) retry(ctx context.Context, fn func(ctx context.Context) error) error {
	b := retry.WithMaxRetries(uint64(g.opts.Attempts-1), retry.NewExponential(g.opts.Backoff))
	return retry.Do(ctx, b, func(ctx context.Context) error {
		if err := fn(ctx); err != nil {
			return retry.RetryableError(err)
		}
		return nil
	})
}

// basicAuth reports whether requests carry basic auth: the address had
// credentials and no bearer token is set (a token wins).
func (g *gateway) basicAuth() bool { return g.user != "" && g.opts.BearerToken == "" }

// authorize adds the bearer token, if any, to a request's headers.
func (g *gateway) authorize(h http.Header) {
	if g.opts.BearerToken != "" {
		h.Set("Authorization", "Bearer "+g.opts.BearerToken)
	}
}

// read fetches every group the Pushgateway holds, from its /metrics.
func (g *gateway) read(ctx context.Context) ([]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.base+"/metrics", nil)
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	g.authorize(req.Header)
	if g.basicAuth() {
		req.SetBasicAuth(g.user, g.password)
	}
	resp, err := g.opts.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("read: the pushgateway answered %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(io.LimitReader(resp.Body, maxGatewayBody))
	if err != nil {
		return nil, fmt.Errorf("read: parse the pushgateway's metrics: %w", err)
	}
	return slices.Collect(maps.Values(families)), nil
}

// push replaces the group with families.
func (g *gateway) push(ctx context.Context, grp Group, families []*dto.MetricFamily) error {
	h := http.Header{}
	g.authorize(h)
	p := push.New(g.base, grp.Job).Grouping("tenant", grp.Tenant).Client(g.opts.Client).Header(h).
		Gatherer(prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) { return families, nil }))
	if g.basicAuth() {
		p = p.BasicAuth(g.user, g.password)
	}
	if err := p.PushContext(ctx); err != nil {
		return fmt.Errorf("push: %w", err)
	}
	return nil
}
