package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"hrsync/model"
)

// BeginBatch commits the intent of one create-people call, before the call
// is made: the journal entry (state sent), the batch's people, and its
// grants in state pending, linked to the entry. A grant whose key already
// exists may only be sent again from not_applied (its attempts grow by one);
// any other state fails the whole batch with a *GrantConflictError naming the
// key, and nothing is written: the store refuses to double-send.
//
// It runs in one transaction, in named steps: check the intent, read the
// grants already recorded (lockedResends), write the journal entry and the
// people, insert the new grants, and make the resent ones pending again.
func (s *Store) BeginBatch(ctx context.Context, in BatchIntent) (journalID int64, err error) {
	b, err := s.prepareBatch(in)
	if err != nil {
		return 0, fmt.Errorf("begin batch: %w", err)
	}
	err = s.inTx(ctx, "begin batch", func(tx *sqlx.Tx) error {
		resend, err := s.lockedResends(ctx, tx, in.Job, b.keys)
		if err != nil {
			return err
		}
		// The conflict check above is a friendly error; a key that appears
		// between the check and the insert still fails on the unique
		// constraint below, and that failure is reported, never ignored.
		if err := tx.QueryRowxContext(ctx, tx.Rebind(`INSERT INTO api_journal
			(run_id, tenant, job, operation, idempotency_key, request_sha, item_count, state, started_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
			in.RunID, in.Tenant, string(in.Job), b.op, in.IdempotencyKey, in.RequestSHA, b.items, JournalSent, ts(b.started),
		).Scan(&journalID); err != nil {
			return fmt.Errorf("insert journal: %w", err)
		}
		if err := s.upsertPeople(ctx, tx, in.Tenant, in.People); err != nil {
			return err
		}
		now := s.stamp()
		if err := s.insertFreshGrants(ctx, tx, in.Job, b.grants, resend, journalID, now); err != nil {
			return err
		}
		return resendGrants(ctx, tx, b, resend, journalID, now)
	})
	if err != nil {
		return 0, err
	}
	return journalID, nil
}

// batchPlan is a checked BatchIntent: its defaults filled in, and its grants
// keyed.
type batchPlan struct {
	op      string
	items   int
	started time.Time
	grants  []model.Grant
	keys    []string
	byKey   map[string]int
}

// prepareBatch checks a batch's intent and fills in its defaults and its
// grants' tenants and keys.
func (s *Store) prepareBatch(in BatchIntent) (batchPlan, error) {
	if in.RunID == "" || in.Tenant == "" || in.Job == "" || in.IdempotencyKey == "" {
		return batchPlan{}, errors.New("run id, tenant, job and idempotency key are required")
	}
	if err := checkPeople(in.People); err != nil {
		return batchPlan{}, err
	}
	b := batchPlan{op: in.Operation, items: in.ItemCount, started: in.StartedAt}
	if b.op == "" {
		b.op = OpCreatePeople
	}
	if b.items == 0 {
		b.items = len(in.People)
	}
	if b.started.IsZero() {
		b.started = s.now()
	}
	b.grants = make([]model.Grant, len(in.Grants))
	b.keys = make([]string, len(in.Grants))
	b.byKey = make(map[string]int, len(in.Grants))
	for i, g := range in.Grants {
		g, err := batchGrant(in, g)
		if err != nil {
			return batchPlan{}, err
		}
		if _, dup := b.byKey[g.Key]; dup {
			return batchPlan{}, fmt.Errorf("grant %s listed twice", g.Key)
		}
		b.byKey[g.Key] = i
		b.grants[i], b.keys[i] = g, g.Key
	}
	return b, nil
}

// batchGrant checks one grant of a batch against the batch's tenant and
// job, and fills in its tenant and key.
func batchGrant(in BatchIntent, g model.Grant) (model.Grant, error) {
	if g.Tenant == "" {
		g.Tenant = in.Tenant
	}
	if g.Tenant != in.Tenant {
		return g, fmt.Errorf("grant for %s belongs to another tenant", g.ExternalID)
	}
	if g.ExternalID == "" || g.Reason == "" {
		return g, errors.New("grant without externalId or reason")
	}
	if g.Job != "" && g.Job != string(in.Job) {
		return g, fmt.Errorf("grant for %s belongs to the %s job, not the %s job's call", g.ExternalID, g.Job, in.Job)
	}
	if g.Key == "" {
		g.Key = model.GrantKey(g.Tenant, g.ExternalID, g.Reason, g.Occurrence)
	}
	return g, nil
}

// lockedResends reads which of the keys' grants exist already, locking
// their rows until commit where the dialect locks rows. It returns the keys
// that may be sent again (not_applied, of job), and a *GrantConflictError
// for the first other one.
func (s *Store) lockedResends(ctx context.Context, tx *sqlx.Tx, job model.Job, keys []string) (map[string]bool, error) {
	lockRows := s.db.ForUpdate()
	resend := map[string]bool{}
	err := s.db.ForKeys(keys, func(cond string, args []any) error {
		return queryEach(ctx, tx, "SELECT grant_key, state, job FROM grants WHERE grant_key "+cond+lockRows, args,
			func(rows *sql.Rows) error {
				var key string
				var st model.GrantState
				var owner model.Job
				if err := rows.Scan(&key, &st, &owner); err != nil {
					return err
				}
				if st != model.GrantNotApplied || owner != job {
					// Another job's grant is never sent again from this
					// one's scope, whatever its state.
					return &GrantConflictError{Key: key, State: st}
				}
				resend[key] = true
				return nil
			})
	})
	if err != nil {
		var gce *GrantConflictError
		if errors.As(err, &gce) {
			return nil, gce
		}
		return nil, fmt.Errorf("read grants: %w", err)
	}
	return resend, nil
}

// insertFreshGrants inserts the batch's grants that are not resent, pending
// and linked to the journal entry.
func (s *Store) insertFreshGrants(ctx context.Context, tx *sqlx.Tx, job model.Job, grants []model.Grant, resend map[string]bool, journalID int64, now time.Time) error {
	fresh := make([]model.Grant, 0, len(grants))
	for _, g := range grants {
		if !resend[g.Key] {
			fresh = append(fresh, g)
		}
	}
	vals := make([]any, len(grantCols()))
	err := s.db.BulkInsert(ctx, tx, "grants", grantCols(), "", len(fresh), func(i int) []any {
		g := fresh[i]
		vals[0], vals[1], vals[2], vals[3], vals[4] = g.Key, g.Tenant, g.ExternalID, g.Reason, g.Occurrence
		vals[5], vals[6], vals[7], vals[8], vals[9] = g.Amount, string(model.GrantPending), 1, "", ""
		vals[10], vals[11], vals[12], vals[13] = journalID, now, now, string(job)
		vals[14] = nil
		if !g.Day.IsZero() {
			vals[14] = g.Day.Format(model.DateLayout)
		}
		return vals
	})
	if err != nil && s.db.IsUniqueViolation(err) {
		return fmt.Errorf("%w: %w", ErrGrantConflict, err)
	}
	return err
}

// resendGrants makes the batch's not_applied grants pending again, one
// attempt more, linked to the journal entry.
func resendGrants(ctx context.Context, tx *sqlx.Tx, b batchPlan, resend map[string]bool, journalID int64, now time.Time) error {
	if len(resend) == 0 {
		return nil
	}
	st, err := tx.PreparexContext(ctx, tx.Rebind(`UPDATE grants SET state = ?, attempts = attempts + 1,
		amount = ?, last_error = '', journal_id = ?, updated_at = ? WHERE grant_key = ? AND state = ?`))
	if err != nil {
		return fmt.Errorf("resend grants: %w", err)
	}
	defer func() { _ = st.Close() }()
	for key := range resend {
		g := b.grants[b.byKey[key]]
		res, err := st.ExecContext(ctx, model.GrantPending, g.Amount, journalID, now, key, model.GrantNotApplied)
		if err != nil {
			return fmt.Errorf("resend grant %s: %w", key, err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return fmt.Errorf("resend grant %s: %w", key, ErrGrantConflict)
		}
	}
	return nil
}
