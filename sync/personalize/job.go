// Package personalize is hrsync's personalization job: it personalizes the
// configured collections for the new hires of a tenant (people whose start
// date falls in a window around today), from the source fields of the
// tenant's last good export, many calls at once, committing each outcome as
// it arrives.
//
// The store keeps no birth date (DESIGN.md, invariant 5), so the job reads
// the source fields again from the last good export (LastExport): the
// archived file of the newest processed export, or the SQL query. A
// fingerprint of exactly the fields sent decides whether a person is
// personalized again: a done and unchanged person never is; a changed one
// is. Pending answers are asked again on later runs until Done or Error; a
// collection the platform refuses (422) is remembered and reported once;
// failed calls are retried on later runs with a growing wait, up to
// Options.MaxAttempts, then left for an operator with their reason.
package personalize

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"
	"go.uber.org/zap"

	"hrsync/api"
	"hrsync/model"
	"hrsync/sources"
)

// Personalizer personalizes a collection from one person's source fields;
// *apiclient.Client is one.
type Personalizer interface {
	Personalize(ctx context.Context, collectionID string, req api.PersonalizeRequest) (*api.PersonalizationResult, error)
}

// LastExport opens the tenant's last good export, whose accepted records
// carry the source fields; ok is false when there is none yet. The caller
// of Read owns the source: the job reads it once and does not close it.
type LastExport func(ctx context.Context) (src sources.Source, ok bool, err error)

// Defaults of the options left at zero.
const (
	DefaultConcurrency    = 20
	DefaultMaxAttempts    = 5
	DefaultRetryBackoff   = time.Minute
	DefaultMaxBackoff     = time.Hour
	DefaultRecheckRefused = 24 * time.Hour
	DefaultFinishTimeout  = 30 * time.Second
)

// Options configure the personalization job of one tenant.
type Options struct {
	Tenant    string
	CompanyID string
	// Collections are the collection ids to personalize; empty disables
	// the job.
	Collections []string
	// WindowBefore and WindowAfter frame the start dates served: a person
	// is personalized from WindowBefore before their start date to
	// WindowAfter after it, comparing UTC calendar days.
	WindowBefore time.Duration
	WindowAfter  time.Duration
	// Concurrency is how many personalize calls may be in flight at once.
	// The client's own rate and concurrency limits apply on top.
	Concurrency int
	// MaxAttempts is how many failed calls in a row one person and
	// collection may have before the job gives up and leaves it for an
	// operator.
	MaxAttempts int
	// RetryBackoff is the wait after the first failed call; it doubles
	// with each further failure, up to MaxBackoff.
	RetryBackoff time.Duration
	MaxBackoff   time.Duration
	// RecheckRefused is how long a collection the platform refused (422)
	// is skipped before one run tries it again.
	RecheckRefused time.Duration
	// FinishTimeout bounds the commit of the run's outcome after the run's
	// context is cancelled.
	FinishTimeout time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Job runs the personalization of one tenant.
type Job struct {
	opts   Options
	store  Store
	api    Personalizer
	export LastExport
	log    *zap.Logger
}

// New checks the options, fills their defaults and returns a job. api may
// be nil for a job that only plans.
func New(opts Options, st Store, p Personalizer, export LastExport, log *zap.Logger) (*Job, error) {
	if problems := checkOptions(opts, st, export); len(problems) > 0 {
		return nil, fmt.Errorf("personalization: %s", strings.Join(problems, "; "))
	}
	opts = withDefaults(opts)
	if log == nil {
		log = zap.NewNop()
	}
	return &Job{opts: opts, store: st, api: p, export: export, log: log}, nil
}

// checkOptions lists what is wrong with the options and the job's
// dependencies, for New.
func checkOptions(opts Options, st Store, export LastExport) []string {
	var problems []string
	if opts.Tenant == "" {
		problems = append(problems, "tenant is required")
	}
	if opts.CompanyID == "" && len(opts.Collections) > 0 {
		problems = append(problems, "company id is required")
	}
	if st == nil || export == nil {
		problems = append(problems, "a store and a last export are required")
	}
	if opts.WindowBefore < 0 || opts.WindowAfter < 0 || opts.Concurrency < 0 || opts.MaxAttempts < 0 ||
		opts.RetryBackoff < 0 || opts.MaxBackoff < 0 || opts.RecheckRefused < 0 {
		problems = append(problems, "windows, concurrency, attempts and waits must not be negative")
	}
	seen := map[string]bool{}
	for _, c := range opts.Collections {
		if c == "" || seen[c] {
			problems = append(problems, "collection ids must be non-empty and distinct")
			break
		}
		seen[c] = true
	}
	return problems
}

// withDefaults fills the options left zero with their defaults.
func withDefaults(opts Options) Options {
	if opts.Concurrency == 0 {
		opts.Concurrency = DefaultConcurrency
	}
	if opts.MaxAttempts == 0 {
		opts.MaxAttempts = DefaultMaxAttempts
	}
	if opts.RetryBackoff == 0 {
		opts.RetryBackoff = DefaultRetryBackoff
	}
	if opts.MaxBackoff == 0 {
		opts.MaxBackoff = DefaultMaxBackoff
	}
	if opts.RecheckRefused == 0 {
		opts.RecheckRefused = DefaultRecheckRefused
	}
	if opts.FinishTimeout == 0 {
		opts.FinishTimeout = DefaultFinishTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return opts
}

// Enabled reports whether the tenant has collections to personalize.
func (j *Job) Enabled() bool { return len(j.opts.Collections) > 0 }

// Fingerprint is the hash of exactly the source fields a personalize call
// sends for p: names, department, location, and the start and birth dates
// as calendar days. It is the only trace of the birth date hrsync keeps.
func Fingerprint(p model.Person) uint64 {
	h := xxhash.New()
	for _, s := range []string{p.FirstName, p.LastName, p.Department, p.Location, day(p.StartDate), day(p.BirthDate)} {
		_, _ = h.WriteString(s)
		_, _ = h.WriteString("\x00")
	}
	return h.Sum64()
}

func day(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(model.DateLayout)
}

// Request builds the personalize request for p: the company and the
// person's source fields, leaving out the empty ones. Dates are sent as
// UTC midnight of their calendar day.
func Request(companyID string, p model.Person) api.PersonalizeRequest {
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	date := func(t time.Time) *time.Time {
		if t.IsZero() {
			return nil
		}
		y, m, d := t.UTC().Date()
		u := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
		return &u
	}
	return api.PersonalizeRequest{CompanyId: companyID, SourceFields: api.SourceFields{
		FirstName: opt(p.FirstName), LastName: opt(p.LastName),
		Department: opt(p.Department), Location: opt(p.Location),
		StartDate: date(p.StartDate), BirthDate: date(p.BirthDate),
	}}
}

// utcDay is t's UTC calendar day at midnight.
func utcDay(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// InWindow reports whether a start date falls in the window around today:
// from before ahead of the start date to after past it, by UTC day.
func InWindow(start, today time.Time, before, after time.Duration) bool {
	if start.IsZero() {
		return false
	}
	s, t := utcDay(start), utcDay(today)
	return !t.Before(s.Add(-before)) && !t.After(s.Add(after))
}

// ErrLocked says another run of the same job and tenant holds the lock.
var ErrLocked = model.ErrLocked

// errStopped marks a run whose context ended before every item was done.
var errStopped = errors.New("run stopped")
