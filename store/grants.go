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
		"attempts", "last_error", "note", "journal_id", "created_at", "updated_at", "job",
	}
}

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
	JournalID  sql.NullInt64 `db:"journal_id"`
	CreatedAt  dbTime        `db:"created_at"`
	UpdatedAt  dbTime        `db:"updated_at"`
}

const grantSelect = `SELECT grant_key, tenant, job, external_id, reason, occurrence, amount, state, attempts,
	last_error, journal_id, created_at, updated_at FROM grants`

func (g grantRow) model() model.Grant {
	return model.Grant{
		Key: g.Key, Tenant: g.Tenant, Job: g.Job, ExternalID: g.ExternalID, Reason: g.Reason, Occurrence: g.Occurrence,
		Amount: g.Amount, State: model.GrantState(g.State), Attempts: g.Attempts, LastError: g.LastError,
		CreatedAt: g.CreatedAt.Time, UpdatedAt: g.UpdatedAt.Time,
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
