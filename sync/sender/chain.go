package sender

import (
	"context"
	"fmt"
)

// chain is one of a Send's Concurrency workers: it takes batch after batch
// from next and sends each with the exactly-once protocol, reporting each
// batch once its outcome is committed. A call's outcome is committed in
// one transaction with the intent of the worker's next call
// (Store.FinishAndBegin): one commit per call instead of two. The order of
// the protocol is the same: a call's intent is committed before it, its
// outcome after its answer and before the worker's next call.
//
// Why: the commits of a tenant's batches wait on each other (SQLite has
// one writer; in PostgreSQL the intent's people and the outcome's platform
// ids both bump the tenant's row of people_versions, locked until the
// commit), so the calls could go no faster than one intent and one outcome
// commit per call allow (docs/benchmarks.md, issue 22 item 5).
//
// An outcome that stops the send (a refused token or company) or that asks
// for the batch to be split is committed at once, on its own, as is the
// last one, and any outcome when the send stops or a joint commit fails.
func (s *Sender) chain(ctx context.Context, runID string, next func() ([]Item, bool),
	report func([]Item, batchOutcome, error), stop func() bool,
) {
	var held *answered // answered, its outcome not yet committed
	for {
		batch, ok := next()
		if !ok {
			break
		}
		p, err := s.prepare(runID, batch)
		if err != nil {
			s.flush(ctx, held, report)
			held = nil
			report(batch, batchOutcome{}, err)
			continue
		}
		journalID, begun, err := s.begin(ctx, held, p, report, stop)
		held = nil
		if err != nil {
			report(batch, batchOutcome{}, fmt.Errorf("record intent: %w", err))
			continue
		}
		if !begun {
			continue // the send stopped before this batch's intent
		}
		a := s.ask(ctx, journalID, p.key, p.req, p.grants)
		a.batch = batch
		if !a.stops() && !stop() {
			held = &a
			continue
		}
		out, err := s.finish(ctx, a)
		if err == nil && out.split != nil {
			out, err = s.bisect(ctx, runID, batch, out, stop)
		}
		report(batch, out, err)
	}
	s.flush(ctx, held, report)
}

// flush commits the held outcome on its own, if any, and reports it.
func (s *Sender) flush(ctx context.Context, held *answered, report func([]Item, batchOutcome, error)) {
	if held == nil {
		return
	}
	out, err := s.finish(ctx, *held)
	report(held.batch, out, err)
}

// begin commits the intent of p, with the outcome of held when there is
// one (reporting held), and returns its journal entry. begun is false, with
// no error, when the outcome was committed but the send stopped before the
// intent. When the joint commit fails, the outcome is committed alone,
// then the intent, each failing as it would on its own.
func (s *Sender) begin(ctx context.Context, held *answered, p prepared,
	report func([]Item, batchOutcome, error), stop func() bool,
) (journalID int64, begun bool, err error) {
	if held == nil {
		journalID, err = s.store.BeginBatch(ctx, p.intent)
		return journalID, err == nil, err
	}
	if ctx.Err() == nil {
		finishCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.FinishTimeout)
		journalID, err = s.store.FinishAndBegin(finishCtx, held.journalID, held.outcome, p.intent)
		cancel()
		if err == nil {
			report(held.batch, s.settle(*held), nil)
			return journalID, true, nil
		}
	}
	out, ferr := s.finish(ctx, *held)
	report(held.batch, out, ferr)
	if ferr != nil || stop() {
		return 0, false, nil
	}
	journalID, err = s.store.BeginBatch(ctx, p.intent)
	return journalID, err == nil, err
}
