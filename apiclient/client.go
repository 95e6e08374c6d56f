// Package apiclient is hrsync's client for the platform's partner API
// (../shared/spec/external-commerce-api.md, contract in api/openapi.yaml).
//
// It is a thin hand-written layer over the request builders and types that
// oapi-codegen generates in package api. It adds what every job needs:
// a timeout per attempt (a longer one for the slow personalize call), a
// client-side rate limit and concurrency limit, retries with backoff and
// jitter that honor Retry-After, one typed error (*Error) that says whether
// a failed write is known not to have been applied, splitting of the
// unpaginated orders list so that no order is lost, checks that answers
// make sense (listed orders outside the days asked for are left out, a
// count below the rows returned is logged, an order status about another
// order is an error), and hooks for logging and metrics.
//
// Retry policy. Reads (getProduct, getOrderStatus and listOrders, which is a
// POST that only reads) are tried again on 429, 5xx, timeouts and connection
// errors. Writes (createPeople, personalizeCollection) are tried again only
// when the request certainly was not processed: no connection could be made,
// 429, 503 with Retry-After. Any other failure of a write is returned at once
// with Outcome OutcomeUnknown, and the caller decides (DESIGN.md, invariant 1).
//
// The token is sent only in the Authorization header; it is not in any
// error, log line or printed Config.
package apiclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sethvargo/go-retry"
	"go.uber.org/zap"
	"golang.org/x/sync/semaphore"
	"golang.org/x/time/rate"

	"hrsync/api"
)

// Client calls the platform's partner API. It is safe for concurrent use;
// the rate and concurrency limits are shared by all its calls.
type Client struct {
	cfg     Config // with defaults applied
	base    string // BaseURL ending in "/", as the generated request builders need
	auth    string // the Authorization header value
	ua      string // the User-Agent header value
	http    *http.Client
	limiter *rate.Limiter
	sem     *semaphore.Weighted
	log     *zap.Logger
	obs     Observer

	// Seams for tests; New sets the real ones.
	now     func() time.Time
	sleep   func(ctx context.Context, d time.Duration) error
	backoff func() retry.Backoff
}

// New checks cfg, applies its defaults and returns a Client.
func New(cfg Config) (*Client, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	base := cfg.BaseURL
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	var hc http.Client
	if cfg.HTTPClient != nil {
		hc = *cfg.HTTPClient
	} else if dt, ok := http.DefaultTransport.(*http.Transport); ok {
		hc.Transport = dt.Clone()
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	limit := rate.Limit(cfg.RatePerSecond)
	if math.IsInf(cfg.RatePerSecond, 1) {
		limit = rate.Inf
	}
	obs := cfg.Observer
	if obs == nil {
		obs = ObserverFuncs{}
	}
	logger := cfg.Logger
	if logger == nil {
		logger = zap.NewNop()
	}
	return &Client{
		cfg:     cfg,
		base:    base,
		auth:    "Bearer " + cfg.Token,
		ua:      "hrsync/" + cfg.UserAgentVersion,
		http:    &hc,
		limiter: rate.NewLimiter(limit, cfg.Burst),
		sem:     semaphore.NewWeighted(int64(cfg.MaxConcurrency)),
		log:     logger,
		obs:     obs,
		now:     time.Now,
		sleep:   sleepCtx,
		backoff: func() retry.Backoff { return newBackoff(cfg.BackoffBase, cfg.BackoffMax) },
	}, nil
}

// String describes the client without its token.
func (c Client) String() string {
	return fmt.Sprintf("apiclient.Client{BaseURL: %q}", redactURL(c.cfg.BaseURL))
}

// Format writes String for every verb, so that printing a Client, whose
// fields hold the token, cannot show it. String and Format have value
// receivers so that a dereferenced Client is covered too.
func (c Client) Format(f fmt.State, _ rune) { _, _ = fmt.Fprint(f, c.String()) }

// CloseIdleConnections closes the idle keep-alive connections of the
// client's transport.
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }

// call describes one operation for do.
type call struct {
	op      Operation
	write   bool // the request changes state on the platform
	timeout time.Duration
	// build makes a fresh request for each attempt; server ends in "/".
	build func(server string) (*http.Request, error)
	// ok tells the statuses that mean success.
	ok func(status int) bool
}

// do performs k with retries, and returns the status and body of the
// successful answer, or an *Error.
func (c *Client) do(ctx context.Context, k call) (int, []byte, error) {
	if err := ctx.Err(); err != nil {
		return 0, nil, &Error{Op: k.op, Retryable: true, Outcome: OutcomeNotApplied, Err: err}
	}
	start := c.now()
	bo := c.backoff()
	for attempt := 1; ; attempt++ {
		status, body, e := c.attempt(ctx, k, attempt)
		if e == nil {
			return status, body, nil
		}
		e.Attempts = attempt
		if !mayRetry(k.write, e) || attempt >= c.cfg.MaxAttempts || ctx.Err() != nil {
			return 0, nil, e
		}
		wait, stop := bo.Next()
		if stop {
			return 0, nil, e
		}
		if e.retryAfterSet {
			wait = min(e.RetryAfter, c.cfg.MaxRetryAfter)
		}
		resume := c.now().Add(wait)
		if resume.Sub(start) > c.cfg.RetryBudget {
			return 0, nil, e
		}
		if deadline, ok := ctx.Deadline(); ok && resume.After(deadline) {
			return 0, nil, e
		}
		c.obs.OnRetry(k.op, attempt+1, wait)
		c.logger(ctx).Debug("api retry", zap.String("op", string(k.op)), zap.Int("attempt", attempt+1), zap.Duration("wait", wait))
		if err := c.sleep(ctx, wait); err != nil {
			e.Err = joinCause(e.Err, fmt.Errorf("wait to retry: %w", err))
			return 0, nil, e
		}
	}
}

// attempt makes one HTTP exchange of k, within the concurrency and rate limits.
func (c *Client) attempt(ctx context.Context, k call, n int) (int, []byte, *Error) {
	if err := c.sem.Acquire(ctx, 1); err != nil {
		return 0, nil, &Error{Op: k.op, Retryable: true, Outcome: OutcomeNotApplied, Err: fmt.Errorf("wait for a free slot: %w", err)}
	}
	defer c.sem.Release(1)
	if err := c.waitRate(ctx, k.op); err != nil {
		return 0, nil, &Error{Op: k.op, Retryable: true, Outcome: OutcomeNotApplied, Err: fmt.Errorf("wait for the rate limit: %w", err)}
	}
	req, err := k.build(c.base)
	if err != nil {
		return 0, nil, &Error{Op: k.op, Outcome: OutcomeNotApplied, Err: fmt.Errorf("%w: build request: %w", ErrInvalidRequest, err)}
	}

	actx, cancel := context.WithTimeout(ctx, k.timeout)
	defer cancel()
	var conns atomic.Int32
	actx = httptrace.WithClientTrace(actx, &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { conns.Add(1) },
	})
	req = req.WithContext(actx)
	req.Header.Set("Authorization", c.auth)
	req.Header.Set("User-Agent", c.ua)
	req.Header.Set("Accept", "application/json")
	if k.write {
		// Without GetBody, net/http cannot replay the request by itself. It
		// would otherwise resend a POST carrying an Idempotency-Key when a
		// reused connection drops before the answer, after the platform may
		// have applied it.
		req.GetBody = nil
	}

	began := c.now()
	resp, err := c.http.Do(req)
	if k.write && conns.Load() > 1 {
		// Only a transport wrapper that sets Request.GetBody lets net/http
		// resend a write by itself; the platform may have applied it twice.
		c.logger(ctx).Warn("net/http sent a write more than once in one attempt; check the HTTP client's transport",
			zap.String("op", string(k.op)), zap.Int("attempt", n), zap.Int32("connections", conns.Load()))
	}
	if err != nil {
		e := c.transportError(ctx, actx, k, err, conns.Load() > 0)
		c.report(ctx, k.op, n, 0, c.now().Sub(began), e)
		return 0, nil, e
	}
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, c.cfg.MaxResponseBytes+1))
	_ = resp.Body.Close()
	took := c.now().Sub(began)
	status := resp.StatusCode

	var e *Error
	switch {
	case k.ok(status) && rerr != nil:
		// The platform said success, then the connection broke: a read
		// may be tried again, a write was applied and must not be.
		e = &Error{Op: k.op, Status: status, Retryable: !k.write, Outcome: OutcomeApplied,
			Err: fmt.Errorf("%w: read body: %w", ErrBadResponse, c.contextCause(ctx, actx, k, rerr))}
	case k.ok(status) && int64(len(body)) > c.cfg.MaxResponseBytes:
		e = &Error{Op: k.op, Status: status, Outcome: OutcomeApplied,
			Err: fmt.Errorf("%w: body larger than %d bytes", ErrBadResponse, c.cfg.MaxResponseBytes)}
	case k.ok(status):
		c.report(ctx, k.op, n, status, took, nil)
		return status, body, nil
	default:
		e = c.statusError(k.op, resp, body, rerr)
	}
	c.report(ctx, k.op, n, status, took, e)
	return 0, nil, e
}

// waitRate waits for the rate limiter, reporting any wait to the observer.
func (c *Client) waitRate(ctx context.Context, op Operation) error {
	r := c.limiter.Reserve()
	if !r.OK() {
		return errors.New("the rate limiter cannot grant a request")
	}
	d := r.Delay()
	if d <= 0 {
		return nil
	}
	c.obs.OnRateLimitWait(op, d)
	if err := c.sleep(ctx, d); err != nil {
		r.Cancel()
		return err
	}
	return nil
}

// transportError builds the error of an exchange that got no answer.
func (c *Client) transportError(ctx, actx context.Context, k call, err error, connected bool) *Error {
	retryable, outcome := classifyTransport(connected)
	return &Error{Op: k.op, Retryable: retryable, Outcome: outcome, Err: c.contextCause(ctx, actx, k, err)}
}

// contextCause strips the *url.Error that net/http wraps errors in (its URL
// can carry personal data in the query) and makes sure a timeout or a
// cancellation is visible to errors.Is.
func (c *Client) contextCause(ctx, actx context.Context, k call, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	switch {
	case ctx.Err() != nil:
		if !errors.Is(err, ctx.Err()) {
			err = fmt.Errorf("%w: %w", ctx.Err(), err)
		}
	case actx.Err() != nil:
		if !errors.Is(err, actx.Err()) {
			err = fmt.Errorf("%w: %w", actx.Err(), err)
		}
		err = fmt.Errorf("no answer within %s: %w", k.timeout, err)
	}
	return err
}

// statusError builds the error of an answer whose status is not success.
func (c *Client) statusError(op Operation, resp *http.Response, body []byte, readErr error) *Error {
	e := &Error{Op: op, Status: resp.StatusCode}
	if v := resp.Header.Get("Retry-After"); v != "" {
		e.RetryAfter, e.retryAfterSet = parseRetryAfter(v, c.now())
	}
	e.Retryable, e.Outcome = classifyStatus(resp.StatusCode, e.retryAfterSet)
	var apiErr api.Error
	if readErr == nil && json.Unmarshal(body, &apiErr) == nil {
		e.Code, e.Message = apiErr.Error.Code, apiErr.Error.Message
	}
	switch {
	case readErr != nil:
		e.Err = fmt.Errorf("read error body: %w", readErr)
	case resp.StatusCode < 400:
		e.Err = ErrUnexpectedStatus
	}
	return e
}

// report tells the observer and the logger about one attempt. The *Error
// is copied, so that an observer keeping it never races with do.
func (c *Client) report(ctx context.Context, op Operation, attempt, status int, took time.Duration, e *Error) {
	var err error
	if e != nil {
		cp := *e
		err = &cp
	}
	c.obs.OnCall(op, status, took, err)
	ce := c.logger(ctx).Check(zap.DebugLevel, "api call")
	if ce == nil {
		return
	}
	fields := []zap.Field{
		zap.String("op", string(op)),
		zap.Int("attempt", attempt),
		zap.Int("status", status),
		zap.Duration("duration", took),
	}
	if e != nil {
		fields = append(fields, zap.String("outcome", e.Outcome.String()), zap.Bool("retryable", e.Retryable))
		if e.Code != "" {
			fields = append(fields, zap.String("code", e.Code))
		}
		if e.Err != nil {
			// Causes are transport and decoding errors; the platform's
			// message, which may quote personal data, is left out.
			fields = append(fields, zap.NamedError("cause", e.Err))
		}
	}
	ce.Write(fields...)
}

// decode reads a success body into dst. A body that does not decode is an
// error whose Outcome is OutcomeApplied: the platform answered success.
func decode(op Operation, status int, body []byte, dst any) error {
	if err := json.Unmarshal(body, dst); err != nil {
		return &Error{Op: op, Status: status, Outcome: OutcomeApplied, Err: fmt.Errorf("%w: %w", ErrBadResponse, err)}
	}
	return nil
}

// joinCause adds a second cause to an error that may have none.
func joinCause(first, second error) error {
	if first == nil {
		return second
	}
	return fmt.Errorf("%w; %w", first, second)
}

// invalid is the error of a call refused before anything was sent.
func invalid(op Operation, format string, args ...any) error {
	return &Error{Op: op, Outcome: OutcomeNotApplied, Err: fmt.Errorf("%w: %s", ErrInvalidRequest, fmt.Sprintf(format, args...))}
}
