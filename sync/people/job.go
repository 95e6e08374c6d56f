// Package people is hrsync's people sync: it diffs an HR export against
// hrsync's state, stops on the safeguards, and creates new people on the
// platform with their initial balances through the shared exactly-once
// engine (package sender: intent committed before the call, outcome after,
// unknown outcomes held for an operator), then reports and archives the
// export.
package people

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"hrsync/model"
	"hrsync/sources"
	"hrsync/store"
	"hrsync/sync/sender"
)

// Creator creates people on the platform; *apiclient.Client is one.
type Creator = sender.Creator

// Refusal is a person the platform refused on their own (see sender.Refusal).
type Refusal = sender.Refusal

// Options configure the people sync of one tenant.
type Options struct {
	Tenant       string
	CompanyID    string
	CollectionID string
	// BatchSize is how many people one createPeople call carries.
	BatchSize int
	// Concurrency is how many createPeople calls may be in flight at once.
	Concurrency int
	// DefaultBalance is granted to a new person whose export row has no addBalance.
	DefaultBalance float64
	// Amount is the request-level amount the platform adds to every person
	// of a call; 0 means it is not sent.
	Amount float64
	// SendEmail asks the platform to e-mail the people it creates.
	SendEmail bool
	// GrantReason names the initial grant in its key (default
	// model.InitialGrantReason). It is the people sync's rule in the
	// ledger's scope (model.JobPeople, GrantReason).
	GrantReason string
	// Safeguards stop a run whose export looks wrong. They are taken as
	// given (the configuration supplies DefaultSafeguards' values).
	Safeguards Safeguards
	// TrustIdempotencyKey is the operator's declaration that the platform
	// honours Idempotency-Key: held batches are then sent again with their
	// original key instead of waiting for an operator.
	TrustIdempotencyKey bool
	// FinishTimeout bounds the commit of a call's outcome after the run's
	// context is cancelled (graceful shutdown).
	FinishTimeout time.Duration
	// Progress, when not nil, is told after each createPeople batch how many
	// of the run's new people were handled so far; it must not block.
	Progress func(done, total int)
	// Now is the clock of departures and sightings; nil means time.Now.
	Now func() time.Time
	// OverrideCommand, when not nil, is the command that runs an export a
	// safeguard stopped, archived as archivedAs, once past the
	// safeguards: the HTML report beside it shows it.
	OverrideCommand func(archivedAs string) string
	// Birthdays, when not nil (a tenant with a birthday grant rule), keeps
	// the month and day of birth of the people an export adds, changes or
	// brings back, so that the grants job still knows the birthday of a
	// person a later export no longer lists.
	Birthdays BirthdayKeeper
}

// BirthdayKeeper keeps the month and day of birth (never the year) of the
// people of a tenant for its birthday grant rules. *store.Store is one.
type BirthdayKeeper interface {
	KeepBirthdays(ctx context.Context, tenant string, days map[string]store.MonthDay, forget []string) error
}

// Job runs the people sync of one tenant.
type Job struct {
	opts   Options
	store  Store
	sender *sender.Sender
	log    *zap.Logger
	now    func() time.Time
}

// New checks the options, fills their defaults and returns a job that
// keeps its state in st and sends its grants through a Sender opened on
// journal.
func New(opts Options, st Store, journal sender.Journal, creator Creator, log *zap.Logger) (*Job, error) {
	if opts.DefaultBalance < 0 {
		return nil, errors.New("people sync: default balance must not be negative")
	}
	if opts.GrantReason == "" {
		opts.GrantReason = model.InitialGrantReason
	}
	if opts.FinishTimeout == 0 {
		opts.FinishTimeout = 30 * time.Second
	}
	if log == nil {
		log = zap.NewNop()
	}
	// The sender checks the tenant, the collection, the batch size, the
	// concurrency and the amount, and fills their defaults.
	snd, err := journal.Sender(sender.Options{
		Tenant:       opts.Tenant,
		CompanyID:    opts.CompanyID,
		CollectionID: opts.CollectionID,
		// The job's whole scope, not only GrantReason: its lock covers
		// every grant the people sync made, whatever reason was configured
		// when it made them.
		Job:                 model.JobPeople,
		BatchSize:           opts.BatchSize,
		Concurrency:         opts.Concurrency,
		Amount:              opts.Amount,
		SendEmail:           opts.SendEmail,
		TrustIdempotencyKey: opts.TrustIdempotencyKey,
		FinishTimeout:       opts.FinishTimeout,
		PersonRows:          toRows,
		Progress:            opts.Progress,
	}, creator, log)
	if err != nil {
		return nil, fmt.Errorf("people sync: %w", err)
	}
	opts.BatchSize = snd.BatchSize()
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	return &Job{opts: opts, store: st, sender: snd, log: log, now: now}, nil
}

// Result is what applying a plan did: what the sender did with the new
// people and the held grants resent (sender.Result, the one counts type of
// every grant-sending job: Applied counts the new people the platform
// confirmed), and the people saved and marked departed in state. Its JSON
// is the report's "result", where Applied keeps its name "created".
type Result struct {
	RunID string `json:"runId"`
	sender.Result
	Saved    int `json:"saved"`    // changed and returned people saved in state
	Departed int `json:"departed"` // people marked departed
}

// MarshalJSON writes the result as the report has always shown it: the
// sender's counts beside the run's, Applied as "created".
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result // the same fields, without this method
	b, err := json.Marshal(plain(r))
	if err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	fields["created"] = fields["applied"]
	delete(fields, "applied")
	return json.Marshal(fields)
}

// Apply carries a plan out under run runID. The caller checks the plan's
// safeguards first. Apply stops starting calls when ctx is cancelled, but
// lets the calls in flight finish and commits their outcome.
func (j *Job) Apply(ctx context.Context, runID string, plan *Plan) (*Result, error) {
	res := &Result{RunID: runID, Result: sender.Result{Errors: []string{}}}
	tenant := j.opts.Tenant

	// Changed and returned people are saved a chunk at a time, so that an
	// export that changes everyone holds one chunk of store rows at once.
	for _, list := range []*People{&plan.changedRows, &plan.returnedRows} {
		for start := 0; start < list.Len(); start += saveChunk {
			rows := listRows(list, start, min(start+saveChunk, list.Len()))
			for i := range rows {
				rows[i].LastSeenAt = j.now()
			}
			if err := j.store.SavePeople(ctx, tenant, rows); err != nil {
				return res, fmt.Errorf("save changed people: %w", err)
			}
			res.Saved += len(rows)
		}
	}
	if len(plan.Departed) > 0 {
		if err := j.store.MarkDeparted(ctx, tenant, plan.Departed, j.now()); err != nil {
			return res, fmt.Errorf("mark departed: %w", err)
		}
		res.Departed = len(plan.Departed)
	}

	held := make(map[string]model.Person, plan.heldRows.Len())
	for _, p := range plan.heldRows.All() {
		held[p.ExternalID] = p
	}
	resent, err := j.sender.ResendHeld(ctx, runID, func(id string) (model.Person, bool) {
		p, ok := held[id]
		return p, ok
	})
	res.Merge(resent)
	if err != nil {
		return res, err
	}
	sent, err := j.sender.Send(ctx, runID, createItems{list: &plan.Create, job: j})
	res.Merge(sent)
	if err != nil {
		return res, err
	}
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("run stopped: %w", err)
	}
	if err := j.keepBirthdays(ctx, plan); err != nil {
		return res, err
	}
	return res, nil
}

// keepBirthdays hands the month and day of birth of the plan's new,
// changed and returned people to Options.Birthdays, and the people of those
// listed without a birth date to forget.
func (j *Job) keepBirthdays(ctx context.Context, plan *Plan) error {
	if j.opts.Birthdays == nil {
		return nil
	}
	days := map[string]store.MonthDay{}
	var forget []string
	for _, list := range []*People{&plan.Create, &plan.changedRows, &plan.returnedRows} {
		for _, p := range list.All() {
			month, day, ok := p.Birthday()
			if !ok {
				forget = append(forget, p.ExternalID)
				continue
			}
			days[p.ExternalID] = store.MonthDay{Month: month, Day: day}
		}
	}
	if err := j.opts.Birthdays.KeepBirthdays(ctx, j.opts.Tenant, days, forget); err != nil {
		return fmt.Errorf("keep birthdays: %w", err)
	}
	return nil
}

// createItems is the plan's new people as the sender's items, each with
// their initial grant, read a batch at a time.
type createItems struct {
	list *People
	job  *Job
}

func (c createItems) Len() int { return c.list.Len() }

func (c createItems) Slice(start, end int) []sender.Item {
	people := c.list.Slice(start, end)
	items := make([]sender.Item, len(people))
	for i, p := range people {
		addBalance, _ := c.job.grantFor(p)
		items[i] = sender.Item{Person: p, Grant: sender.Grant{Reason: c.job.opts.GrantReason, Occurrence: "1", AddBalance: addBalance}}
	}
	return items
}

// saveChunk is how many changed people Apply saves in one call.
const saveChunk = 10000

// toRows turns people into state rows, with the fingerprint of each (the
// sender's Options.PersonRows: the new people enter state with their call).
func toRows(people []model.Person) []store.PersonRow {
	rows := make([]store.PersonRow, 0, len(people))
	for _, p := range people {
		rows = append(rows, toRow(p, sources.Fingerprint(p)))
	}
	return rows
}

// listRows turns the people of list from index start up to end into state
// rows, with the fingerprint the list keeps of each.
func listRows(list *People, start, end int) []store.PersonRow {
	rows := make([]store.PersonRow, 0, end-start)
	for i := start; i < end; i++ {
		p, h := list.hashedAt(i)
		rows = append(rows, toRow(p, h.Fields))
	}
	return rows
}

// toRow is the state row of p, whose fields hash to fingerprint.
func toRow(p model.Person, fingerprint uint64) store.PersonRow {
	return store.PersonRow{
		ExternalID:  p.ExternalID,
		Email:       p.Email,
		FirstName:   p.FirstName,
		LastName:    p.LastName,
		Department:  p.Department,
		Location:    p.Location,
		StartDate:   p.StartDate,
		Fingerprint: int64(fingerprint),
	}
}
