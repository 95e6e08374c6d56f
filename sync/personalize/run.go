package personalize

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"hrsync/api"
	"hrsync/apiclient"
	"hrsync/internal/runner"
	"hrsync/model"
	"hrsync/store"
)

// GaveUp is a personalization left for an operator in this run.
type GaveUp struct {
	ExternalID   string `json:"externalId"`
	CollectionID string `json:"collectionId"`
	Reason       string `json:"reason"`
}

// Report is what one RunOnce did.
type Report struct {
	Tenant string `json:"tenant"`
	RunID  string `json:"runId,omitempty"`
	Source string `json:"source,omitempty"`
	// Counts are the plan's numbers and the run's: calls, done, pending,
	// unusable (platform status Error), retry, gaveUp, stopped.
	Counts map[string]int `json:"counts"`
	// Refused lists the collections the platform refused (422) in this
	// run; each is reported once, then skipped by later runs.
	Refused []store.RefusedCollection `json:"refused,omitempty"`
	// GaveUp lists the personalizations that reached the attempt limit in
	// this run.
	GaveUp []GaveUp `json:"gaveUp,omitempty"`
	// Error is why the run failed, if it did.
	Error   string `json:"error,omitempty"`
	outcome model.RunOutcome
}

// Outcome is how the run ended: failed when an error stopped it; attention
// when, in this run, a collection was refused, a call failed or the
// platform found source fields unusable, or when personalizations are left
// for an operator; ok otherwise.
func (r *Report) Outcome() model.RunOutcome {
	if r.outcome != "" {
		return r.outcome
	}
	return model.OutcomeOK
}

// RunOnce runs one cycle for the tenant under the lock
// "personalize-<tenant>": it plans from the last good export, then makes
// the planned calls, Concurrency at once, committing each outcome as it
// arrives, and records the run. It returns ErrLocked at once when another
// run holds the lock. When ctx ends, no new call starts and calls in
// flight are abandoned uncommitted: the next run makes them again, which
// the platform answers with the same sha.
func (j *Job) RunOnce(ctx context.Context) (*Report, error) {
	rep := &Report{Tenant: j.opts.Tenant, Counts: map[string]int{}}
	if !j.Enabled() {
		return rep, nil
	}
	if j.api == nil {
		return rep, errors.New("personalization: no API client")
	}
	release, err := runner.LockJob(ctx, j.store, model.JobPersonalize, j.opts.Tenant, j.log)
	if err != nil {
		return nil, err
	}
	defer release()
	rep.RunID = uuid.NewString()
	if err := j.store.StartRun(ctx, store.Run{ID: rep.RunID, Job: model.JobPersonalize, Tenant: j.opts.Tenant}); err != nil {
		return rep, fmt.Errorf("record run start: %w", err)
	}
	log := j.log.With(zap.String("run", rep.RunID))

	t := &tally{rep: rep, refused: map[string]bool{}}
	plan, err := j.BuildPlan(ctx)
	if err == nil {
		rep.Source = plan.Source
		rep.Counts = plan.Counts()
		if plan.Source == "" {
			log.Info("no good export yet: nothing to personalize")
		}
		err = j.apply(ctx, log, plan, t)
	}
	if err == nil && t.everyCallFailed() {
		// Nothing reached the platform, or it refused every call: the job
		// could not do its work.
		class := apiclient.ClassOf(t.firstCallErr)
		err = &callError{msg: fmt.Sprintf("%s on every personalize call of the run (%d): %s", class.Describe(), rep.Counts["calls"],
			describe(t.firstCallErr)), err: t.firstCallErr}
	}
	switch {
	case err != nil && runner.CutShort(ctx, model.OutcomeFailed) == model.OutcomeInterrupted:
		log.Warn("personalization cut short: the process is stopping", zap.Error(err))
		err = runner.Cut(err)
		rep.outcome, rep.Error = model.OutcomeInterrupted, err.Error()
	case err != nil:
		rep.outcome, rep.Error = model.OutcomeFailed, err.Error()
		log.Error("personalization failed", zap.Error(err))
	case len(rep.Refused) > 0 || rep.Counts["retry"] > 0 || rep.Counts["gaveUp"] > 0 || rep.Counts["unusable"] > 0 ||
		rep.Counts["leftForOperator"] > 0:
		rep.outcome = model.OutcomeAttention
	default:
		rep.outcome = model.OutcomeOK
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), j.opts.FinishTimeout)
	defer cancel()
	if ferr := j.store.FinishRun(fctx, store.RunResult{ID: rep.RunID, Outcome: rep.outcome, Counts: rep.Counts, Err: err}); ferr != nil {
		err = errors.Join(err, fmt.Errorf("record run outcome: %w", ferr))
	}
	if err == nil {
		log.Info("personalization done", zap.Any("counts", rep.Counts))
	}
	return rep, err
}

// tally gathers the outcomes of a run's workers.
type tally struct {
	mu      sync.Mutex
	rep     *Report
	refused map[string]bool
	fail    error
	// answered counts the calls the platform answered with a result;
	// firstCallErr is the first call that failed.
	answered     int
	firstCallErr error
}

// callFailed notes a failed call. Only calls certainly not processed
// (refused, or the platform not reached) count towards a run that failed:
// a 5xx is the platform's fault, retried by a later run, and a collection
// refused as not personalizable (422) is an answer about that collection.
func (t *tally) callFailed(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !apiclient.IsNotApplied(err) || apiclient.StatusCode(err) == http.StatusUnprocessableEntity {
		t.answered++ // the platform was reached and may have acted
		return
	}
	if t.firstCallErr == nil {
		t.firstCallErr = err
	}
}

// everyCallFailed reports whether the run made calls and every one was
// refused or did not reach the platform.
func (t *tally) everyCallFailed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.answered == 0 && t.firstCallErr != nil
}

func (t *tally) add(name string) {
	t.mu.Lock()
	t.rep.Counts[name]++
	t.mu.Unlock()
}

// isRefused reports whether the collection was refused during this run.
func (t *tally) isRefused(c string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.refused[c]
}

func (t *tally) failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.fail != nil
}

func (t *tally) setFail(err error) {
	t.mu.Lock()
	if t.fail == nil {
		t.fail = err
	}
	t.mu.Unlock()
}

// apply makes the plan's calls with Concurrency workers.
func (j *Job) apply(ctx context.Context, log *zap.Logger, plan *Plan, t *tally) error {
	rep := t.rep
	for _, k := range []string{"calls", "done", "pending", "unusable", "retry", "gaveUp", "stopped", "skippedRefused"} {
		rep.Counts[k] += 0
	}
	items := make(chan Item)
	var wg sync.WaitGroup
	for range min(j.opts.Concurrency, len(plan.Items)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range items {
				if t.failed() {
					// A call refused the token, or the state failed: the
					// items already handed out are not called either.
					t.add("stopped")
					continue
				}
				if err := j.personalize(ctx, log, t, it); err != nil {
					t.setFail(err)
				}
			}
		}()
	}
	sent := 0
feed:
	for _, it := range plan.Items {
		if t.failed() {
			break
		}
		if t.isRefused(it.CollectionID) {
			sent++
			t.add("skippedRefused") // not called: its collection was refused meanwhile
			continue
		}
		select {
		case items <- it:
			sent++
		case <-ctx.Done():
			break feed
		}
	}
	close(items)
	wg.Wait()
	rep.Counts["stopped"] += len(plan.Items) - sent
	sort.Slice(rep.GaveUp, func(a, b int) bool {
		if rep.GaveUp[a].ExternalID != rep.GaveUp[b].ExternalID {
			return rep.GaveUp[a].ExternalID < rep.GaveUp[b].ExternalID
		}
		return rep.GaveUp[a].CollectionID < rep.GaveUp[b].CollectionID
	})
	if t.fail != nil {
		return t.fail
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%w: %w", errStopped, ctx.Err())
	}
	return nil
}

// personalize makes the calls of one item and commits each outcome. A
// Pending answer to a first call is asked once more at once (the platform
// blocks until it has processed the fields, so a second call usually
// answers Done); a Pending answer after that is left for the next run. The
// returned error is a state error that stops the run; call errors are
// outcomes.
func (j *Job) personalize(ctx context.Context, log *zap.Logger, t *tally, it Item) error {
	row := store.Personalization{Tenant: j.opts.Tenant, ExternalID: it.ExternalID, CollectionID: it.CollectionID,
		Fingerprint: int64(it.fingerprint)}
	if it.prev != nil && it.prev.Fingerprint == row.Fingerprint {
		row = *it.prev
	}
	req := Request(j.opts.CompanyID, it.person)
	calls := 1
	if it.Reason != ReasonPending {
		calls = 2
	}
	for range calls {
		if t.isRefused(it.CollectionID) {
			return nil
		}
		res, err := j.api.Personalize(ctx, it.CollectionID, req)
		if ctx.Err() != nil {
			// Abandoned: nothing is committed, the next run asks again.
			t.add("stopped")
			return nil //nolint:nilerr // the run's own cancellation is reported by apply
		}
		t.add("calls")
		now := j.opts.Now()
		if row.FirstRequestedAt.IsZero() {
			row.FirstRequestedAt = now
		}
		row.Attempts++
		if err != nil {
			t.callFailed(err)
			if apiclient.ClassOf(err).Fatal() {
				// The token or the company is refused: no call can succeed.
				return &callError{msg: apiclient.ClassOf(err).Describe() + ": " + describe(err), err: err}
			}
			return j.failed(ctx, log, t, row, err)
		}
		t.mu.Lock()
		t.answered++
		t.mu.Unlock()
		// Nothing derived from the birth date is kept (DESIGN.md, invariant 5).
		kept := res.Fields
		kept.Birth = nil
		fields, merr := json.Marshal(kept)
		if merr != nil {
			return fmt.Errorf("encode fields of %s: %w", it.ExternalID, merr)
		}
		row.Sha, row.PlatformStatus, row.Fields = res.Sha, string(res.Status), fields
		row.Failures, row.LastError, row.NextAttemptAt = 0, "", time.Time{}
		switch res.Status {
		case api.ProcessingStatusDone:
			row.State = store.PersonalizationDone
			if row.DoneAt.IsZero() {
				row.DoneAt = now
			}
		case api.ProcessingStatusError:
			row.State = store.PersonalizationError
		default:
			row.State = store.PersonalizationPending
		}
		if err := j.save(ctx, row); err != nil {
			return err
		}
		if row.State != store.PersonalizationPending {
			break
		}
	}
	switch row.State {
	case store.PersonalizationDone:
		t.add("done")
	case store.PersonalizationError:
		t.add("unusable")
		log.Warn("the platform found the source fields unusable", zap.String("externalId", it.ExternalID),
			zap.String("collection", it.CollectionID))
	case store.PersonalizationPending:
		t.add("pending")
	}
	return nil
}

// failed records a failed call: a refused collection is remembered (and
// the person's row left as it was), other failures wait for a retry, up to
// MaxAttempts failures in a row.
func (j *Job) failed(ctx context.Context, log *zap.Logger, t *tally, row store.Personalization, err error) error {
	apiErr, _ := apiclient.AsError(err)
	if apiErr != nil && apiErr.Status == http.StatusUnprocessableEntity {
		t.mu.Lock()
		first := !t.refused[row.CollectionID]
		t.refused[row.CollectionID] = true
		t.mu.Unlock()
		if !first {
			return nil
		}
		rc := store.RefusedCollection{CollectionID: row.CollectionID, Reason: describe(err), RefusedAt: j.opts.Now()}
		if err := j.store.MarkNotPersonalizable(ctx, j.opts.Tenant, rc); err != nil {
			return err
		}
		t.mu.Lock()
		t.rep.Refused = append(t.rep.Refused, rc)
		t.mu.Unlock()
		log.Warn("the platform refused to personalize a collection; it is skipped until rechecked",
			zap.String("collection", row.CollectionID), zap.Duration("recheckAfter", j.opts.RecheckRefused))
		return nil
	}
	row.Failures++
	row.LastError = describe(err)
	row.NextAttemptAt = time.Time{}
	if row.Failures >= j.opts.MaxAttempts {
		row.State = store.PersonalizationFailed
		t.add("gaveUp")
		t.mu.Lock()
		t.rep.GaveUp = append(t.rep.GaveUp, GaveUp{ExternalID: row.ExternalID, CollectionID: row.CollectionID, Reason: row.LastError})
		t.mu.Unlock()
		log.Error("personalization left for an operator", zap.String("externalId", row.ExternalID),
			zap.String("collection", row.CollectionID), zap.Int("failures", row.Failures), zap.String("reason", row.LastError))
	} else {
		row.State = store.PersonalizationRetry
		row.NextAttemptAt = j.opts.Now().Add(j.backoff(row.Failures))
		t.add("retry")
		log.Warn("personalize call failed; retried by a later run", zap.String("externalId", row.ExternalID),
			zap.String("collection", row.CollectionID), zap.Int("failures", row.Failures), zap.String("reason", row.LastError))
	}
	return j.save(ctx, row)
}

// backoff is the wait after the n-th failure in a row: RetryBackoff
// doubled n-1 times, at most MaxBackoff.
func (j *Job) backoff(n int) time.Duration {
	d := j.opts.RetryBackoff
	for i := 1; i < n && d < j.opts.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, j.opts.MaxBackoff)
}

// save commits one outcome, even when ctx ended after the answer came.
func (j *Job) save(ctx context.Context, row store.Personalization) error {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), j.opts.FinishTimeout)
	defer cancel()
	if err := j.store.SavePersonalization(sctx, row); err != nil {
		return fmt.Errorf("record outcome for %s: %w", row.ExternalID, err)
	}
	return nil
}

// callError is a failed call's error in the run's words, still wrapping
// the call's error, so that its class (apiclient.ClassOf) gives the run's
// next step: the same words for the same class in every job.
type callError struct {
	msg string
	err error
}

func (e *callError) Error() string { return e.msg }
func (e *callError) Unwrap() error { return e.err }

// describe renders a call error for the store and the logs: the status and
// the platform's error code, never the message (it may quote a source
// field, such as a birth date) nor a request body.
func describe(err error) string {
	e, ok := apiclient.AsError(err)
	if !ok {
		return err.Error()
	}
	s := string(e.Op)
	if e.Status != 0 {
		s += fmt.Sprintf(": status %d", e.Status)
	}
	if e.Code != "" {
		s += ": " + e.Code
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s + " (" + e.Outcome.String() + ")"
}
