package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"hrsync/model"
)

// JournalState is where an API call recorded in the journal is.
type JournalState string

// The states of a journal entry.
const (
	JournalSent       JournalState = "sent"        // intent committed; no outcome yet
	JournalSucceeded  JournalState = "succeeded"   // the platform accepted the call
	JournalNotApplied JournalState = "not_applied" // the call was certainly not processed
	JournalUnknown    JournalState = "unknown"     // the call may or may not have been processed
)

// OpCreatePeople is the journal operation of a create-people call.
const OpCreatePeople = "createPeople"

// BatchIntent is one create-people call, recorded before it is made.
type BatchIntent struct {
	RunID  string
	Tenant string
	// Job is the job that makes the call (model.JobPeople, model.JobGrants): the
	// journal entry and the grants are recorded in its scope. Required.
	Job            model.Job
	Operation      string // "" means OpCreatePeople
	IdempotencyKey string // the Idempotency-Key header the call carries
	RequestSHA     string // hex SHA-256 of the request body
	// ItemCount is the number of people in the request; 0 means len(People).
	ItemCount int
	// People are upserted as SavePeople does; a new person's RemoteID stays
	// empty until FinishBatch.
	People []PersonRow
	// Grants are the balances the call adds. Key, when empty, is computed
	// with model.GrantKey; Tenant and model.Job, when empty, are the batch's;
	// State and Attempts are set by the store.
	Grants []model.Grant
	// StartedAt is when the intent is committed; zero means now.
	StartedAt time.Time
}

// BatchOutcome is what became of a create-people call.
type BatchOutcome struct {
	// State is JournalSucceeded, JournalNotApplied or JournalUnknown. The
	// batch's grants become applied, not_applied or unknown.
	State        JournalState
	HTTPStatus   int // 0 when no answer came
	ErrorCode    string
	ErrorMessage string
	// RemoteIDs maps externalId to the platform's id for the people the
	// platform returned.
	RemoteIDs map[string]string
	// Unaccounted lists the externalIds of the batch's people that a
	// success answer did not account for (no returned person matched them).
	// Only with JournalSucceeded: their grants become unknown, held for an
	// operator, instead of applied. Such grants are never resent with the
	// call's Idempotency-Key (see UnknownBatches).
	Unaccounted []string
	// FinishedAt is when the outcome was known; zero means now.
	FinishedAt time.Time
}

// JournalEntry is one recorded API call.
type JournalEntry struct {
	ID             int64
	RunID          string
	Tenant         string
	Job            model.Job // the job that made the call
	Operation      string
	IdempotencyKey string
	RequestSHA     string
	ItemCount      int
	State          JournalState
	HTTPStatus     int // 0 when no answer came
	ErrorCode      string
	ErrorMessage   string
	StartedAt      time.Time
	FinishedAt     time.Time // zero while unanswered
	ResendOf       int64     // the held entry this call repeats; 0 for a first send
}

// GrantFilter selects grants for ListGrants. Empty fields select all.
type GrantFilter struct {
	Tenant     string
	Job        model.Job // the job that made the grants
	Reason     string    // the rule that made them (a grant's reason)
	States     []model.GrantState
	ExternalID string
	Limit      int // 0 means no limit
}

// HeldBatch is a journal entry whose outcome is unknown, with its grants
// that are still held (state unknown).
type HeldBatch struct {
	Journal JournalEntry
	Grants  []model.Grant
}

// GrantConflictError says that BeginBatch found a grant already recorded in
// a state that forbids sending it again. It matches ErrGrantConflict.
type GrantConflictError struct {
	Key   string
	State model.GrantState
}

func (e *GrantConflictError) Error() string {
	return fmt.Sprintf("grant %s already recorded as %s", e.Key, e.State)
}

// Is makes errors.Is(err, ErrGrantConflict) true.
func (e *GrantConflictError) Is(target error) bool { return target == ErrGrantConflict }

// TransitionError says that a grant cannot move to To from its state From.
// It matches ErrGrantState.
type TransitionError struct {
	Key      string
	From, To model.GrantState
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("grant %s is %s: cannot move to %s", e.Key, e.From, e.To)
}

// Is makes errors.Is(err, ErrGrantState) true.
func (e *TransitionError) Is(target error) bool { return target == ErrGrantState }

func grantCols() []string {
	return []string{
		"grant_key", "tenant", "external_id", "reason", "occurrence", "amount", "state",
		"attempts", "last_error", "note", "journal_id", "created_at", "updated_at", "job", "grant_day",
	}
}

// grantStateFor maps a call's outcome to its grants' state.
func grantStateFor(j JournalState) (model.GrantState, bool) {
	switch j {
	case JournalSucceeded:
		return model.GrantApplied, true
	case JournalNotApplied:
		return model.GrantNotApplied, true
	case JournalUnknown:
		return model.GrantUnknown, true
	}
	return "", false
}

// FinishBatch commits the outcome of the call recorded by BeginBatch, after
// the call: the journal entry's state, HTTP status, error and finish time;
// the batch's grants move from pending to applied, not_applied or unknown
// (those of out.Unaccounted to unknown although the call succeeded); the
// people the platform returned get their remote ids and creation time.
//
// An outcome is recorded once. The entry must be sent, or unknown because
// HoldInterrupted held it before this late outcome arrived (its grants that
// are still held are then resolved too). An entry whose outcome was already
// recorded gives an error wrapping ErrJournalState.
func (s *Store) FinishBatch(ctx context.Context, journalID int64, out BatchOutcome) error {
	gs, ok := grantStateFor(out.State)
	if !ok {
		return fmt.Errorf("finish batch %d: invalid outcome state %q", journalID, out.State)
	}
	if len(out.Unaccounted) > 0 && out.State != JournalSucceeded {
		return fmt.Errorf("finish batch %d: unaccounted people with outcome %s: only a success answer can leave some unaccounted", journalID, out.State)
	}
	finished := out.FinishedAt
	if finished.IsZero() {
		finished = s.now()
	}
	return s.inTx(ctx, fmt.Sprintf("finish batch %d", journalID), func(tx *sqlx.Tx) error {
		lockRow := s.db.ForUpdate()
		var (
			tenant string
			state  JournalState
			done   dbTime
		)
		err := tx.QueryRowxContext(ctx, tx.Rebind("SELECT tenant, state, finished_at FROM api_journal WHERE id = ?"+lockRow),
			journalID).Scan(&tenant, &state, &done)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("journal entry: %w", ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("read journal: %w", err)
		}
		// Only a call with no recorded outcome can be finished: sent, or
		// held as unknown by HoldInterrupted (which leaves finished_at empty).
		if !done.IsZero() || (state != JournalSent && state != JournalUnknown) {
			return fmt.Errorf("%w: outcome already recorded (%s)", ErrJournalState, state)
		}
		var status any
		if out.HTTPStatus != 0 {
			status = out.HTTPStatus
		}
		if _, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE api_journal SET state = ?, http_status = ?,
			error_code = ?, error_message = ?, finished_at = ? WHERE id = ?`),
			out.State, status, out.ErrorCode, out.ErrorMessage, ts(finished), journalID); err != nil {
			return fmt.Errorf("update journal: %w", err)
		}
		if err := s.settleGrants(ctx, tx, journalID, gs, out); err != nil {
			return err
		}
		return s.setRemoteIDs(ctx, tx, tenant, out.RemoteIDs, ts(finished))
	})
}

// unaccountedError is the last_error of a grant whose person a success
// answer did not return.
const unaccountedError = "the platform answered success but did not return this person: " +
	"check the platform, then confirm or release the grant"

// settleGrants moves the grants of journal entry journalID that are still
// pending (or held by HoldInterrupted) to gs, except those of
// out.Unaccounted, which become unknown.
func (s *Store) settleGrants(ctx context.Context, tx *sqlx.Tx, journalID int64, gs model.GrantState, out BatchOutcome) error {
	lastErr := ""
	if gs != model.GrantApplied {
		lastErr = describeFailure(out)
	}
	if len(out.Unaccounted) == 0 {
		if _, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE grants SET state = ?, last_error = ?, updated_at = ?
			WHERE journal_id = ? AND state IN (?, ?)`),
			gs, lastErr, s.stamp(), journalID, model.GrantPending, model.GrantUnknown); err != nil {
			return fmt.Errorf("update grants: %w", err)
		}
		return nil
	}
	var rows []struct {
		Key        string `db:"grant_key"`
		ExternalID string `db:"external_id"`
	}
	if err := tx.SelectContext(ctx, &rows, tx.Rebind(`SELECT grant_key, external_id FROM grants
		WHERE journal_id = ? AND state IN (?, ?)`), journalID, model.GrantPending, model.GrantUnknown); err != nil {
		return fmt.Errorf("read grants: %w", err)
	}
	held := make(map[string]bool, len(out.Unaccounted))
	for _, id := range out.Unaccounted {
		held[id] = true
	}
	var settle, hold []string
	for _, r := range rows {
		if held[r.ExternalID] {
			hold = append(hold, r.Key)
		} else {
			settle = append(settle, r.Key)
		}
	}
	now := s.stamp()
	for _, part := range []struct {
		keys    []string
		state   model.GrantState
		lastErr string
	}{{settle, gs, lastErr}, {hold, model.GrantUnknown, unaccountedError}} {
		err := s.db.ForKeys(part.keys, func(cond string, args []any) error {
			args = append([]any{part.state, part.lastErr, now}, args...)
			_, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE grants SET state = ?, last_error = ?, updated_at = ?
				WHERE grant_key `+cond), args...)
			return err
		})
		if err != nil {
			return fmt.Errorf("update grants: %w", err)
		}
	}
	return nil
}

// describeFailure summarizes a failed call for a grant's last_error.
func describeFailure(out BatchOutcome) string {
	var parts []string
	if out.HTTPStatus != 0 {
		parts = append(parts, fmt.Sprintf("http %d", out.HTTPStatus))
	}
	if out.ErrorCode != "" {
		parts = append(parts, out.ErrorCode)
	}
	if out.ErrorMessage != "" {
		parts = append(parts, out.ErrorMessage)
	}
	if len(parts) == 0 {
		return string(out.State)
	}
	return strings.Join(parts, ": ")
}

// grantRow is a grants row as read.
type grantRow struct {
	Key        string        `db:"grant_key"`
	Tenant     string        `db:"tenant"`
	Job        string        `db:"job"`
	ExternalID string        `db:"external_id"`
	Reason     string        `db:"reason"`
	Occurrence string        `db:"occurrence"`
	Amount     float64       `db:"amount"`
	State      string        `db:"state"`
	Attempts   int           `db:"attempts"`
	LastError  string        `db:"last_error"`
	Note       string        `db:"note"`
	JournalID  sql.NullInt64 `db:"journal_id"`
	CreatedAt  dbTime        `db:"created_at"`
	UpdatedAt  dbTime        `db:"updated_at"`
}

const grantSelect = `SELECT grant_key, tenant, job, external_id, reason, occurrence, amount, state, attempts,
	last_error, note, journal_id, created_at, updated_at FROM grants`

func (g grantRow) model() model.Grant {
	return model.Grant{
		Key: g.Key, Tenant: g.Tenant, Job: g.Job, ExternalID: g.ExternalID, Reason: g.Reason, Occurrence: g.Occurrence,
		Amount: g.Amount, State: model.GrantState(g.State), Attempts: g.Attempts, LastError: g.LastError,
		Note: g.Note, CreatedAt: g.CreatedAt.Time, UpdatedAt: g.UpdatedAt.Time,
	}
}

// ListGrants returns the grants matching f, ordered by tenant and key.
func (s *Store) ListGrants(ctx context.Context, f GrantFilter) ([]model.Grant, error) {
	var c conditions
	c.equal("tenant", f.Tenant)
	c.equal("job", string(f.Job))
	c.equal("reason", f.Reason)
	c.equal("external_id", f.ExternalID)
	oneOf(&c, "state", f.States)
	q, args := grantSelect+c.clause(), c.args
	q += " ORDER BY tenant, grant_key"
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	var rows []grantRow
	if err := s.r.SelectContext(ctx, &rows, s.r.Rebind(q), args...); err != nil {
		return nil, fmt.Errorf("list grants: %w", err)
	}
	out := make([]model.Grant, len(rows))
	for i, r := range rows {
		out[i] = r.model()
	}
	return out, nil
}

// Grant reads one grant by key.
func (s *Store) Grant(ctx context.Context, key string) (model.Grant, error) {
	var r grantRow
	err := s.r.GetContext(ctx, &r, s.r.Rebind(grantSelect+" WHERE grant_key = ?"), key)
	if errors.Is(err, sql.ErrNoRows) {
		return model.Grant{}, fmt.Errorf("grant %s: %w", key, ErrNotFound)
	}
	if err != nil {
		return model.Grant{}, fmt.Errorf("read grant: %w", err)
	}
	return r.model(), nil
}

// ReleaseGrant moves a grant from unknown to not_applied: an operator
// checked the platform and the grant was NOT applied, so it will be sent
// again. note says why and is kept on the grant.
func (s *Store) ReleaseGrant(ctx context.Context, key, note string) error {
	return s.transition(ctx, "release grant", key, note, model.GrantNotApplied, model.GrantUnknown)
}

// VoidGrant moves a grant from unknown or not_applied to voided: it will
// never be sent.
func (s *Store) VoidGrant(ctx context.Context, key, note string) error {
	return s.transition(ctx, "void grant", key, note, model.GrantVoided, model.GrantUnknown, model.GrantNotApplied)
}

// ConfirmGrant moves a grant from unknown to applied: an operator saw it
// applied on the platform.
func (s *Store) ConfirmGrant(ctx context.Context, key, note string) error {
	return s.transition(ctx, "confirm grant", key, note, model.GrantApplied, model.GrantUnknown)
}

// transition moves grant key to state to, only from one of from. A grant in
// another state gives a *TransitionError.
func (s *Store) transition(ctx context.Context, what, key, note string, to model.GrantState, from ...model.GrantState) error {
	return s.inTx(ctx, what, func(tx *sqlx.Tx) error {
		args := []any{to, note, s.stamp(), key}
		for _, f := range from {
			args = append(args, f)
		}
		res, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE grants SET state = ?, note = ?, updated_at = ?
			WHERE grant_key = ? AND state IN (`+placeholders(len(from))+`)`), args...)
		if err != nil {
			return fmt.Errorf("update grant: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("update grant: %w", err)
		}
		if n == 1 {
			return nil
		}
		var cur model.GrantState
		err = tx.QueryRowxContext(ctx, tx.Rebind("SELECT state FROM grants WHERE grant_key = ?"), key).Scan(&cur)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("grant %s: %w", key, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("read grant: %w", err)
		}
		return &TransitionError{Key: key, From: cur, To: to}
	})
}

// GrantTotals returns, per externalId, the sum of the tenant's applied
// grants: what the ledger says each person was granted.
func (s *Store) GrantTotals(ctx context.Context, tenant string) (map[string]float64, error) {
	rows, err := s.r.QueryContext(ctx, s.r.Rebind(`SELECT external_id, SUM(amount) FROM grants
		WHERE tenant = ? AND state = ? GROUP BY external_id`), tenant, model.GrantApplied)
	if err != nil {
		return nil, fmt.Errorf("grant totals: %w", err)
	}
	defer func() { _ = rows.Close() }()
	out := map[string]float64{}
	for rows.Next() {
		var (
			id  string
			sum float64
		)
		if err := rows.Scan(&id, &sum); err != nil {
			return nil, fmt.Errorf("grant totals: %w", err)
		}
		out[id] = sum
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("grant totals: %w", err)
	}
	return out, nil
}
