// Package people is hrsync's people sync: it diffs an HR export against
// hrsync's state, stops on the safeguards, creates new people on the platform
// in batches with their balances, and records every grant in the ledger with
// the exactly-once protocol of DESIGN.md (intent committed before the call,
// outcome after, unknown outcomes held for an operator).
package people

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"hrsync/api"
	"hrsync/apiclient"
	"hrsync/model"
	"hrsync/store"
)

// Creator creates people on the platform; *apiclient.Client is one.
type Creator interface {
	CreatePeople(ctx context.Context, req api.CreatePeopleRequest, idempotencyKey string) ([]api.ReturnedPerson, error)
}

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
	// GrantReason names the initial grant in its key (default "initial").
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
	// OverrideCommand, when not nil, is the command that runs an export a
	// safeguard stopped, archived as archivedAs, once past the
	// safeguards: the HTML report beside it shows it.
	OverrideCommand func(archivedAs string) string
}

// Job runs the people sync of one tenant.
type Job struct {
	opts  Options
	store *store.Store
	api   Creator
	log   *zap.Logger
	now   func() time.Time
}

// New checks the options, fills their defaults and returns a job.
func New(opts Options, st *store.Store, creator Creator, log *zap.Logger) (*Job, error) {
	var problems []string
	if opts.Tenant == "" {
		problems = append(problems, "tenant is required")
	}
	if opts.CollectionID == "" {
		problems = append(problems, "collection id is required")
	}
	if opts.BatchSize < 0 || opts.Concurrency < 0 || opts.DefaultBalance < 0 || opts.Amount < 0 {
		problems = append(problems, "batch size, concurrency, default balance and amount must not be negative")
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("people sync: %s", strings.Join(problems, "; "))
	}
	if opts.BatchSize == 0 {
		opts.BatchSize = 100
	}
	if opts.Concurrency == 0 {
		opts.Concurrency = 4
	}
	if opts.GrantReason == "" {
		opts.GrantReason = "initial"
	}
	if opts.FinishTimeout == 0 {
		opts.FinishTimeout = 30 * time.Second
	}
	if log == nil {
		log = zap.NewNop()
	}
	return &Job{opts: opts, store: st, api: creator, log: log, now: time.Now}, nil
}

// Result is what applying a plan did.
type Result struct {
	RunID string `json:"runId"`
	// Created counts the people the platform confirmed.
	Created int `json:"created"`
	// Granted is the sum of the grants the platform confirmed.
	Granted float64 `json:"granted"`
	// NotApplied counts the people whose call was certainly not processed:
	// they are sent again by the next run.
	NotApplied int `json:"notApplied"`
	// Unknown counts the people whose call's outcome is unknown: their
	// grants are held for an operator (or resent with the same key when the
	// platform's Idempotency-Key is trusted).
	Unknown int `json:"unknown"`
	// Resent counts the people of held batches sent again with their key.
	Resent int `json:"resent"`
	// Saved counts the changed and returned people saved in state.
	Saved int `json:"saved"`
	// Departed counts the people marked departed.
	Departed int `json:"departed"`
	// Calls counts the createPeople calls made.
	Calls int `json:"calls"`
	// Skipped counts the new people not sent because the platform refused
	// the token or the company on an earlier call of the run.
	Skipped int `json:"skipped"`
	// Refused counts the people the platform refused on their own: their
	// batch was refused as invalid because of some of its people, split
	// until each person had an outcome, and this person was still refused
	// alone. Their grant is not applied; an export that lists them again
	// sends them again.
	Refused int `json:"refused"`
	// Refusals lists the people counted in Refused, with the platform's reason.
	Refusals []Refusal `json:"refusals,omitempty"`
	// Failures counts the failed calls by class (unauthorized, forbidden,
	// unreachable, rateLimited, refused, serverError, badAnswer, stopped).
	// The calls refused because of some of their people, which were split,
	// are not failures: their people are counted in Created or Refused.
	Failures map[apiclient.Class]int `json:"failures,omitempty"`
	// Errors lists the distinct call errors (no personal data), at most 20.
	Errors []string `json:"errors"`
}

// Apply carries a plan out under run runID. The caller checks the plan's
// safeguards first. Apply stops starting calls when ctx is cancelled, but
// lets the calls in flight finish and commits their outcome.
func (j *Job) Apply(ctx context.Context, runID string, plan *Plan) (*Result, error) {
	res := &Result{RunID: runID, Errors: []string{}}
	tenant := j.opts.Tenant

	// Changed and returned people are saved a chunk at a time, so that an
	// export that changes everyone holds one chunk of store rows at once.
	for _, list := range []*People{&plan.changedRows, &plan.returnedRows} {
		for start := 0; start < list.Len(); start += saveChunk {
			rows := toRows(list.Slice(start, min(start+saveChunk, list.Len())))
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

	if j.opts.TrustIdempotencyKey {
		if err := j.resendHeld(ctx, runID, &plan.heldRows, res); err != nil {
			return res, err
		}
	}

	if err := j.createAll(ctx, runID, &plan.Create, res); err != nil {
		return res, err
	}
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("run stopped: %w", err)
	}
	return res, nil
}

// createAll sends the people to create in batches, Concurrency calls at a
// time, and adds each call's outcome to res. It starts no new call once ctx
// is cancelled, a state error stopped the run, or the platform refused the
// token or the company (no later call could succeed); the calls in flight
// finish and their outcomes are committed. It returns the first state error.
func (j *Job) createAll(ctx context.Context, runID string, create *People, res *Result) error {
	var (
		mu      sync.Mutex
		fail    error
		fatal   bool
		created int // new people the platform accepted so far, for Progress
		sent    int // new people whose batch was sent
	)
	stopped := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return fail != nil || fatal || ctx.Err() != nil
	}
	g := new(errgroup.Group)
	g.SetLimit(j.opts.Concurrency)
	for start := 0; start < create.Len() && !stopped(); start += j.opts.BatchSize {
		batch := create.Slice(start, min(start+j.opts.BatchSize, create.Len()))
		g.Go(func() error {
			if stopped() {
				return nil
			}
			out, err := j.createBatch(ctx, runID, batch, stopped)
			mu.Lock()
			defer mu.Unlock()
			res.add(out)
			sent += len(batch)
			created += out.created
			if j.opts.Progress != nil {
				j.opts.Progress(created, create.Len())
			}
			if out.fatal {
				fatal = true
			}
			if err != nil && fail == nil {
				fail = err
			}
			return nil
		})
	}
	_ = g.Wait() // the goroutines report through fail
	if fatal {
		res.Skipped = create.Len() - sent
	}
	return fail
}

// add counts the outcome of one batch (its calls, and those of its parts
// when it was split) into the result.
func (r *Result) add(out batchOutcome) {
	r.Calls += out.calls
	r.Created += out.created
	r.Granted += out.granted
	r.NotApplied += out.notApplied
	r.Unknown += out.unknown
	r.Refused += len(out.refusals)
	r.Refusals = append(r.Refusals, out.refusals...)
	for _, err := range out.errs {
		class := apiclient.ClassOf(err)
		if r.Failures == nil {
			r.Failures = map[apiclient.Class]int{}
		}
		r.Failures[class]++
		if msg := err.Error(); !slices.Contains(r.Errors, msg) && len(r.Errors) < maxErrors {
			r.Errors = append(r.Errors, msg)
		}
	}
}

// maxErrors bounds the distinct call errors a result lists.
const maxErrors = 20

// batchOutcome is what became of one batch: its call, and the calls of its
// parts when the platform refused it because of some of its people.
type batchOutcome struct {
	calls, created, notApplied, unknown int
	granted                             float64
	// errs are the failed calls' errors, except the refusals that were split.
	errs []error
	// fatal says a call failed with a class that stops the run (401, 403).
	fatal bool
	// split is the platform's refusal of this batch's own call when it is
	// about some of its people (see splittable): the batch is sent again
	// in halves. Nil otherwise.
	split *apiclient.Error
	// refusals are the people refused alone.
	refusals []Refusal
}

// merge adds the outcome of a part of a split batch.
func (o *batchOutcome) merge(part batchOutcome) {
	o.calls += part.calls
	o.created += part.created
	o.notApplied += part.notApplied
	o.unknown += part.unknown
	o.granted += part.granted
	o.errs = append(o.errs, part.errs...)
	o.fatal = o.fatal || part.fatal
	o.refusals = append(o.refusals, part.refusals...)
}

// createBatch sends one batch with the exactly-once protocol. When the
// platform refuses it as invalid because of some of its people (400 or 422
// naming a person, 413), the call was not applied, and the batch is sent
// again in two halves, each with its own intent, Idempotency-Key and
// outcome, down to single people: a person refused alone is a Refusal, and
// every other person is created. Bisection stops when stop says so (the
// run is cancelled, a state error, a refused token) or a part fails
// fatally: the people not sent again keep their not-applied grant and are
// counted in notApplied. The returned error is a state error.
func (j *Job) createBatch(ctx context.Context, runID string, batch []model.Person, stop func() bool) (batchOutcome, error) {
	out, err := j.sendBatch(ctx, runID, batch)
	if err != nil || out.split == nil {
		return out, err
	}
	if len(batch) == 1 {
		out.notApplied = 0
		out.refusals = append(out.refusals, refusalOf(batch[0], out.split))
		j.log.Warn("the platform refused a person", zap.String("externalId", batch[0].ExternalID),
			zap.Int("status", out.split.Status), zap.String("code", out.split.Code))
		return out, nil
	}
	// The halves account for the batch's people from here on.
	out.notApplied -= len(batch)
	mid := len(batch) / 2
	halves := [][]model.Person{batch[:mid], batch[mid:]}
	for i, half := range halves {
		if out.fatal || stop() {
			out.notApplied += len(half)
			continue
		}
		part, err := j.createBatch(ctx, runID, half, stop)
		out.merge(part)
		if err != nil {
			if part.calls == 0 {
				out.notApplied += len(half) // its intent was not recorded
			}
			for _, rest := range halves[i+1:] {
				out.notApplied += len(rest)
			}
			return out, err
		}
	}
	return out, nil
}

// sendBatch runs the exactly-once protocol for one call: intent, call,
// outcome. The returned error is a state error (the run must stop); call
// errors are outcomes.
func (j *Job) sendBatch(ctx context.Context, runID string, batch []model.Person) (batchOutcome, error) {
	var out batchOutcome
	req := j.request(len(batch))
	grants := make([]model.Grant, 0, len(batch))
	for _, p := range batch {
		addBalance, total := j.grantFor(p)
		req.People = append(req.People, inputPerson(p, addBalance))
		grants = append(grants, model.Grant{
			Key:        model.GrantKey(j.opts.Tenant, p.ExternalID, j.opts.GrantReason, "1"),
			Tenant:     j.opts.Tenant,
			ExternalID: p.ExternalID,
			Reason:     j.opts.GrantReason,
			Occurrence: "1",
			Amount:     total,
		})
	}
	body, err := json.Marshal(req)
	if err != nil {
		return out, fmt.Errorf("encode request: %w", err)
	}
	sum := sha256.Sum256(body)
	key := "hrsync-" + uuid.NewString()
	journalID, err := j.store.BeginBatch(ctx, store.BatchIntent{
		RunID:          runID,
		Tenant:         j.opts.Tenant,
		IdempotencyKey: key,
		RequestSHA:     hex.EncodeToString(sum[:]),
		People:         toRows(batch),
		Grants:         grants,
	})
	if err != nil {
		return out, fmt.Errorf("record intent: %w", err)
	}
	return j.call(ctx, journalID, key, req, grants)
}

// request is a createPeople request with the tenant's options and room
// for n people.
func (j *Job) request(n int) api.CreatePeopleRequest {
	req := api.CreatePeopleRequest{CollectionId: j.opts.CollectionID, People: make([]api.InputPerson, 0, n)}
	if j.opts.CompanyID != "" {
		req.CompanyId = &j.opts.CompanyID
	}
	if j.opts.Amount != 0 {
		req.Amount = &j.opts.Amount
	}
	if j.opts.SendEmail {
		req.ShouldSendEmail = &j.opts.SendEmail
	}
	return req
}

// call makes one createPeople call whose intent is committed, and commits
// its outcome even when ctx was cancelled meanwhile.
func (j *Job) call(ctx context.Context, journalID int64, key string, req api.CreatePeopleRequest, grants []model.Grant) (batchOutcome, error) {
	out := batchOutcome{calls: 1}
	// The call in flight is allowed to finish: cancelling it would turn a
	// clean answer into an unknown outcome.
	callCtx := context.WithoutCancel(ctx)
	people, err := j.api.CreatePeople(callCtx, req, key)

	outcome := store.BatchOutcome{State: store.JournalSucceeded}
	var (
		apiErr *apiclient.Error
		match  answerMatch
	)
	switch {
	case err == nil:
		match = remoteIDs(req.People, people)
		outcome.RemoteIDs, outcome.Unaccounted = match.ids, match.unaccounted
		if len(match.unaccounted) > 0 {
			outcome.ErrorMessage = fmt.Sprintf("the answer accounted for %d of %d people sent",
				len(req.People)-len(match.unaccounted), len(req.People))
		}
	case errors.As(err, &apiErr) && apiErr.Outcome == apiclient.OutcomeApplied:
		// The platform answered success but the answer was unusable: the
		// call was processed, yet it accounts for nobody. Like the people a
		// readable answer leaves out, they are held for an operator.
		outcome.HTTPStatus = apiErr.Status
		outcome.ErrorMessage = apiErr.Error()
		outcome.Unaccounted = externalIDs(req.People)
	case errors.As(err, &apiErr) && apiErr.Outcome == apiclient.OutcomeNotApplied:
		outcome.State = store.JournalNotApplied
		outcome.HTTPStatus, outcome.ErrorCode, outcome.ErrorMessage = apiErr.Status, apiErr.Code, apiErr.Error()
	default:
		outcome.State = store.JournalUnknown
		outcome.ErrorMessage = err.Error()
		if apiErr != nil {
			outcome.HTTPStatus, outcome.ErrorCode = apiErr.Status, apiErr.Code
		}
	}
	finishCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), j.opts.FinishTimeout)
	defer cancel()
	if ferr := j.store.FinishBatch(finishCtx, journalID, outcome); ferr != nil {
		// The outcome could not be committed: the grants stay pending, and
		// the next run holds them as unknown. Nothing is lost or doubled.
		return out, fmt.Errorf("record outcome of call %d: %w", journalID, ferr)
	}
	switch outcome.State {
	case store.JournalSucceeded:
		out.created, out.granted, out.unknown = settled(grants, outcome.Unaccounted)
	case store.JournalNotApplied:
		out.notApplied = len(grants)
	default:
		out.unknown = len(grants)
	}
	j.warnUnaccounted(journalID, len(req.People), len(people), match, outcome.Unaccounted)
	switch {
	case err == nil:
		j.log.Debug("createPeople call done", zap.Int64("journal", journalID), zap.Int("people", len(grants)))
	case outcome.State == store.JournalNotApplied && splittable(apiErr):
		out.split = apiErr
		if len(grants) > 1 {
			j.log.Info("the platform refused a batch because of some of its people; sending it again in halves",
				zap.Int64("journal", journalID), zap.Int("people", len(grants)),
				zap.Int("status", apiErr.Status), zap.String("code", apiErr.Code))
		}
	default:
		out.errs = []error{err}
		out.fatal = apiclient.ClassOf(err).Fatal()
		j.log.Warn("createPeople call failed", zap.Int64("journal", journalID), zap.String("state", string(outcome.State)),
			zap.Int("people", len(grants)), zap.Error(err))
	}
	return out, nil
}

// resendHeld sends the held batches again, each exactly as it was and with
// its original Idempotency-Key; only when the operator trusts the platform
// to honour that key. A batch whose people are not all in the export stays held.
func (j *Job) resendHeld(ctx context.Context, runID string, heldRows *People, res *Result) error {
	batches, err := j.store.UnknownBatches(ctx, j.opts.Tenant)
	if err != nil {
		return fmt.Errorf("list held batches: %w", err)
	}
	byID := make(map[string]model.Person, heldRows.Len())
	for _, p := range heldRows.All() {
		byID[p.ExternalID] = p
	}
	for _, b := range batches {
		if err := ctx.Err(); err != nil {
			// A cancelled run starts no new call; the batch stays held.
			return fmt.Errorf("run stopped: %w", err)
		}
		req := j.request(len(b.Grants))
		complete := true
		for _, g := range b.Grants {
			p, ok := byID[g.ExternalID]
			if !ok {
				complete = false
				break
			}
			req.People = append(req.People, inputPerson(p, g.Amount-j.opts.Amount))
		}
		if !complete || b.Journal.ID == 0 {
			j.log.Warn("held batch not resent: some of its people are not in this export", zap.Int64("journal", b.Journal.ID))
			continue
		}
		journalID, err := j.store.BeginResend(ctx, b.Journal.ID, runID)
		if err != nil {
			return fmt.Errorf("record resend of call %d: %w", b.Journal.ID, err)
		}
		out, err := j.call(ctx, journalID, b.Journal.IdempotencyKey, req, b.Grants)
		if out.split != nil {
			// A held batch is resent as it was, never split: its people
			// are not applied, and the next run sends them in new batches.
			out.errs = append(out.errs, out.split)
		}
		res.Resent += len(b.Grants)
		res.add(out)
		if err != nil {
			return err
		}
	}
	return nil
}

func inputPerson(p model.Person, addBalance float64) api.InputPerson {
	in := api.InputPerson{
		ExternalId: &p.ExternalID,
		Email:      &p.Email,
		FirstName:  &p.FirstName,
		LastName:   &p.LastName,
		Department: &p.Department,
		Location:   &p.Location,
		AddBalance: &addBalance,
	}
	if !p.StartDate.IsZero() {
		s := p.StartDate.Format(model.DateLayout)
		in.StartDate = &s
	}
	if !p.BirthDate.IsZero() {
		s := p.BirthDate.Format(model.DateLayout)
		in.BirthDate = &s
	}
	return in
}

// saveChunk is how many changed people Apply saves in one call.
const saveChunk = 10000

func toRows(people []model.Person) []store.PersonRow {
	rows := make([]store.PersonRow, 0, len(people))
	for _, p := range people {
		rows = append(rows, store.PersonRow{
			ExternalID:  p.ExternalID,
			Email:       p.Email,
			FirstName:   p.FirstName,
			LastName:    p.LastName,
			Department:  p.Department,
			Location:    p.Location,
			StartDate:   p.StartDate,
			Fingerprint: int64(hashes(&p).Fields), //nolint:gosec // the store keeps the uint64's bits in an int64
		})
	}
	return rows
}
