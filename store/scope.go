package store

import (
	"context"
	"fmt"
	"sort"

	"github.com/jmoiron/sqlx"

	"hrsync/model"
)

// Scope names the grants and calls a run may hold or resend: those of one
// job of a tenant, and when Rule is set, only the grants of that rule (a
// grant's reason). Each job runs under its own lock, so a run must never
// touch a call another job has in flight: HoldInterrupted, UnknownBatches
// and BeginResend act only within their scope.
type Scope struct {
	Job  model.Job // required
	Rule string    // a grant's reason; "" means every rule of the job
}

// where is the scope's condition on the grants table (columns job and
// reason, optionally qualified by alias) and its arguments.
func (sc Scope) where(alias string) (string, []any) {
	cond, args := alias+"job = ?", []any{string(sc.Job)}
	if sc.Rule != "" {
		cond, args = cond+" AND "+alias+"reason = ?", append(args, sc.Rule)
	}
	return cond, args
}

func (sc Scope) check(what string) error {
	if sc.Job == "" {
		return fmt.Errorf("%s: the scope's job is required", what)
	}
	return nil
}

// HoldInterrupted is run at the start of a run, under the run's lock: every
// grant of the tenant in scope still pending (its call may have been sent by
// a run that crashed) becomes unknown, and so does every journal entry of
// the scope's job still sent (with a Rule, only the entries that carry a
// grant of that rule). It returns how many grants were held. Grants and
// calls of other jobs, or of other rules, are left as they are: another
// job's run may have them in flight.
func (s *Store) HoldInterrupted(ctx context.Context, tenant string, sc Scope) (n int, err error) {
	if err := sc.check("hold interrupted"); err != nil {
		return 0, err
	}
	cond, scopeArgs := sc.where("")
	err = s.inTx(ctx, "hold interrupted", func(tx *sqlx.Tx) error {
		// The calls first: with a Rule, they are found by their pending grants.
		q := `UPDATE api_journal SET state = ?, error_code = 'interrupted', error_message = 'no outcome was recorded'
			WHERE tenant = ? AND job = ? AND state = ?`
		args := []any{JournalUnknown, tenant, string(sc.Job), JournalSent}
		if sc.Rule != "" {
			q += ` AND id IN (SELECT journal_id FROM grants WHERE tenant = ? AND ` + cond + ` AND state = ?)`
			args = append(append(append(args, tenant), scopeArgs...), model.GrantPending)
		}
		if _, err := tx.ExecContext(ctx, tx.Rebind(q), args...); err != nil {
			return fmt.Errorf("hold journal: %w", err)
		}
		res, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE grants SET state = ?, updated_at = ?,
			last_error = 'interrupted: the call''s outcome was never recorded' WHERE tenant = ? AND `+cond+` AND state = ?`),
			append(append([]any{model.GrantUnknown, s.stamp(), tenant}, scopeArgs...), model.GrantPending)...)
		if err != nil {
			return fmt.Errorf("hold grants: %w", err)
		}
		held, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("hold grants: %w", err)
		}
		n = int(held)
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// UnknownBatches returns the tenant's held grants in scope (state unknown)
// whose call got no answer (its journal entry, of the scope's job, is
// unknown), grouped by that entry, with its idempotency key, ordered by
// journal id. When the operator declares that the platform honours
// Idempotency-Key, each batch can be sent again exactly as it was, with the
// same key (see BeginResend).
//
// A grant held because a success answer did not account for its person
// (BatchOutcome.Unaccounted) is not listed: the platform processed that
// call, so a resend with its key would at best replay the same answer, and
// at worst, once the platform forgot the key, apply the grant twice. Only an
// operator settles it (ConfirmGrant, ReleaseGrant, VoidGrant).
func (s *Store) UnknownBatches(ctx context.Context, tenant string, sc Scope) ([]HeldBatch, error) {
	if err := sc.check("unknown batches"); err != nil {
		return nil, err
	}
	cond, scopeArgs := sc.where("")
	var out []HeldBatch
	err := s.inReadTx(ctx, "unknown batches", func(tx *sqlx.Tx) error {
		var rows []grantRow
		args := append(append([]any{tenant}, scopeArgs...), model.GrantUnknown, tenant, string(sc.Job), JournalUnknown)
		if err := tx.SelectContext(ctx, &rows, tx.Rebind(grantSelect+` WHERE tenant = ? AND `+cond+` AND state = ?
			AND journal_id IN (SELECT id FROM api_journal WHERE tenant = ? AND job = ? AND state = ?)
			ORDER BY journal_id, grant_key`), args...); err != nil {
			return fmt.Errorf("read grants: %w", err)
		}
		byJournal := map[int64]int{}
		var ids []int64
		for _, r := range rows {
			id := r.JournalID.Int64 // 0 for a grant never sent, which cannot be unknown
			i, ok := byJournal[id]
			if !ok {
				i = len(out)
				byJournal[id] = i
				ids = append(ids, id)
				out = append(out, HeldBatch{})
			}
			out[i].Grants = append(out[i].Grants, r.model())
		}
		for _, id := range ids {
			if id == 0 {
				continue
			}
			e, err := journalByID(ctx, tx, id)
			if err != nil {
				return err
			}
			out[byJournal[id]].Journal = e
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Journal.ID < out[j].Journal.ID })
	return out, nil
}

// BeginResend records the intent to send a held batch again exactly as it
// was, with its Idempotency-Key, for use only when the operator has declared
// that the platform honours that header. It adds a journal entry (state
// sent, same job, operation, key, request hash and item count, resend_of the
// held entry) for run runID, and moves the held entry's grants in scope that
// are still unknown to pending on the new entry (attempts+1). Finish it with
// FinishBatch. The held entry must be unknown, of the scope's job, hold no
// unknown grant outside the scope, and still hold grants; otherwise the error wraps ErrJournalState.
func (s *Store) BeginResend(ctx context.Context, heldJournalID int64, runID string, sc Scope) (journalID int64, err error) {
	if err := sc.check("resend batch"); err != nil {
		return 0, err
	}
	cond, scopeArgs := sc.where("")
	err = s.inTx(ctx, fmt.Sprintf("resend batch %d", heldJournalID), func(tx *sqlx.Tx) error {
		old, err := journalByID(ctx, tx, heldJournalID)
		if err != nil {
			return err
		}
		if old.State != JournalUnknown {
			return fmt.Errorf("%w: is %s, want %s", ErrJournalState, old.State, JournalUnknown)
		}
		if old.Job != sc.Job {
			return fmt.Errorf("%w: the call is the %s job's, not the %s job's", ErrJournalState, old.Job, sc.Job)
		}
		// A call is resent whole: with a Rule, a held grant of another rule
		// on the same call would be sent again outside its scope.
		var outside int
		if err := tx.QueryRowxContext(ctx, tx.Rebind(`SELECT COUNT(*) FROM grants WHERE journal_id = ? AND state = ?
			AND NOT (`+cond+`)`), append([]any{heldJournalID, model.GrantUnknown}, scopeArgs...)...).Scan(&outside); err != nil {
			return fmt.Errorf("read grants: %w", err)
		}
		if outside > 0 {
			return fmt.Errorf("%w: the call holds %d grants outside the scope", ErrJournalState, outside)
		}
		if err := tx.QueryRowxContext(ctx, tx.Rebind(`INSERT INTO api_journal
			(run_id, tenant, job, operation, idempotency_key, request_sha, item_count, state, started_at, resend_of)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
			runID, old.Tenant, string(old.Job), old.Operation, old.IdempotencyKey, old.RequestSHA, old.ItemCount,
			JournalSent, s.stamp(), heldJournalID,
		).Scan(&journalID); err != nil {
			return fmt.Errorf("insert journal: %w", err)
		}
		res, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE grants SET state = ?, attempts = attempts + 1,
			journal_id = ?, updated_at = ? WHERE journal_id = ? AND state = ? AND `+cond),
			append([]any{model.GrantPending, journalID, s.stamp(), heldJournalID, model.GrantUnknown}, scopeArgs...)...)
		if err != nil {
			return fmt.Errorf("update grants: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return fmt.Errorf("%w: no held grants left", ErrJournalState)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return journalID, nil
}
