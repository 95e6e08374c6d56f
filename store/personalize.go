package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// PersonalizationState is where one person's personalization of one
// collection stands, from hrsync's point of view.
type PersonalizationState string

// The states of a personalization.
const (
	// PersonalizationPending: the platform answered Pending; the next run
	// asks again, until Done or Error.
	PersonalizationPending PersonalizationState = "pending"
	// PersonalizationDone: the platform answered Done. Never asked again
	// while the source fields keep their fingerprint.
	PersonalizationDone PersonalizationState = "done"
	// PersonalizationError: the platform answered status Error (unusable
	// source fields). Not asked again until the fields change.
	PersonalizationError PersonalizationState = "error"
	// PersonalizationRetry: a call failed; it is tried again once
	// NextAttemptAt has passed.
	PersonalizationRetry PersonalizationState = "retry"
	// PersonalizationFailed: calls failed as many times as allowed; the row
	// waits for an operator (or for the source fields to change).
	PersonalizationFailed PersonalizationState = "failed"
)

// PersonalizationStates lists every state, in the order reports show them.
func PersonalizationStates() []PersonalizationState {
	return []PersonalizationState{PersonalizationPending, PersonalizationRetry, PersonalizationDone,
		PersonalizationError, PersonalizationFailed}
}

// Personalization is the stored outcome of personalizing one collection for
// one person. Sha, PlatformStatus and Fields always belong to the source
// fields whose Fingerprint the row carries.
type Personalization struct {
	Tenant       string
	ExternalID   string
	CollectionID string
	// Fingerprint is the xxhash of exactly the source fields sent (a uint64
	// converted to int64).
	Fingerprint int64
	State       PersonalizationState
	// PlatformStatus is the status last returned: Pending, Done, Error, or
	// "" before any answer.
	PlatformStatus string
	Sha            string
	// Fields are the derived fields as the platform returned them (a JSON
	// object), without the group derived from the birth date (BirthFields),
	// which is never stored; nil is stored as {}.
	Fields json.RawMessage
	// Attempts counts the calls made for this fingerprint; Failures the
	// consecutive failed ones.
	Attempts  int
	Failures  int
	LastError string
	// NextAttemptAt is when a retry is due; zero unless State is retry.
	NextAttemptAt time.Time
	// FirstRequestedAt is the first call for this fingerprint; zero means now.
	FirstRequestedAt time.Time
	// UpdatedAt is when the outcome was committed; SavePersonalization sets it.
	UpdatedAt time.Time
	// DoneAt is when the platform first answered Done; zero before.
	DoneAt time.Time
}

// BirthFields is the group of the platform's derived fields that comes from
// the birth date (year, month, zodiac, age...). SavePersonalization drops
// it: the state keeps nothing derived from a birth date (DESIGN.md,
// invariant 5), and the analysts' view personalization_report never needed
// it.
const BirthFields = "birth"

// PersonalizationKey names one person's personalization of one collection
// within a tenant.
type PersonalizationKey struct {
	ExternalID   string
	CollectionID string
}

const personalizationSelect = `SELECT tenant, external_id, collection_id, fingerprint, state, platform_status,
	sha, fields, attempts, failures, last_error, next_attempt_at, first_requested_at, updated_at, done_at
	FROM personalizations`

type personalizationRow struct {
	Tenant           string `db:"tenant"`
	ExternalID       string `db:"external_id"`
	CollectionID     string `db:"collection_id"`
	Fingerprint      int64  `db:"fingerprint"`
	State            string `db:"state"`
	PlatformStatus   string `db:"platform_status"`
	Sha              string `db:"sha"`
	Fields           []byte `db:"fields"`
	Attempts         int    `db:"attempts"`
	Failures         int    `db:"failures"`
	LastError        string `db:"last_error"`
	NextAttemptAt    dbTime `db:"next_attempt_at"`
	FirstRequestedAt dbTime `db:"first_requested_at"`
	UpdatedAt        dbTime `db:"updated_at"`
	DoneAt           dbTime `db:"done_at"`
}

func (r personalizationRow) value() Personalization {
	return Personalization{
		Tenant: r.Tenant, ExternalID: r.ExternalID, CollectionID: r.CollectionID, Fingerprint: r.Fingerprint,
		State: PersonalizationState(r.State), PlatformStatus: r.PlatformStatus, Sha: r.Sha,
		Fields: json.RawMessage(r.Fields), Attempts: r.Attempts, Failures: r.Failures, LastError: r.LastError,
		NextAttemptAt: r.NextAttemptAt.Time, FirstRequestedAt: r.FirstRequestedAt.Time,
		UpdatedAt: r.UpdatedAt.Time, DoneAt: r.DoneAt.Time,
	}
}

// Personalizations reads every personalization of a tenant, keyed by person
// and collection.
func (s *Store) Personalizations(ctx context.Context, tenant string) (map[PersonalizationKey]Personalization, error) {
	var rows []personalizationRow
	if err := s.r.SelectContext(ctx, &rows, s.r.Rebind(personalizationSelect+" WHERE tenant = ?"), tenant); err != nil {
		return nil, fmt.Errorf("read personalizations: %w", err)
	}
	out := make(map[PersonalizationKey]Personalization, len(rows))
	for _, r := range rows {
		out[PersonalizationKey{ExternalID: r.ExternalID, CollectionID: r.CollectionID}] = r.value()
	}
	return out, nil
}

// SavePersonalization commits one outcome: it inserts the row or replaces
// every field of the stored one, in one transaction. UpdatedAt is set to
// the store's clock. The Fields must be a JSON object (or nil).
func (s *Store) SavePersonalization(ctx context.Context, p Personalization) error {
	if p.Tenant == "" || p.ExternalID == "" || p.CollectionID == "" {
		return errors.New("save personalization: tenant, external id and collection id are required")
	}
	switch p.State {
	case PersonalizationPending, PersonalizationDone, PersonalizationError, PersonalizationRetry, PersonalizationFailed:
	default:
		return fmt.Errorf("save personalization: unknown state %q", p.State)
	}
	fields := []byte(p.Fields)
	if len(fields) == 0 {
		fields = []byte("{}")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(fields, &obj); err != nil || obj == nil {
		return fmt.Errorf("save personalization %s/%s: fields are not a JSON object", p.ExternalID, p.CollectionID)
	}
	if _, ok := obj[BirthFields]; ok {
		// Derived from the birth date: never kept (DESIGN.md, invariant 5).
		delete(obj, BirthFields)
		var err error
		if fields, err = json.Marshal(obj); err != nil {
			return fmt.Errorf("save personalization %s/%s: encode fields: %w", p.ExternalID, p.CollectionID, err)
		}
	}
	now := s.stamp()
	first := p.FirstRequestedAt
	if first.IsZero() {
		first = now
	}
	return s.inTx(ctx, "save personalization", func(tx *sqlx.Tx) error {
		_, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO personalizations (tenant, external_id, collection_id,
			fingerprint, state, platform_status, sha, fields, attempts, failures, last_error, next_attempt_at,
			first_requested_at, updated_at, done_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (tenant, external_id, collection_id) DO UPDATE SET fingerprint = excluded.fingerprint,
			state = excluded.state, platform_status = excluded.platform_status, sha = excluded.sha,
			fields = excluded.fields, attempts = excluded.attempts, failures = excluded.failures,
			last_error = excluded.last_error, next_attempt_at = excluded.next_attempt_at,
			first_requested_at = excluded.first_requested_at, updated_at = excluded.updated_at,
			done_at = excluded.done_at`),
			p.Tenant, p.ExternalID, p.CollectionID, p.Fingerprint, string(p.State), p.PlatformStatus, p.Sha,
			string(fields), p.Attempts, p.Failures, p.LastError, nullTS(p.NextAttemptAt), ts(first), now,
			nullTS(p.DoneAt))
		if err != nil {
			return fmt.Errorf("upsert: %w", err)
		}
		return nil
	})
}

// RefusedCollection is a collection the platform refused to personalize.
type RefusedCollection struct {
	CollectionID string
	Reason       string
	RefusedAt    time.Time
}

// MarkNotPersonalizable remembers that the platform answered 422 for a
// tenant's collection, so later runs need not call it every time.
func (s *Store) MarkNotPersonalizable(ctx context.Context, tenant string, c RefusedCollection) error {
	if tenant == "" || c.CollectionID == "" {
		return errors.New("mark not personalizable: tenant and collection id are required")
	}
	at := c.RefusedAt
	if at.IsZero() {
		at = s.now()
	}
	return s.inTx(ctx, "mark not personalizable", func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO personalize_collections
			(tenant, collection_id, reason, refused_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (tenant, collection_id) DO UPDATE SET reason = excluded.reason, refused_at = excluded.refused_at`),
			tenant, c.CollectionID, c.Reason, ts(at)); err != nil {
			return fmt.Errorf("upsert: %w", err)
		}
		return nil
	})
}

// ClearNotPersonalizable forgets a refusal, so the next run calls the
// collection again. Clearing a collection that is not marked is a no-op.
func (s *Store) ClearNotPersonalizable(ctx context.Context, tenant, collectionID string) error {
	return s.inTx(ctx, "clear not personalizable", func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, tx.Rebind(`DELETE FROM personalize_collections
			WHERE tenant = ? AND collection_id = ?`), tenant, collectionID); err != nil {
			return fmt.Errorf("delete: %w", err)
		}
		return nil
	})
}

// RefusedCollections lists a tenant's collections the platform refused,
// keyed by collection id.
func (s *Store) RefusedCollections(ctx context.Context, tenant string) (map[string]RefusedCollection, error) {
	rows, err := s.r.QueryContext(ctx, s.r.Rebind(`SELECT collection_id, reason, refused_at
		FROM personalize_collections WHERE tenant = ?`), tenant)
	if err != nil {
		return nil, fmt.Errorf("read refused collections: %w", err)
	}
	defer func() { _ = rows.Close() }()
	out := map[string]RefusedCollection{}
	for rows.Next() {
		var (
			c  RefusedCollection
			at dbTime
		)
		if err := rows.Scan(&c.CollectionID, &c.Reason, &at); err != nil {
			return nil, fmt.Errorf("read refused collections: %w", err)
		}
		c.RefusedAt = at.Time
		out[c.CollectionID] = c
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read refused collections: %w", err)
	}
	return out, nil
}

// PersonalizationCount is how many personalizations of one tenant's
// collection are in one state.
type PersonalizationCount struct {
	Tenant       string
	CollectionID string
	State        PersonalizationState
	Count        int
}

// PersonalizationCounts counts the personalizations per tenant, collection
// and state (only the non-zero counts), ordered by tenant, collection and
// state; `hrsync status` prints them.
func (s *Store) PersonalizationCounts(ctx context.Context) ([]PersonalizationCount, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT tenant, collection_id, state, COUNT(*) FROM personalizations
		GROUP BY tenant, collection_id, state ORDER BY tenant, collection_id, state`)
	if err != nil {
		return nil, fmt.Errorf("count personalizations: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []PersonalizationCount
	for rows.Next() {
		var c PersonalizationCount
		if err := rows.Scan(&c.Tenant, &c.CollectionID, &c.State, &c.Count); err != nil {
			return nil, fmt.Errorf("count personalizations: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count personalizations: %w", err)
	}
	return out, nil
}

// LastProcessedFile returns the record of the tenant's newest source file
// whose outcome is processed (applied, and archived to processed/); ok is
// false when there is none. The personalization job re-reads that export,
// since the store keeps no birth date.
func (s *Store) LastProcessedFile(ctx context.Context, tenant string) (f SourceFile, ok bool, err error) {
	var (
		at  dbTime
		out string
	)
	err = s.r.QueryRowxContext(ctx, s.r.Rebind(`SELECT tenant, sha256, name, size, row_count, rejected_count,
		outcome, run_id, processed_at FROM source_files WHERE tenant = ? AND outcome = ?
		ORDER BY processed_at DESC, sha256 LIMIT 1`), tenant, SourceProcessed).
		Scan(&f.Tenant, &f.SHA256, &f.Name, &f.Size, &f.Rows, &f.Rejected, &out, &f.RunID, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return SourceFile{}, false, nil
	}
	if err != nil {
		return SourceFile{}, false, fmt.Errorf("last processed file: %w", err)
	}
	f.Outcome, f.ProcessedAt = SourceOutcome(out), at.Time
	return f, true, nil
}
