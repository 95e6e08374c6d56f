// Package sender is hrsync's one exactly-once engine for balance grants
// (DESIGN.md, invariant 1). Every job that grants (the people sync's initial
// balance, the grants job's birthdays, anniversaries and campaigns) sends its
// grants through a Sender, with the platform's createPeople call:
//
//   - the intent of each call (a journal entry and its grants, pending) is
//     committed before the call, and its outcome after (store.BeginBatch,
//     store.FinishBatch);
//   - a call whose outcome is unknown (a timeout after sending, a 5xx, a
//     dropped connection, a crash before the outcome's commit) holds its
//     grants for an operator; it is sent again only with its original
//     Idempotency-Key, and only when the operator trusts the platform to
//     honour that key (Options.TrustIdempotencyKey, ResendHeld);
//   - a call certainly not applied leaves its grants not_applied, to be sent
//     again by a later run;
//   - a success answer is checked: a person it does not account for is held;
//   - a batch refused because of some of its people is sent again in halves,
//     down to single people (poison batches are isolated by bisection);
//   - a refused token or company (401, 403) stops the remaining calls.
//
// A Sender acts within the scope of one job (and, optionally, one rule) of
// one tenant: HoldInterrupted and ResendHeld never touch the grants or calls
// of another job, which may have them in flight under its own lock.
package sender

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"

	"hrsync/api"
	"hrsync/apiclient"
	"hrsync/model"
	"hrsync/store"
)

// Creator creates people on the platform, or, for people who exist
// already, returns them and adds their balance; *apiclient.Client is one.
type Creator interface {
	CreatePeople(ctx context.Context, req api.CreatePeopleRequest, idempotencyKey string) ([]api.ReturnedPerson, error)
}

// Options configure a Sender: the tenant, the scope of its grants, and the
// createPeople requests it makes.
type Options struct {
	Tenant       string
	CompanyID    string
	CollectionID string
	// Job is the job whose grants the Sender sends (model.JobPeople,
	// model.JobGrants). Required: the ledger and the journal record it.
	Job model.Job
	// Rule, when set, narrows the scope to the grants of that reason: Send
	// refuses an item of another reason, and HoldInterrupted and ResendHeld
	// act on that rule's grants only. "" means every rule of the job.
	Rule string
	// BatchSize is how many people one createPeople call carries (default 100).
	BatchSize int
	// Concurrency is how many calls may be in flight at once (default 4).
	Concurrency int
	// Amount is the request-level amount the platform adds to every person
	// of a call; 0 means it is not sent. The ledger records each person's
	// AddBalance plus Amount.
	Amount float64
	// SendEmail asks the platform to e-mail the people of each call.
	SendEmail bool
	// TrustIdempotencyKey is the operator's declaration that the platform
	// honours Idempotency-Key: ResendHeld then sends held calls again with
	// their original key. Without it ResendHeld sends nothing.
	TrustIdempotencyKey bool
	// FinishTimeout bounds the commit of a call's outcome after ctx is
	// cancelled (graceful shutdown); default 30s.
	FinishTimeout time.Duration
	// PersonRows, when set, turns a batch's people into the state rows
	// committed with the call's intent (store.BatchIntent.People): the
	// people sync's new people enter state with their call. Nil leaves
	// state's people as they are: the grants job sends people already in
	// state (each must be there: the ledger refers to them).
	PersonRows func(people []model.Person) []store.PersonRow
	// Progress, when not nil, is told after each batch how many of the
	// send's people the platform accepted so far; it must not block.
	Progress func(applied, total int)
}

// Grant is what one item of a send grants, in the ledger's terms. Its key
// is model.GrantKey(tenant, person's externalId, Reason, Occurrence): one
// grant per person, rule and occurrence, ever.
type Grant struct {
	// Reason is the rule that grants (the people sync's
	// model.InitialGrantReason, a grants rule's name).
	Reason string
	// Occurrence says which occurrence of the rule: "1" for the initial
	// grant, the year for yearly rules, the campaign's key.
	Occurrence string
	// AddBalance is the person's addBalance in the request.
	AddBalance float64
	// Day is the day a grants rule grants it (the ledger's grant_day, the
	// month a budget counts it in); zero for the people sync.
	Day time.Time
}

// Item is one person of a send with their grant. The person's fields are
// sent as they are (externalId, e-mail, names, department, location, start
// date; the birth date only when set): for a person who exists on the
// platform, the platform returns them and adds the balance.
type Item struct {
	Person model.Person
	Grant  Grant
}

// Items is what a Send carries, read one batch at a time so that a long
// list is never all turned into requests at once.
type Items interface {
	// Len is the number of items.
	Len() int
	// Slice returns items [start, end).
	Slice(start, end int) []Item
}

// List is a slice of items as Items.
type List []Item

// Len is the number of items.
func (l List) Len() int { return len(l) }

// Slice returns items [start, end).
func (l List) Slice(start, end int) []Item { return l[start:end] }

// Store is the part of the store a Sender uses: the batch journal, where
// it opens, finishes and resends the calls, and the grants ledger it
// reads. *store.Store is one. Only the sender holds a Store: the jobs that
// grant hold a Journal, which opens Senders and nothing else.
type Store interface {
	BeginBatch(ctx context.Context, in store.BatchIntent) (journalID int64, err error)
	FinishBatch(ctx context.Context, journalID int64, out store.BatchOutcome) error
	BeginResend(ctx context.Context, heldJournalID int64, runID string, sc store.Scope) (journalID int64, err error)
	HoldInterrupted(ctx context.Context, tenant string, sc store.Scope) (n int, err error)
	UnknownBatches(ctx context.Context, tenant string, sc store.Scope) ([]store.HeldBatch, error)
	Grant(ctx context.Context, key string) (model.Grant, error)
	GrantCall(ctx context.Context, key string) (store.JournalEntry, error)
}

// Journal is the batch journal as the jobs that grant hold it: it opens
// Senders on the store it was made with, and the jobs can do nothing else
// with it, so that only a Sender opens, finishes or resends a batch.
type Journal struct{ store Store }

// NewJournal returns the journal kept in st.
func NewJournal(st Store) Journal { return Journal{store: st} }

// Sender returns a Sender that records in the journal (see New).
func (j Journal) Sender(opts Options, creator Creator, log *zap.Logger) (*Sender, error) {
	return New(opts, j.store, creator, log)
}

// Sender sends one tenant's grants of one job with the exactly-once protocol.
type Sender struct {
	opts  Options
	store Store
	api   Creator
	log   *zap.Logger
}

// New checks the options, fills their defaults and returns a Sender that
// records in st and calls creator (nil for a Sender that only plans and
// never sends).
func New(opts Options, st Store, creator Creator, log *zap.Logger) (*Sender, error) {
	var problems []string
	if opts.Tenant == "" {
		problems = append(problems, "tenant is required")
	}
	if opts.Job == "" {
		problems = append(problems, "job is required")
	}
	if opts.CollectionID == "" {
		problems = append(problems, "collection id is required")
	}
	if opts.BatchSize < 0 || opts.Concurrency < 0 || opts.Amount < 0 {
		problems = append(problems, "batch size, concurrency and amount must not be negative")
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("sender: %s", strings.Join(problems, "; "))
	}
	if opts.BatchSize == 0 {
		opts.BatchSize = 100
	}
	if opts.Concurrency == 0 {
		opts.Concurrency = 4
	}
	if opts.FinishTimeout == 0 {
		opts.FinishTimeout = 30 * time.Second
	}
	if log == nil {
		log = zap.NewNop()
	}
	return &Sender{opts: opts, store: st, api: creator, log: log}, nil
}

// BatchSize is how many people one call carries.
func (s *Sender) BatchSize() int { return s.opts.BatchSize }

// Scope is the store scope of the Sender's grants and calls.
func (s *Sender) Scope() store.Scope {
	return store.Scope{Job: s.opts.Job, Rule: s.opts.Rule}
}

// HoldInterrupted holds as unknown the grants and calls of the Sender's
// scope that a crashed run left in flight (store.HoldInterrupted); it
// returns how many grants it held. Call it at the start of a run, under the
// job's lock, before Send.
func (s *Sender) HoldInterrupted(ctx context.Context) (int, error) {
	n, err := s.store.HoldInterrupted(ctx, s.opts.Tenant, s.Scope())
	if err != nil {
		return 0, fmt.Errorf("hold interrupted grants: %w", err)
	}
	return n, nil
}

// Result is what a Send or a ResendHeld did.
type Result struct {
	// Applied counts the people whose grant the platform confirmed.
	Applied int `json:"applied"`
	// Granted is the sum of the grants the platform confirmed.
	Granted float64 `json:"granted"`
	// NotApplied counts the people whose call was certainly not processed:
	// their grants are not_applied, and a later Send sends them again.
	NotApplied int `json:"notApplied"`
	// Unknown counts the people whose call's outcome is unknown, or whom a
	// success answer did not account for: their grants are held.
	Unknown int `json:"unknown"`
	// Resent counts the people of held calls sent again with their key.
	Resent int `json:"resent"`
	// Calls counts the createPeople calls made (the parts of split batches
	// included).
	Calls int `json:"calls"`
	// Skipped counts the people not sent because the platform refused the
	// token or the company on an earlier call, or the send was stopped.
	Skipped int `json:"skipped"`
	// Refused counts the people the platform refused alone (see Refusal).
	Refused int `json:"refused"`
	// Refusals lists the people counted in Refused, with the reason.
	Refusals []Refusal `json:"refusals,omitempty"`
	// Failures counts the failed calls by class (unauthorized, forbidden,
	// unreachable, rateLimited, refused, serverError, badAnswer, stopped).
	// Calls refused because of some of their people, which were split, are
	// not failures: their people are counted in Applied or Refused.
	Failures map[apiclient.Class]int `json:"failures,omitempty"`
	// Errors lists the distinct call errors (no personal data), at most 20.
	Errors []string `json:"errors"`
}

// Dominant is the class of most failed calls (the first by name on a
// tie); "" when no call failed.
func (r *Result) Dominant() apiclient.Class {
	var dominant apiclient.Class
	most := 0
	for c, n := range r.Failures {
		if n > most || n == most && c < dominant {
			dominant, most = c, n
		}
	}
	return dominant
}

// Fatal tells whether a call failed with a class that stops every later
// call (a refused token or company), and which.
func (r *Result) Fatal() (apiclient.Class, bool) {
	var fatal apiclient.Class
	for c := range r.Failures {
		if c.Fatal() && (fatal == "" || c < fatal) {
			fatal = c
		}
	}
	return fatal, fatal != ""
}

// Merge adds the counts of o to r.
func (r *Result) Merge(o *Result) {
	r.Applied += o.Applied
	r.Granted += o.Granted
	r.NotApplied += o.NotApplied
	r.Unknown += o.Unknown
	r.Resent += o.Resent
	r.Calls += o.Calls
	r.Skipped += o.Skipped
	r.Refused += o.Refused
	r.Refusals = append(r.Refusals, o.Refusals...)
	for c, n := range o.Failures {
		if r.Failures == nil {
			r.Failures = map[apiclient.Class]int{}
		}
		r.Failures[c] += n
	}
	for _, e := range o.Errors {
		r.addError(e)
	}
}

// addError lists a distinct error message, at most maxErrors.
func (r *Result) addError(msg string) {
	if len(r.Errors) >= maxErrors {
		return
	}
	for _, e := range r.Errors {
		if e == msg {
			return
		}
	}
	r.Errors = append(r.Errors, msg)
}

// maxErrors bounds the distinct call errors a result lists.
const maxErrors = 20

// newResult is an empty result whose Errors is an empty list, never null.
func newResult() *Result { return &Result{Errors: []string{}} }

// ErrOutOfScope says an item's grant is not of the Sender's rule.
var ErrOutOfScope = errors.New("grant outside the sender's scope")
