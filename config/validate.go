package config

import (
	"fmt"
	"math"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"
	"github.com/robfig/cron/v3"
	"golang.org/x/text/language"
)

// tenantName is the shape of a tenant's name: it goes into file names, lock
// names and grant keys, so it is kept to lower-case letters, digits, '-'
// and '_', starting with a letter or digit.
var tenantName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// schemaName is the shape of a PostgreSQL schema name hrsync accepts.
var schemaName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// grantReason is the shape of a grant reason, a part of the grant key.
var grantReason = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,62}$`)

// ScheduleParser returns the parser of schedules: five fields, an optional
// leading seconds field, and descriptors such as @hourly or @every 1h. The
// daemon gives it to cron.New(cron.WithParser(...)) so that it runs the
// specs exactly as Load accepted them.
func ScheduleParser() cron.Parser {
	return cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)
}

// ParseSchedule parses a cron spec the way the configuration does
// (robfig/cron/v3 syntax with an optional seconds field).
func ParseSchedule(spec string) (cron.Schedule, error) {
	s, err := ScheduleParser().Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("parse schedule: %w", err)
	}
	return s, nil
}

// fillDefaults sets defaults that depend on what the file holds.
func (c *Config) fillDefaults() {
	for i := range c.Tenants {
		c.Tenants[i].Source.fillDefaults()
		if c.Tenants[i].Personalize.Collections == nil {
			c.Tenants[i].Personalize.Collections = []string{}
		}
		if c.Tenants[i].Grants.Rules == nil {
			c.Tenants[i].Grants.Rules = []GrantRule{}
		}
		c.Tenants[i].Grants.fillDefaults(&c.Tenants[i].Schedules)
		if n := &c.Tenants[i].Notify; n.Email == nil {
			n.Email = []string{}
		}
		if n := &c.Tenants[i].Notify; n.Webhooks == nil {
			n.Webhooks = []Webhook{}
		}
	}
}

// validate checks every field and records each problem with its path.
func (c *Config) validate(ps *problems) {
	c.validateStore(ps)
	c.validateAPI(ps)
	c.validateReports(ps)
	c.validateNotify(ps)
	c.validateLog(ps)
	c.validateListeners(ps)
	c.validateSCIM(ps)
	c.validateTimezone(ps)
	c.validateTenants(ps)
}

// validateLog checks the log's level and format.
func (c *Config) validateLog(ps *problems) {
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		ps.addf("log.level", "must be one of debug, info, warn, error")
	}
	switch c.Log.Format {
	case "auto", "json", "console":
	default:
		ps.addf("log.format", "must be one of auto, json, console")
	}
}

// validateListeners checks the HTTP listener and the Pushgateway's URL.
func (c *Config) validateListeners(ps *problems) {
	if c.HTTP.Listen != "" {
		if _, port, err := net.SplitHostPort(c.HTTP.Listen); err != nil || port == "" {
			ps.addf("http.listen", "must be host:port or :port, such as :9090")
		}
	}
	if p := c.Metrics.Pushgateway.Value(); p != "" {
		if u, err := url.Parse(p); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			ps.addf("metrics.pushgateway", "must be an http or https URL, such as http://pushgateway.monitoring:9091")
		}
	}
}

// validateTimezone checks the time zone and keeps its location.
func (c *Config) validateTimezone(ps *problems) {
	loc, err := time.LoadLocation(c.Timezone)
	switch {
	case c.Timezone == "":
		ps.addf("timezone", "must not be empty: use an IANA name such as UTC or Europe/Paris")
	case err != nil:
		ps.addf("timezone", "unknown time zone %q", c.Timezone)
	default:
		c.location = loc
	}
}

// validateTenants checks each tenant, and that their names differ.
func (c *Config) validateTenants(ps *problems) {
	if len(c.Tenants) == 0 {
		ps.addf("tenants", "at least one tenant is required")
	}
	seen := map[string]int{}
	for i := range c.Tenants {
		path := fmt.Sprintf("tenants[%d]", i)
		t := &c.Tenants[i]
		if first, dup := seen[t.Name]; dup && t.Name != "" {
			ps.addf(path+".name", "%q is already the name of tenants[%d]", t.Name, first)
		} else {
			seen[t.Name] = i
		}
		t.validate(path, ps)
		t.Grants.validate(path, ps, c.Location(), t.People.GrantReason)
	}
}

func (c *Config) validateStore(ps *problems) {
	if problem := dialectsOr(c.Store.dialects).CheckURL(c.Store.URL.Value()); problem != "" {
		ps.addf("store.url", "%s", problem)
	}
	if !schemaName.MatchString(c.Store.Schema) {
		ps.addf("store.schema", "must be a lower-case SQL identifier such as hrsync")
	}
}

func (c *Config) validateAPI(ps *problems) {
	a := &c.API
	if u, err := url.Parse(a.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		ps.addf("api.baseUrl", "must be an http or https URL without credentials, such as https://platform.example.com")
	} else if a.InsecureHTTP() && !a.AllowInsecureHTTP {
		ps.addf("api.baseUrl", "is a plain http:// URL to a host that is not loopback: the API token would cross the network in clear; use https://, or set api.allowInsecureHTTP: true if you must")
	}
	if a.Token.IsSet() && strings.IndexFunc(a.Token.Value(), unicode.IsSpace) >= 0 {
		ps.addf("api.token", "must not contain white space")
	}
	positiveDuration(ps, "api.timeout", a.Timeout)
	positiveDuration(ps, "daemon.grace", c.Daemon.Grace)
	positiveDuration(ps, "api.personalizeTimeout", a.PersonalizeTimeout)
	if a.RatePerSecond <= 0 {
		ps.addf("api.ratePerSecond", "must be greater than 0")
	}
	atLeast(ps, "api.burst", a.Burst, 1)
	atLeast(ps, "api.maxConcurrency", a.MaxConcurrency, 1)
	atLeast(ps, "api.maxAttempts", a.MaxAttempts, 1)
}

func (t *Tenant) validate(path string, ps *problems) {
	switch {
	case t.Name == "":
		ps.addf(path+".name", "is required")
	case !tenantName.MatchString(t.Name):
		ps.addf(path+".name", "must be 1 to 63 lower-case letters, digits, '-' or '_', starting with a letter or digit")
	}
	uuidField(ps, path+".companyId", t.CompanyID)
	uuidField(ps, path+".collectionId", t.CollectionID)
	t.Source.validate(path+".source", ps)
	t.validatePeople(path, ps)
	t.validateSafeguards(path, ps)
	t.validatePersonalize(path, ps)
	t.validateOrders(path, ps)
	t.validateSchedules(path, ps)
}

// validatePeople checks the people sync's options.
func (t *Tenant) validatePeople(path string, ps *problems) {
	p := &t.People
	atLeast(ps, path+".people.batchSize", p.BatchSize, 1)
	atLeast(ps, path+".people.concurrency", p.Concurrency, 1)
	switch {
	case p.DefaultBalance < 0:
		ps.addf(path+".people.defaultBalance", "must not be negative")
	case math.IsNaN(p.DefaultBalance) || math.IsInf(p.DefaultBalance, 0):
		ps.addf(path+".people.defaultBalance", "must be a finite number")
	case t.Source.Options != nil && p.DefaultBalance > t.Source.Options.BalanceMax():
		ps.addf(path+".people.defaultBalance", "must not exceed the source's maxBalance (%s)",
			strconv.FormatFloat(t.Source.Options.BalanceMax(), 'f', -1, 64))
	}
	if p.Amount < 0 {
		ps.addf(path+".people.amount", "must not be negative")
	}
	if !grantReason.MatchString(p.GrantReason) {
		ps.addf(path+".people.grantReason", "must be 1 to 63 lower-case letters, digits, '-', '_' or '.'")
	}
}

// validateSafeguards checks the safeguards' ratios and population.
func (t *Tenant) validateSafeguards(path string, ps *problems) {
	s := &t.Safeguards
	ratio(ps, path+".safeguards.maxDepartedRatio", s.MaxDepartedRatio)
	ratio(ps, path+".safeguards.minRowsRatio", s.MinRowsRatio)
	ratio(ps, path+".safeguards.maxRejectedRatio", s.MaxRejectedRatio)
	atLeast(ps, path+".safeguards.minPopulation", s.MinPopulation, 0)
}

// validatePersonalize checks the collections to personalize and the job's
// options.
func (t *Tenant) validatePersonalize(path string, ps *problems) {
	z := &t.Personalize
	seen := map[string]bool{}
	for i, id := range z.Collections {
		cp := fmt.Sprintf("%s.personalize.collections[%d]", path, i)
		switch {
		case strings.TrimSpace(id) == "":
			ps.addf(cp, "must not be empty")
		case seen[id]:
			ps.addf(cp, "%q is listed twice", id)
		default:
			uuidField(ps, cp, id)
		}
		seen[id] = true
	}
	nonNegativeDuration(ps, path+".personalize.windowBefore", z.WindowBefore)
	nonNegativeDuration(ps, path+".personalize.windowAfter", z.WindowAfter)
	atLeast(ps, path+".personalize.concurrency", z.Concurrency, 1)
	atLeast(ps, path+".personalize.maxAttempts", z.MaxAttempts, 1)
}

// validateOrders checks the orders job's options.
func (t *Tenant) validateOrders(path string, ps *problems) {
	o := &t.Orders
	atLeast(ps, path+".orders.backfillDays", o.BackfillDays, 0)
	atLeast(ps, path+".orders.overlapDays", o.OverlapDays, 0)
	atLeast(ps, path+".orders.userIdsChunk", o.UserIDsChunk, 1)
	atLeast(ps, path+".orders.pollConcurrency", o.PollConcurrency, 1)
	nonNegativeDuration(ps, path+".orders.stopPollingAfter", o.StopPollingAfter)
	nonNegativeDuration(ps, path+".orders.productRefresh", o.ProductRefresh)
	if o.Country != "" {
		r, err := language.ParseRegion(o.Country)
		if err != nil || !r.IsCountry() || len(o.Country) != 2 || strings.ToUpper(o.Country) != o.Country {
			ps.addf(path+".orders.country", "%q is not an ISO 3166-1 alpha-2 country code such as US or FR", o.Country)
		}
	}
	if _, err := language.Parse(o.Language); err != nil || o.Language == "" {
		ps.addf(path+".orders.language", "%q is not a language tag such as en-US or fr-FR", o.Language)
	}
}

// validateSchedules checks each job's cron spec.
func (t *Tenant) validateSchedules(path string, ps *problems) {
	parser := ScheduleParser()
	for _, j := range []struct{ key, spec string }{
		{"people", t.Schedules.People},
		{"personalize", t.Schedules.Personalize},
		{"orders", t.Schedules.Orders},
		{"grants", t.Schedules.Grants},
	} {
		if j.spec == "" {
			continue
		}
		if _, err := parser.Parse(j.spec); err != nil {
			ps.addf(path+".schedules."+j.key, "invalid cron spec: %v", err)
		}
	}
}

// uuidField checks that a platform id is given and is a UUID in its
// canonical form, as the platform's API takes it.
func uuidField(ps *problems, path, v string) {
	if strings.TrimSpace(v) == "" {
		ps.addf(path, "is required")
		return
	}
	if _, err := uuid.Parse(v); err != nil || len(v) != len("00000000-0000-0000-0000-000000000000") {
		ps.addf(path, "%q is not a UUID such as 5f0c6b1e-2d4a-4c1e-9b7a-3e8f0a1c2d4e", v)
	}
}

func atLeast(ps *problems, path string, v, lowest int) {
	if v < lowest {
		if lowest == 0 {
			ps.addf(path, "must not be negative")
			return
		}
		ps.addf(path, "must be at least %d", lowest)
	}
}

func ratio(ps *problems, path string, v float64) {
	if !(v >= 0 && v <= 1) { // also catches NaN
		ps.addf(path, "must be between 0 and 1")
	}
}

func durationOK(ps *problems, path string, d Duration) bool {
	if !d.Valid() {
		ps.addf(path, "%q is not a duration: use a Go duration such as 30s, 15m, 2h, or days such as 7d", d.invalid)
		return false
	}
	return true
}

func positiveDuration(ps *problems, path string, d Duration) {
	if durationOK(ps, path, d) && d.Duration <= 0 {
		ps.addf(path, "must be greater than 0")
	}
}

func nonNegativeDuration(ps *problems, path string, d Duration) {
	if durationOK(ps, path, d) && d.Duration < 0 {
		ps.addf(path, "must not be negative")
	}
}
