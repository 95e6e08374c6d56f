// Package config loads and validates hrsync's configuration: one YAML file
// (named by --config or HRSYNC_CONFIG) holding the store, the platform API,
// logging, the daemon's HTTP endpoint and one or more tenants, with
// environment overrides and secrets (API token, database DSNs) taken from the
// environment or mounted files.
//
// Load fills every key the file leaves out with a default that serves, so a
// file that names only a tenant's company, collection and drop folder works.
// It rejects unknown keys, and reports every problem at once as a *Error.
// Secrets are resolved at load into Secret values, which never print.
// The reference of every key is ../docs/configuration.md.
package config

import (
	"errors"
	"net"
	"net/url"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"hrsync/model"
)

// Config is hrsync's whole configuration.
type Config struct {
	// Store is where hrsync keeps its state and reporting tables.
	Store Store `yaml:"store"`
	// API is how hrsync reaches the gifting platform.
	API API `yaml:"api"`
	// Log sets the level and format of log lines.
	Log Log `yaml:"log"`
	// HTTP is the daemon's health and metrics endpoint.
	HTTP HTTP `yaml:"http"`
	// Daemon configures how `hrsync daemon` stops.
	Daemon Daemon `yaml:"daemon"`
	// Metrics is where one-shot runs push their metrics.
	Metrics Metrics `yaml:"metrics"`
	// SCIM is the SCIM 2.0 endpoint the daemon serves to identity
	// providers, for the tenants whose source is scim.
	SCIM SCIM `yaml:"scim"`
	// Timezone is the IANA zone that schedules are read in.
	Timezone string `yaml:"timezone"`
	// Reports configures the reports written beside archived exports.
	Reports Reports `yaml:"reports"`
	// Notify configures the notifications sent after runs.
	Notify Notify `yaml:"notify"`
	// Tenants are the companies hrsync keeps in step, each with its source.
	Tenants []Tenant `yaml:"tenants"`

	location *time.Location
}

// Store selects the database.
type Store struct {
	// URL is "sqlite:<path>" or a PostgreSQL URL. Its password never prints.
	URL ConnURL `yaml:"url"`
	// URLEnv names an environment variable that holds the URL instead.
	URLEnv string `yaml:"urlEnv"`
	// URLFile names a file (a mounted secret) that holds the URL instead.
	URLFile string `yaml:"urlFile"`
	// Schema is the PostgreSQL schema hrsync's tables live in.
	Schema string `yaml:"schema"`

	// dialects describes the URL (Location, StateFile): Load sets it.
	dialects StoreDialects
}

// API configures the client of the platform's partner API.
type API struct {
	// BaseURL is the platform's address; paths start with /api/ext/v1/.
	BaseURL string `yaml:"baseUrl"`
	// TokenFile names a file holding the bearer token (a mounted secret).
	TokenFile string `yaml:"tokenFile"`
	// Token is the bearer token, from HRSYNC_API_TOKEN or TokenFile. It is
	// never read from the YAML file and never printed.
	Token Secret `yaml:"-"`
	// Timeout bounds every call but personalize.
	Timeout Duration `yaml:"timeout"`
	// PersonalizeTimeout bounds a personalize call, which takes 15-20s.
	PersonalizeTimeout Duration `yaml:"personalizeTimeout"`
	// RatePerSecond is the client-side rate limit over all calls.
	RatePerSecond float64 `yaml:"ratePerSecond"`
	// Burst is how many calls may go at once above the rate.
	Burst int `yaml:"burst"`
	// MaxConcurrency bounds the calls in flight at once.
	MaxConcurrency int `yaml:"maxConcurrency"`
	// MaxAttempts bounds the tries of one call, the first included.
	MaxAttempts int `yaml:"maxAttempts"`
	// TrustIdempotencyKey declares that the platform honours the
	// Idempotency-Key header, so grants whose outcome is unknown may be
	// resent without an operator.
	TrustIdempotencyKey bool `yaml:"trustIdempotencyKey"`
	// AllowInsecureHTTP lets baseUrl be a plain http:// URL to a host that
	// is not loopback, which sends the bearer token in clear; every start
	// then logs a warning. Loopback (the emulator) never needs it.
	AllowInsecureHTTP bool `yaml:"allowInsecureHTTP"`
}

// InsecureHTTP reports whether the base URL sends the token in clear over
// a network: a plain http:// URL to a host that is not loopback.
func (a *API) InsecureHTTP() bool {
	u, err := url.Parse(a.BaseURL)
	if err != nil || !strings.EqualFold(u.Scheme, "http") {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}

// Log configures logging.
type Log struct {
	// Level is debug, info, warn or error.
	Level string `yaml:"level"`
	// Format is json, console, or auto (console on a terminal, else json).
	Format string `yaml:"format"`
}

// HTTP configures the daemon's /healthz, /readyz and /metrics endpoint.
type HTTP struct {
	// Listen is a host:port to serve on; "" serves nothing.
	Listen string `yaml:"listen"`
}

// Daemon configures `hrsync daemon`.
type Daemon struct {
	// Grace bounds how long a stopping daemon waits for its runs in flight
	// (--grace overrides it); it must stay under the pod's
	// terminationGracePeriodSeconds.
	Grace Duration `yaml:"grace"`
}

// DefaultDaemonGrace is daemon.grace's default: under Kubernetes' default
// terminationGracePeriodSeconds (30 s), with room for the process to exit.
const DefaultDaemonGrace = 25 * time.Second

// SCIM configures the SCIM 2.0 endpoint of `hrsync daemon` (docs/scim.md):
// identity providers such as Okta and Microsoft Entra ID push users to it,
// and each tenant whose source is scim is selected by its own token.
type SCIM struct {
	// Listen is the host:port the endpoint is served on, a listener of its
	// own (not http.listen's); "" serves no SCIM endpoint.
	Listen string `yaml:"listen"`
	// Settle is how long after a tenant's last SCIM write its people job
	// runs: a burst of writes gives one run.
	Settle Duration `yaml:"settle"`
}

// Metrics configures the metrics of one-shot runs (`hrsync run`), which end
// before any scrape.
type Metrics struct {
	// Pushgateway is the address of a Prometheus Pushgateway every run
	// pushes its metrics to when it ends; "" pushes nothing. It may carry
	// user:password@ for basic auth; the password never prints.
	Pushgateway ConnURL `yaml:"pushgateway"`
	// PushgatewayTokenFile names a file holding a bearer token for the
	// Pushgateway (a mounted secret).
	PushgatewayTokenFile string `yaml:"pushgatewayTokenFile"`
	// PushgatewayToken is the bearer token read from PushgatewayTokenFile;
	// never read from the YAML file and never printed.
	PushgatewayToken Secret `yaml:"-"`
}

// Tenant is one company kept in step, with its source and policies.
type Tenant struct {
	// Name identifies the tenant in state, locks, file names and logs.
	Name string `yaml:"name"`
	// CompanyID is the company's id on the platform.
	CompanyID string `yaml:"companyId"`
	// CollectionID is the collection people are created in.
	CollectionID string `yaml:"collectionId"`
	// Source is where the tenant's people come from: exactly one of CSV, SQL.
	Source Source `yaml:"source"`
	// People is the policy for creating people and granting balances.
	People People `yaml:"people"`
	// Safeguards stop a run that looks wrong before any call.
	Safeguards Safeguards `yaml:"safeguards"`
	// Personalize is the policy for personalizing collections for new hires.
	Personalize Personalize `yaml:"personalize"`
	// Orders is the policy for polling orders into reporting tables.
	Orders Orders `yaml:"orders"`
	// Grants are the birthday, work-anniversary and campaign rules.
	Grants Grants `yaml:"grants"`
	// Schedules are the daemon's cron specs per job.
	Schedules Schedules `yaml:"schedules"`
	// Notify is who hears about the tenant's runs.
	Notify TenantNotify `yaml:"notify"`

	// SourceProblems are what keeps the tenant's source from being used,
	// set aside by a load with Checks.SourcesAside; nil otherwise (a load
	// without it fails on them).
	SourceProblems []Problem `yaml:"-"`

	// decodeErrs keeps the decoder's complaints about this tenant: returning
	// them would make the decoder drop the tenant from the list, shifting
	// the index of every later tenant in the problems reported.
	decodeErrs []string
}

// People is the policy for creating people on the platform.
type People struct {
	// BatchSize is how many people go in one create call.
	BatchSize int `yaml:"batchSize"`
	// Concurrency is how many create calls may be in flight at once.
	Concurrency int `yaml:"concurrency"`
	// DefaultBalance is granted when the export gives no addBalance.
	DefaultBalance float64 `yaml:"defaultBalance"`
	// Amount is the request-level amount; 0 means it is not sent.
	Amount float64 `yaml:"amount"`
	// SendEmail asks the platform to e-mail new people (shouldSendEmail).
	SendEmail bool `yaml:"sendEmail"`
	// GrantReason names the initial grant in its deterministic key.
	GrantReason string `yaml:"grantReason"`
}

// Safeguards are the thresholds that stop a run before any API call.
type Safeguards struct {
	// MaxDepartedRatio is the largest share of known people a run may mark
	// as departed.
	MaxDepartedRatio float64 `yaml:"maxDepartedRatio"`
	// MinRowsRatio is the smallest row count of an export, as a share of
	// the last good import.
	MinRowsRatio float64 `yaml:"minRowsRatio"`
	// MaxRejectedRatio is the largest share of rows that may be rejected.
	MaxRejectedRatio float64 `yaml:"maxRejectedRatio"`
	// MinPopulation is the number of people from which the ratios apply.
	MinPopulation int `yaml:"minPopulation"`
	// ApproveFromDropFolder lets an HR admin approve an export a safeguard
	// stopped by moving it from the drop folder's failed/ into approve/:
	// the next run takes it past the safeguards once. Default true.
	ApproveFromDropFolder bool `yaml:"approveFromDropFolder"`
}

// Personalize is the policy for personalizing collections for new hires.
type Personalize struct {
	// Collections are the personalizable collection ids; empty disables
	// personalization.
	Collections []string `yaml:"collections"`
	// WindowBefore is how long before a start date personalization begins.
	WindowBefore Duration `yaml:"windowBefore"`
	// WindowAfter is how long after a start date it is still done.
	WindowAfter Duration `yaml:"windowAfter"`
	// Concurrency is how many personalize calls may be in flight at once.
	Concurrency int `yaml:"concurrency"`
	// MaxAttempts bounds the tries for one person and collection.
	MaxAttempts int `yaml:"maxAttempts"`
}

// Orders is the policy for polling orders into the reporting tables.
type Orders struct {
	// BackfillDays is how far back the first poll reaches.
	BackfillDays int `yaml:"backfillDays"`
	// OverlapDays is how many days each poll re-reads before the last one.
	OverlapDays int `yaml:"overlapDays"`
	// UserIDsChunk is how many user ids go in one orders list call.
	UserIDsChunk int `yaml:"userIdsChunk"`
	// PollConcurrency is how many order status calls may be in flight.
	PollConcurrency int `yaml:"pollConcurrency"`
	// StopPollingAfter is the age after which an unshipped order's status
	// is no longer polled.
	StopPollingAfter Duration `yaml:"stopPollingAfter"`
	// ProductRefresh is how old a cached product may get before it is read
	// again.
	ProductRefresh Duration `yaml:"productRefresh"`
	// Country is the ISO 3166-1 alpha-2 code product prices are asked in;
	// "" leaves prices without the country delta.
	Country string `yaml:"country"`
	// Language is the locale product texts are asked in (accept-language).
	Language string `yaml:"language"`
}

// Schedules are the daemon's cron specs (robfig/cron/v3 syntax, with an
// optional seconds field and descriptors such as @hourly); "" leaves the
// job unscheduled.
type Schedules struct {
	// People syncs people from the source.
	People string `yaml:"people"`
	// Personalize personalizes collections for new hires.
	Personalize string `yaml:"personalize"`
	// Orders polls orders.
	Orders string `yaml:"orders"`
	// Grants runs the grant rules; hourly by default when there are rules.
	Grants string `yaml:"grants"`
}

// Defaults of the keys a file leaves out.
const (
	DefaultStoreURL    = "sqlite:hrsync.db"
	DefaultStoreSchema = "hrsync"
	DefaultAPIBaseURL  = "http://127.0.0.1:8080"
	DefaultTimezone    = "UTC"
	DefaultGrantReason = model.InitialGrantReason
	DefaultLanguage    = "en-US"
	DefaultPeopleCron  = "*/15 * * * *"
	DefaultSCIMSettle  = 60 * time.Second
)

// Default returns the configuration used for every key a file leaves out.
// It has no tenant, so it does not validate on its own.
func Default() *Config {
	return &Config{
		Store: Store{URL: NewConnURL(DefaultStoreURL), Schema: DefaultStoreSchema},
		API: API{
			BaseURL:            DefaultAPIBaseURL,
			Timeout:            D(30 * time.Second),
			PersonalizeTimeout: D(60 * time.Second),
			RatePerSecond:      10,
			Burst:              10,
			MaxConcurrency:     8,
			MaxAttempts:        5,
		},
		Log:      Log{Level: "info", Format: "auto"},
		Daemon:   Daemon{Grace: D(DefaultDaemonGrace)},
		Reports:  Reports{Mode: DefaultReportsMode},
		SCIM:     SCIM{Settle: D(DefaultSCIMSettle)},
		Notify:   defaultNotify(),
		Timezone: DefaultTimezone,
		location: time.UTC,
	}
}

// DefaultTenant returns the defaults of a tenant's keys. Name, company,
// collection and source have none.
func DefaultTenant() Tenant {
	return Tenant{
		People: People{
			BatchSize:   100,
			Concurrency: 4,
			GrantReason: DefaultGrantReason,
		},
		Safeguards: Safeguards{
			MaxDepartedRatio:      0.20,
			MinRowsRatio:          0.80,
			MaxRejectedRatio:      0.10,
			MinPopulation:         50,
			ApproveFromDropFolder: true,
		},
		Personalize: Personalize{
			Collections:  []string{},
			WindowBefore: D(30 * Day),
			WindowAfter:  D(7 * Day),
			Concurrency:  20,
			MaxAttempts:  5,
		},
		Orders: Orders{
			BackfillDays:     30,
			OverlapDays:      2,
			UserIDsChunk:     100,
			PollConcurrency:  8,
			StopPollingAfter: D(90 * Day),
			ProductRefresh:   D(24 * time.Hour),
			Language:         DefaultLanguage,
		},
		Grants:    Grants{LookbackDays: DefaultGrantsLookbackDays, Rules: []GrantRule{}},
		Schedules: Schedules{People: DefaultPeopleCron},
	}
}

// UnmarshalYAML starts a tenant from DefaultTenant, so keys the file leaves
// out keep their defaults. Type errors are kept for Load to report, so that
// the tenant stays at its index in the list.
func (t *Tenant) UnmarshalYAML(unmarshal func(any) error) error {
	type plain Tenant
	*t = DefaultTenant()
	err := unmarshal((*plain)(t))
	var te *yaml.TypeError
	if errors.As(err, &te) {
		t.decodeErrs = te.Errors
		return nil
	}
	return err
}

// Location returns the time zone named by Timezone, loaded by Load.
func (c *Config) Location() *time.Location {
	if c.location == nil {
		return time.UTC
	}
	return c.location
}

// Tenant returns the tenant with the given name.
func (c *Config) Tenant(name string) (*Tenant, bool) {
	for i := range c.Tenants {
		if c.Tenants[i].Name == name {
			return &c.Tenants[i], true
		}
	}
	return nil, false
}

// YAML renders the effective configuration as YAML, with every secret
// redacted: resolved tokens and DSNs are left out and passwords in
// connection URLs are masked.
func (c *Config) YAML() ([]byte, error) {
	return yaml.Marshal(c)
}

// String renders the effective configuration as YAML, with secrets
// redacted, so that %v and %s never show a credential.
func (c Config) String() string {
	b, err := yaml.Marshal(&c)
	if err != nil {
		return "config: " + err.Error()
	}
	return string(b)
}

// GoString renders the configuration as String does, so that %#v never
// shows a credential either.
func (c Config) GoString() string { return c.String() }
