package sender

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/google/uuid"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"hrsync/api"
	"hrsync/apiclient"
	"hrsync/model"
	"hrsync/store"
)

// Send sends items in batches of BatchSize, Concurrency calls at a time,
// each call with the exactly-once protocol, under run runID (a run of the
// Sender's job recorded in the store). A grant whose key the ledger holds
// already in a state other than not_applied fails the send
// (store.ErrGrantConflict): the caller plans only grants not yet applied.
// A person must appear at most once in a send.
//
// Send starts no new call once ctx is cancelled, a state error stopped it,
// or the platform refused the token or the company (no later call could
// succeed: the people not sent are counted in Skipped); the calls in flight
// finish and their outcomes are committed. The returned error is the first
// state error (the store failed); call failures are outcomes, counted in
// the result.
func (s *Sender) Send(ctx context.Context, runID string, items Items) (*Result, error) {
	res := newResult()
	var (
		mu      sync.Mutex
		fail    error
		fatal   bool
		applied int // people the platform accepted so far, for Progress
		sent    int // people whose batch was sent
	)
	stopped := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return fail != nil || fatal || ctx.Err() != nil
	}
	g := new(errgroup.Group)
	g.SetLimit(s.opts.Concurrency)
	for start := 0; start < items.Len() && !stopped(); start += s.opts.BatchSize {
		batch := items.Slice(start, min(start+s.opts.BatchSize, items.Len()))
		g.Go(func() error {
			if stopped() {
				return nil
			}
			out, err := s.createBatch(ctx, runID, batch, stopped)
			mu.Lock()
			defer mu.Unlock()
			res.add(out)
			sent += len(batch)
			applied += out.applied
			if s.opts.Progress != nil {
				s.opts.Progress(applied, items.Len())
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
		res.Skipped = items.Len() - sent
	}
	return res, fail
}

// add counts the outcome of one batch (its calls, and those of its parts
// when it was split) into the result.
func (r *Result) add(out batchOutcome) {
	r.Calls += out.calls
	r.Applied += out.applied
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
		r.addError(err.Error())
	}
}

// batchOutcome is what became of one batch: its call, and the calls of its
// parts when the platform refused it because of some of its people.
type batchOutcome struct {
	calls, applied, notApplied, unknown int
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
	o.applied += part.applied
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
// every other person is sent. Bisection stops when stop says so (the send
// is cancelled, a state error, a refused token) or a part fails fatally:
// the people not sent again keep their not-applied grant and are counted
// in notApplied. The returned error is a state error.
func (s *Sender) createBatch(ctx context.Context, runID string, batch []Item, stop func() bool) (batchOutcome, error) {
	out, err := s.sendBatch(ctx, runID, batch)
	if err != nil || out.split == nil {
		return out, err
	}
	if len(batch) == 1 {
		p := batch[0].Person
		out.notApplied = 0
		out.refusals = append(out.refusals, refusalOf(p, out.split))
		s.log.Warn("the platform refused a person", zap.String("externalId", p.ExternalID),
			zap.Int("status", out.split.Status), zap.String("code", out.split.Code))
		return out, nil
	}
	// The halves account for the batch's people from here on.
	out.notApplied -= len(batch)
	mid := len(batch) / 2
	halves := [][]Item{batch[:mid], batch[mid:]}
	for i, half := range halves {
		if out.fatal || stop() {
			out.notApplied += len(half)
			continue
		}
		part, err := s.createBatch(ctx, runID, half, stop)
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

// grantOf is the ledger's grant of an item.
func (s *Sender) grantOf(it Item) model.Grant {
	return model.Grant{
		Key:        model.GrantKey(s.opts.Tenant, it.Person.ExternalID, it.Grant.Reason, it.Grant.Occurrence),
		Tenant:     s.opts.Tenant,
		ExternalID: it.Person.ExternalID,
		Job:        string(s.opts.Job),
		Reason:     it.Grant.Reason,
		Occurrence: it.Grant.Occurrence,
		Amount:     it.Grant.AddBalance + s.opts.Amount,
		Day:        it.Grant.Day,
	}
}

// sendBatch runs the exactly-once protocol for one call: intent, call,
// outcome. The returned error is a state error (the send must stop); call
// errors are outcomes.
func (s *Sender) sendBatch(ctx context.Context, runID string, batch []Item) (batchOutcome, error) {
	var out batchOutcome
	req := s.request(len(batch))
	grants := make([]model.Grant, 0, len(batch))
	people := make([]model.Person, 0, len(batch))
	seen := make(map[string]bool, len(batch))
	for _, it := range batch {
		if s.opts.Rule != "" && it.Grant.Reason != s.opts.Rule {
			return out, fmt.Errorf("grant %s of %s: %w (rule %s)", it.Grant.Reason, it.Person.ExternalID, ErrOutOfScope, s.opts.Rule)
		}
		if seen[it.Person.ExternalID] {
			return out, fmt.Errorf("person %s twice in one call", it.Person.ExternalID)
		}
		seen[it.Person.ExternalID] = true
		req.People = append(req.People, inputPerson(it.Person, it.Grant.AddBalance))
		grants = append(grants, s.grantOf(it))
		people = append(people, it.Person)
	}
	body, err := json.Marshal(req)
	if err != nil {
		return out, fmt.Errorf("encode request: %w", err)
	}
	sum := sha256.Sum256(body)
	key := "hrsync-" + uuid.NewString()
	intent := store.BatchIntent{
		RunID:          runID,
		Tenant:         s.opts.Tenant,
		Job:            s.opts.Job,
		IdempotencyKey: key,
		RequestSHA:     hex.EncodeToString(sum[:]),
		ItemCount:      len(batch),
		Grants:         grants,
	}
	if s.opts.PersonRows != nil {
		intent.People = s.opts.PersonRows(people)
	}
	journalID, err := s.store.BeginBatch(ctx, intent)
	if err != nil {
		return out, fmt.Errorf("record intent: %w", err)
	}
	return s.call(ctx, journalID, key, req, grants)
}

// request is a createPeople request with the Sender's options and room for
// n people.
func (s *Sender) request(n int) api.CreatePeopleRequest {
	req := api.CreatePeopleRequest{CollectionId: s.opts.CollectionID, People: make([]api.InputPerson, 0, n)}
	if s.opts.CompanyID != "" {
		req.CompanyId = &s.opts.CompanyID
	}
	if s.opts.Amount != 0 {
		req.Amount = &s.opts.Amount
	}
	if s.opts.SendEmail {
		req.ShouldSendEmail = &s.opts.SendEmail
	}
	return req
}

// call makes one createPeople call whose intent is committed, and commits
// its outcome even when ctx was cancelled meanwhile.
func (s *Sender) call(ctx context.Context, journalID int64, key string, req api.CreatePeopleRequest, grants []model.Grant) (batchOutcome, error) {
	out := batchOutcome{calls: 1}
	// The call in flight is allowed to finish: cancelling it would turn a
	// clean answer into an unknown outcome.
	people, err := s.api.CreatePeople(context.WithoutCancel(ctx), req, key)
	outcome, match, apiErr := judgeCall(req, people, err)
	finishCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.FinishTimeout)
	defer cancel()
	if ferr := s.store.FinishBatch(finishCtx, journalID, outcome); ferr != nil {
		// The outcome could not be committed: the grants stay pending, and
		// the next run holds them as unknown. Nothing is lost or doubled.
		return out, fmt.Errorf("record outcome of call %d: %w", journalID, ferr)
	}
	switch outcome.State {
	case store.JournalSucceeded:
		out.applied, out.granted, out.unknown = settled(grants, outcome.Unaccounted)
	case store.JournalNotApplied:
		out.notApplied = len(grants)
	default:
		out.unknown = len(grants)
	}
	s.warnUnaccounted(journalID, len(req.People), len(people), match, outcome.Unaccounted)
	switch {
	case err == nil:
		s.log.Debug("createPeople call done", zap.Int64("journal", journalID), zap.Int("people", len(grants)))
	case outcome.State == store.JournalNotApplied && splittable(apiErr):
		out.split = apiErr
		if len(grants) > 1 {
			s.log.Info("the platform refused a batch because of some of its people; sending it again in halves",
				zap.Int64("journal", journalID), zap.Int("people", len(grants)),
				zap.Int("status", apiErr.Status), zap.String("code", apiErr.Code))
		}
	default:
		out.errs = []error{err}
		out.fatal = apiclient.ClassOf(err).Fatal()
		s.log.Warn("createPeople call failed", zap.Int64("journal", journalID), zap.String("state", string(outcome.State)),
			zap.Int("people", len(grants)), zap.Error(err))
	}
	return out, nil
}

// judgeCall turns a createPeople call's answer (or error) into the outcome
// to commit: succeeded (with the people the answer does not account for
// held), not applied, or unknown.
func judgeCall(req api.CreatePeopleRequest, people []api.ReturnedPerson, err error) (store.BatchOutcome, answerMatch, *apiclient.Error) {
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
	return outcome, match, apiErr
}

// inputPerson is a person of a createPeople request with their addBalance.
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
