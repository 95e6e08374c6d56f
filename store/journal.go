package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"hrsync/model"

	"github.com/jmoiron/sqlx"
)

// JournalFilter selects journal entries. Empty fields select all.
type JournalFilter struct {
	Tenant string
	Job    model.Job
	RunID  string
	States []JournalState
	Limit  int // 0 means no limit; with a limit, the newest entries are kept
}

type journalRow struct {
	ID             int64         `db:"id"`
	RunID          string        `db:"run_id"`
	Tenant         string        `db:"tenant"`
	Job            string        `db:"job"`
	Operation      string        `db:"operation"`
	IdempotencyKey string        `db:"idempotency_key"`
	RequestSHA     string        `db:"request_sha"`
	ItemCount      int           `db:"item_count"`
	State          string        `db:"state"`
	HTTPStatus     sql.NullInt64 `db:"http_status"`
	ErrorCode      string        `db:"error_code"`
	ErrorMessage   string        `db:"error_message"`
	StartedAt      dbTime        `db:"started_at"`
	FinishedAt     dbTime        `db:"finished_at"`
	ResendOf       sql.NullInt64 `db:"resend_of"`
}

const journalSelect = `SELECT id, run_id, tenant, job, operation, idempotency_key, request_sha, item_count, state,
	http_status, error_code, error_message, started_at, finished_at, resend_of FROM api_journal`

func (r journalRow) entry() JournalEntry {
	return JournalEntry{
		ID: r.ID, RunID: r.RunID, Tenant: r.Tenant, Job: model.Job(r.Job), Operation: r.Operation, IdempotencyKey: r.IdempotencyKey,
		RequestSHA: r.RequestSHA, ItemCount: r.ItemCount, State: JournalState(r.State),
		HTTPStatus: int(r.HTTPStatus.Int64), ErrorCode: r.ErrorCode, ErrorMessage: r.ErrorMessage,
		StartedAt: r.StartedAt.Time, FinishedAt: r.FinishedAt.Time, ResendOf: r.ResendOf.Int64,
	}
}

// journalByID reads one journal entry within tx.
func journalByID(ctx context.Context, tx *sqlx.Tx, id int64) (JournalEntry, error) {
	var r journalRow
	err := tx.GetContext(ctx, &r, tx.Rebind(journalSelect+" WHERE id = ?"), id)
	if errors.Is(err, sql.ErrNoRows) {
		return JournalEntry{}, fmt.Errorf("journal entry %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return JournalEntry{}, fmt.Errorf("read journal: %w", err)
	}
	return r.entry(), nil
}

// Journal returns the journal entries matching f, oldest first.
func (s *Store) Journal(ctx context.Context, f JournalFilter) ([]JournalEntry, error) {
	var c conditions
	c.equal("tenant", f.Tenant)
	c.equal("job", string(f.Job))
	c.equal("run_id", f.RunID)
	oneOf(&c, "state", f.States)
	q, args := journalSelect+c.clause(), c.args
	if f.Limit > 0 {
		q = fmt.Sprintf("SELECT * FROM (%s ORDER BY id DESC LIMIT %d) newest", q, f.Limit)
	}
	q += " ORDER BY id"
	var rows []journalRow
	if err := s.r.SelectContext(ctx, &rows, s.r.Rebind(q), args...); err != nil {
		return nil, fmt.Errorf("read journal: %w", err)
	}
	out := make([]JournalEntry, len(rows))
	for i, r := range rows {
		out[i] = r.entry()
	}
	return out, nil
}

// GrantCall returns the journal entry of the call grant key was last sent
// in. It wraps ErrNotFound when the grant does not exist or was never sent.
func (s *Store) GrantCall(ctx context.Context, key string) (JournalEntry, error) {
	var r journalRow
	err := s.r.GetContext(ctx, &r, s.r.Rebind(journalSelect+
		" WHERE id = (SELECT journal_id FROM grants WHERE grant_key = ?)"), key)
	if errors.Is(err, sql.ErrNoRows) {
		return JournalEntry{}, fmt.Errorf("call of grant %s: %w", key, ErrNotFound)
	}
	if err != nil {
		return JournalEntry{}, fmt.Errorf("read journal: %w", err)
	}
	return r.entry(), nil
}
