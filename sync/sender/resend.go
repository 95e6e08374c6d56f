package sender

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"hrsync/model"
)

// Lookup finds the fields of a person of a held call, to send the call
// again as it was; ok is false when the person is not known (the call then
// stays held).
type Lookup func(externalID string) (p model.Person, ok bool)

// ResendHeld sends the held calls of the Sender's scope again, each exactly
// as it was and with its original Idempotency-Key, when the operator trusts
// the platform to honour that key (Options.TrustIdempotencyKey; without it
// ResendHeld does nothing). Only calls that got no answer are resent (see
// store.UnknownBatches): people a success answer left out wait for an
// operator. A call with a person lookup does not know stays held; a resent
// call is never split. Call it under the job's lock, after HoldInterrupted.
// A cancelled ctx starts no new call. The returned error is a state error.
func (s *Sender) ResendHeld(ctx context.Context, runID string, lookup Lookup) (*Result, error) {
	res := newResult()
	if !s.opts.TrustIdempotencyKey {
		return res, nil
	}
	batches, err := s.store.UnknownBatches(ctx, s.opts.Tenant, s.Scope())
	if err != nil {
		return res, fmt.Errorf("list held batches: %w", err)
	}
	for _, b := range batches {
		if err := ctx.Err(); err != nil {
			// A cancelled run starts no new call; the batch stays held.
			return res, fmt.Errorf("run stopped: %w", err)
		}
		req := s.request(len(b.Grants))
		complete := true
		for _, g := range b.Grants {
			p, ok := lookup(g.ExternalID)
			if !ok {
				complete = false
				break
			}
			req.People = append(req.People, inputPerson(p, g.Amount-s.opts.Amount))
		}
		if !complete || b.Journal.ID == 0 {
			s.log.Warn("held batch not resent: some of its people are not known", zap.Int64("journal", b.Journal.ID))
			continue
		}
		journalID, err := s.store.BeginResend(ctx, b.Journal.ID, runID, s.Scope())
		if err != nil {
			return res, fmt.Errorf("record resend of call %d: %w", b.Journal.ID, err)
		}
		out, err := s.call(ctx, journalID, b.Journal.IdempotencyKey, req, b.Grants)
		if out.split != nil {
			// A held batch is resent as it was, never split: its people
			// are not applied, and a later send sends them in new batches.
			out.errs = append(out.errs, out.split)
		}
		res.Resent += len(b.Grants)
		res.add(out)
		if err != nil {
			return res, err
		}
	}
	return res, nil
}
