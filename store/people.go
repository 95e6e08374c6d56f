package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
)

// PersonRow is what the store keeps about one person of a tenant.
type PersonRow struct {
	ExternalID string
	Email      string
	FirstName  string
	LastName   string
	Department string
	Location   string
	// StartDate is a calendar date (UTC midnight); zero when not given.
	StartDate time.Time
	// RemoteID is the platform's id; "" until the platform confirms. Saving
	// a row with an empty RemoteID keeps the id already stored.
	RemoteID string
	// Fingerprint is the xxhash of the normalized fields, computed by the
	// caller (a uint64 converted to int64).
	Fingerprint int64
	// FirstSeenAt is when a source first listed the person; saving keeps
	// the stored value, and the zero time means "now" for a new row.
	FirstSeenAt time.Time
	// LastSeenAt is when the row was last written from a source; zero means
	// "now".
	LastSeenAt time.Time
	// DepartedAt is when the person left the source; zero while active.
	DepartedAt time.Time
	// CreatedOnPlatformAt is when the platform confirmed the creation; zero
	// before. Saving a row with the zero time keeps the stored value.
	CreatedOnPlatformAt time.Time
}

func peopleCols() []string {
	return []string{
		"tenant", "external_id", "email", "first_name", "last_name", "department", "location",
		"start_date", "remote_id", "fingerprint", "first_seen_at", "last_seen_at", "departed_at",
		"created_on_platform_at",
	}
}

// peopleUpsert keeps the first sighting, and a platform id or creation time
// that the new row does not know.
const peopleUpsert = `ON CONFLICT (tenant, external_id) DO UPDATE SET
	email = excluded.email, first_name = excluded.first_name, last_name = excluded.last_name,
	department = excluded.department, location = excluded.location, start_date = excluded.start_date,
	remote_id = COALESCE(excluded.remote_id, people.remote_id), fingerprint = excluded.fingerprint,
	last_seen_at = excluded.last_seen_at, departed_at = excluded.departed_at,
	created_on_platform_at = COALESCE(excluded.created_on_platform_at, people.created_on_platform_at)`

const peopleSelect = `SELECT external_id, email, first_name, last_name, department, location, start_date,
	remote_id, fingerprint, first_seen_at, last_seen_at, departed_at, created_on_platform_at FROM people`

// ScanPeople streams every person of tenant, in external_id order, to fn. It
// never holds more than one row in memory. It stops at fn's first error and
// returns that error unchanged. fn may call other Store methods.
func (s *Store) ScanPeople(ctx context.Context, tenant string, fn func(PersonRow) error) error {
	rows, err := s.r.QueryContext(ctx, s.r.Rebind(peopleSelect+" WHERE tenant = ? ORDER BY external_id"), tenant)
	if err != nil {
		return fmt.Errorf("scan people: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var (
		p                                  PersonRow
		start, first, last, gone, creation dbTime
		remote                             *string
	)
	for rows.Next() {
		if err := rows.Scan(&p.ExternalID, &p.Email, &p.FirstName, &p.LastName, &p.Department, &p.Location,
			&start, &remote, &p.Fingerprint, &first, &last, &gone, &creation); err != nil {
			return fmt.Errorf("scan people: %w", err)
		}
		p.StartDate, p.FirstSeenAt, p.LastSeenAt = start.date(), first.Time, last.Time
		p.DepartedAt, p.CreatedOnPlatformAt = gone.Time, creation.Time
		p.RemoteID = ""
		if remote != nil {
			p.RemoteID = *remote
		}
		if err := fn(p); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("scan people: %w", err)
	}
	return nil
}

// PersonKey is the lean view of a person that a diff needs: the keys, the
// fingerprint and two flags, with no time parsed. ExternalID and Email are
// the driver's bytes, valid only during the call of the scan's fn: copy
// what must outlive it (a million short strings would be garbage the
// collector must chase, for a caller that mostly hashes them).
type PersonKey struct {
	ExternalID []byte
	Email      []byte
	// Fingerprint is as in PersonRow.
	Fingerprint int64
	// Departed is set when departed_at is set.
	Departed bool
	// Created is set when created_on_platform_at is set.
	Created bool
}

// Person reads one person; ok is false when the tenant has no such person.
func (s *Store) Person(ctx context.Context, tenant, externalID string) (p PersonRow, ok bool, err error) {
	rows, err := s.r.QueryContext(ctx, s.r.Rebind(peopleSelect+" WHERE tenant = ? AND external_id = ?"), tenant, externalID)
	if err != nil {
		return PersonRow{}, false, fmt.Errorf("read person: %w", err)
	}
	defer func() { _ = rows.Close() }()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return PersonRow{}, false, fmt.Errorf("read person: %w", err)
		}
		return PersonRow{}, false, nil
	}
	var (
		start, first, last, gone, creation dbTime
		remote                             *string
	)
	if err := rows.Scan(&p.ExternalID, &p.Email, &p.FirstName, &p.LastName, &p.Department, &p.Location,
		&start, &remote, &p.Fingerprint, &first, &last, &gone, &creation); err != nil {
		return PersonRow{}, false, fmt.Errorf("read person: %w", err)
	}
	p.StartDate, p.FirstSeenAt, p.LastSeenAt = start.date(), first.Time, last.Time
	p.DepartedAt, p.CreatedOnPlatformAt = gone.Time, creation.Time
	if remote != nil {
		p.RemoteID = *remote
	}
	return p, true, nil
}

// CountPeople counts the tenant's active and departed people.
func (s *Store) CountPeople(ctx context.Context, tenant string) (active, departed int, err error) {
	q := `SELECT COALESCE(SUM(CASE WHEN departed_at IS NULL THEN 1 ELSE 0 END), 0),
		COALESCE(SUM(CASE WHEN departed_at IS NULL THEN 0 ELSE 1 END), 0) FROM people WHERE tenant = ?`
	if err := s.r.QueryRowxContext(ctx, s.r.Rebind(q), tenant).Scan(&active, &departed); err != nil {
		return 0, 0, fmt.Errorf("count people: %w", err)
	}
	return active, departed, nil
}

// SavePeople upserts rows (new, changed or returned people) in one
// transaction with bulk statements. An existing row takes every field of
// the new one except FirstSeenAt, and except RemoteID and
// CreatedOnPlatformAt when the new row leaves them empty. A row's
// DepartedAt is written as given, so a returning person (zero DepartedAt)
// becomes active again.
func (s *Store) SavePeople(ctx context.Context, tenant string, rows []PersonRow) error {
	if err := checkPeople(rows); err != nil {
		return fmt.Errorf("save people: %w", err)
	}
	return s.inTx(ctx, "save people", func(tx *sqlx.Tx) error {
		return s.upsertPeople(ctx, tx, tenant, rows)
	})
}

func checkPeople(rows []PersonRow) error {
	seen := make(map[string]struct{}, len(rows))
	for _, r := range rows {
		if r.ExternalID == "" {
			return fmt.Errorf("person with empty externalId")
		}
		if _, dup := seen[r.ExternalID]; dup {
			return fmt.Errorf("person %s listed twice", r.ExternalID)
		}
		seen[r.ExternalID] = struct{}{}
	}
	return nil
}

func (s *Store) upsertPeople(ctx context.Context, tx *sqlx.Tx, tenant string, rows []PersonRow) error {
	now := s.stamp()
	vals := make([]any, len(peopleCols()))
	return s.db.BulkInsert(ctx, tx, "people", peopleCols(), peopleUpsert, len(rows), func(i int) []any {
		r := rows[i]
		first, last := r.FirstSeenAt, r.LastSeenAt
		if first.IsZero() {
			first = now
		}
		if last.IsZero() {
			last = now
		}
		vals[0], vals[1], vals[2], vals[3], vals[4] = tenant, r.ExternalID, r.Email, r.FirstName, r.LastName
		vals[5], vals[6], vals[7], vals[8] = r.Department, r.Location, nullDate(r.StartDate), nullStr(r.RemoteID)
		vals[9], vals[10], vals[11] = r.Fingerprint, ts(first), ts(last)
		vals[12], vals[13] = nullTS(r.DepartedAt), nullTS(r.CreatedOnPlatformAt)
		return vals
	})
}

// MarkDeparted sets departed_at to at for the tenant's people named by
// externalIDs who are still active. Unknown or already departed people are
// left as they are.
func (s *Store) MarkDeparted(ctx context.Context, tenant string, externalIDs []string, at time.Time) error {
	return s.inTx(ctx, "mark departed", func(tx *sqlx.Tx) error {
		return s.db.ForKeys(externalIDs, func(cond string, args []any) error {
			q := tx.Rebind("UPDATE people SET departed_at = ? WHERE tenant = ? AND departed_at IS NULL AND external_id " + cond)
			if _, err := tx.ExecContext(ctx, q, append([]any{ts(at), tenant}, args...)...); err != nil {
				return fmt.Errorf("update people: %w", err)
			}
			return nil
		})
	})
}

// setRemoteIDs records the platform ids of a tenant's people, and their
// creation time where none is recorded yet.
func (s *Store) setRemoteIDs(ctx context.Context, tx *sqlx.Tx, tenant string, ids map[string]string, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	return s.db.SetRemoteIDs(ctx, tx, tenant, ids, at)
}

// placeholders renders n comma-separated "?".
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}
