package apiclient

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Defaults applied by New to the zero value of each Config field.
const (
	DefaultTimeout            = 30 * time.Second
	DefaultPersonalizeTimeout = 60 * time.Second
	DefaultRatePerSecond      = 5.0
	DefaultBurst              = 5
	DefaultMaxConcurrency     = 4
	DefaultMaxAttempts        = 5
	DefaultBackoffBase        = 500 * time.Millisecond
	DefaultBackoffMax         = 30 * time.Second
	DefaultMaxRetryAfter      = 60 * time.Second
	DefaultRetryBudget        = 3 * time.Minute
	DefaultOrdersUserChunk    = 100
	DefaultMaxResponseBytes   = 64 << 20
	DefaultUserAgentVersion   = "dev"
)

// redacted stands in for the token wherever a Config is printed.
const redacted = "[redacted]"

// Config configures a Client. The zero value of every field except BaseURL
// and Token means "use the default" (see the Default constants); negative
// values are rejected by New.
//
// The token never leaves the Authorization header: printing a Config with
// any fmt verb, or logging it with zap, shows "[redacted]" in its place.
type Config struct {
	// BaseURL is the platform's base URL, scheme and host, optionally with
	// a path prefix; the /api/ext/v1/... paths are resolved under it.
	BaseURL string
	// Token is the partner API token, sent as "Authorization: Bearer <Token>".
	Token string
	// UserAgentVersion is hrsync's version, sent as "User-Agent: hrsync/<version>".
	UserAgentVersion string

	// Timeout bounds each HTTP exchange (one attempt) of every operation
	// except Personalize.
	Timeout time.Duration
	// PersonalizeTimeout bounds each attempt of Personalize, which the
	// platform takes 15-20 seconds to answer.
	PersonalizeTimeout time.Duration

	// RatePerSecond and Burst configure the client-side rate limit shared by
	// all operations; math.Inf(1) disables it.
	RatePerSecond float64
	Burst         int
	// MaxConcurrency bounds the HTTP exchanges in flight at once.
	MaxConcurrency int

	// MaxAttempts bounds the attempts of one call, the first included.
	MaxAttempts int
	// BackoffBase and BackoffMax shape the exponential backoff between
	// attempts: the n-th wait is drawn uniformly from [0, min(BackoffMax,
	// BackoffBase*2^(n-1))).
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// MaxRetryAfter caps the wait a Retry-After header can ask for.
	MaxRetryAfter time.Duration
	// RetryBudget bounds the time one call spends retrying: a wait that
	// would end later than RetryBudget after the first attempt began is not
	// started, and the last error is returned instead.
	RetryBudget time.Duration

	// OrdersUserChunk bounds the userIds sent in one orders/get request.
	OrdersUserChunk int
	// MaxResponseBytes bounds the size of a response body the client reads.
	MaxResponseBytes int64

	// HTTPClient sends the requests; nil means a client with its own clone
	// of http.DefaultTransport. The client is copied and the copy does not
	// follow redirects (the platform has no reason to send any, and a write
	// must not be replayed elsewhere). A RoundTripper wrapping the transport
	// must not set Request.GetBody on a write: net/http would then resend a
	// POST carrying an Idempotency-Key by itself after a dropped connection.
	HTTPClient *http.Client
	// Logger receives one debug line per attempt, and a warning for an
	// answer that makes no sense; nil means no logging.
	Logger *zap.Logger
	// Observer is told about calls, retries and rate-limit waits; nil means none.
	Observer Observer
}

// String describes the configuration with the token redacted.
func (c Config) String() string {
	token := ""
	if c.Token != "" {
		token = redacted
	}
	return fmt.Sprintf("apiclient.Config{BaseURL: %q, Token: %q, UserAgentVersion: %q, Timeout: %s, "+
		"PersonalizeTimeout: %s, RatePerSecond: %g, Burst: %d, MaxConcurrency: %d, MaxAttempts: %d, "+
		"BackoffBase: %s, BackoffMax: %s, MaxRetryAfter: %s, RetryBudget: %s, OrdersUserChunk: %d, "+
		"MaxResponseBytes: %d, HTTPClient: %t, Logger: %t, Observer: %t}",
		redactURL(c.BaseURL), token, c.UserAgentVersion, c.Timeout,
		c.PersonalizeTimeout, c.RatePerSecond, c.Burst, c.MaxConcurrency, c.MaxAttempts,
		c.BackoffBase, c.BackoffMax, c.MaxRetryAfter, c.RetryBudget, c.OrdersUserChunk,
		c.MaxResponseBytes, c.HTTPClient != nil, c.Logger != nil, c.Observer != nil)
}

// GoString is String, so that %#v redacts the token too.
func (c Config) GoString() string { return c.String() }

// Format writes String for every verb, so that no fmt verb (%v, %+v, %#v,
// %s, %x...) can print the token.
func (c Config) Format(f fmt.State, _ rune) { _, _ = fmt.Fprint(f, c.String()) }

// MarshalLogObject lets zap.Any and zap.Object log a Config without its token.
func (c Config) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("baseURL", redactURL(c.BaseURL))
	enc.AddBool("tokenSet", c.Token != "")
	enc.AddString("userAgentVersion", c.UserAgentVersion)
	enc.AddDuration("timeout", c.Timeout)
	enc.AddDuration("personalizeTimeout", c.PersonalizeTimeout)
	enc.AddFloat64("ratePerSecond", c.RatePerSecond)
	enc.AddInt("burst", c.Burst)
	enc.AddInt("maxConcurrency", c.MaxConcurrency)
	enc.AddInt("maxAttempts", c.MaxAttempts)
	enc.AddDuration("backoffBase", c.BackoffBase)
	enc.AddDuration("backoffMax", c.BackoffMax)
	enc.AddDuration("maxRetryAfter", c.MaxRetryAfter)
	enc.AddDuration("retryBudget", c.RetryBudget)
	enc.AddInt("ordersUserChunk", c.OrdersUserChunk)
	enc.AddInt64("maxResponseBytes", c.MaxResponseBytes)
	return nil
}

// redactURL hides any password in a URL; a URL that does not parse is not shown.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "[unparsable URL]"
	}
	return u.Redacted()
}

// withDefaults returns c with every zero field replaced by its default.
func (c Config) withDefaults() Config {
	if c.UserAgentVersion == "" {
		c.UserAgentVersion = DefaultUserAgentVersion
	}
	setDefault(&c.Timeout, DefaultTimeout)
	setDefault(&c.PersonalizeTimeout, DefaultPersonalizeTimeout)
	setDefault(&c.RatePerSecond, DefaultRatePerSecond)
	setDefault(&c.Burst, DefaultBurst)
	setDefault(&c.MaxConcurrency, DefaultMaxConcurrency)
	setDefault(&c.MaxAttempts, DefaultMaxAttempts)
	setDefault(&c.BackoffBase, DefaultBackoffBase)
	setDefault(&c.BackoffMax, DefaultBackoffMax)
	setDefault(&c.MaxRetryAfter, DefaultMaxRetryAfter)
	setDefault(&c.RetryBudget, DefaultRetryBudget)
	setDefault(&c.OrdersUserChunk, DefaultOrdersUserChunk)
	setDefault(&c.MaxResponseBytes, DefaultMaxResponseBytes)
	return c
}

func setDefault[T int | int64 | float64 | time.Duration](v *T, def T) {
	if *v == 0 {
		*v = def
	}
}

// validate checks a configuration that already has its defaults. Its errors
// never quote the token or a password in the URL.
func (c Config) validate() error {
	var errs []error
	if err := validateBaseURL(c.BaseURL); err != nil {
		errs = append(errs, err)
	}
	if c.Token == "" {
		errs = append(errs, errors.New("token is empty"))
	} else if strings.ContainsFunc(c.Token, notTokenRune) {
		errs = append(errs, errors.New("token contains whitespace or control characters"))
	}
	if strings.ContainsFunc(c.UserAgentVersion, notTokenRune) || strings.Contains(c.UserAgentVersion, "/") {
		errs = append(errs, fmt.Errorf("user agent version %q must be one word without a slash", c.UserAgentVersion))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"timeout", c.Timeout}, {"personalize timeout", c.PersonalizeTimeout},
		{"backoff base", c.BackoffBase}, {"backoff max", c.BackoffMax},
		{"max retry-after", c.MaxRetryAfter}, {"retry budget", c.RetryBudget},
	} {
		if d.v < 0 {
			errs = append(errs, fmt.Errorf("%s %s is negative", d.name, d.v))
		}
	}
	if c.BackoffBase > c.BackoffMax {
		errs = append(errs, fmt.Errorf("backoff base %s exceeds backoff max %s", c.BackoffBase, c.BackoffMax))
	}
	if c.RatePerSecond < 0 || math.IsNaN(c.RatePerSecond) {
		errs = append(errs, fmt.Errorf("rate per second %g is not a positive number", c.RatePerSecond))
	}
	for _, n := range []struct {
		name string
		v    int64
	}{
		{"burst", int64(c.Burst)}, {"max concurrency", int64(c.MaxConcurrency)},
		{"max attempts", int64(c.MaxAttempts)}, {"orders user chunk", int64(c.OrdersUserChunk)},
		{"max response bytes", c.MaxResponseBytes},
	} {
		if n.v < 0 {
			errs = append(errs, fmt.Errorf("%s %d is negative", n.name, n.v))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid api client config: %w", err)
	}
	return nil
}

func validateBaseURL(raw string) error {
	if raw == "" {
		return errors.New("base URL is empty")
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error quotes the whole URL, which may hold a password: say less.
		return errors.New("base URL does not parse")
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("base URL %s: scheme must be http or https", u.Redacted())
	case u.Host == "":
		return fmt.Errorf("base URL %s has no host", u.Redacted())
	case u.User != nil:
		return fmt.Errorf("base URL %s must not carry credentials; use the token", u.Redacted())
	case u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("base URL %s must not have a query or fragment", u.Redacted())
	}
	return nil
}

// notTokenRune reports runes that cannot appear in a header token or word.
func notTokenRune(r rune) bool { return r <= ' ' || r == 0x7f }
