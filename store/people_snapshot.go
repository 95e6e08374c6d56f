package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"iter"

	"github.com/jmoiron/sqlx"
)

// The version of a tenant's people is a counter in people_versions that
// triggers on the people table bump (migration 00004) whenever a write
// changes a column that ScanPeopleKeys reads, adds a person or deletes one,
// whatever made the write: hrsync or an operator's SQL. A tenant with no
// counter is at version 0. A snapshot of the people sync's index, built
// from a scan at some version, is valid exactly while the tenant is still at
// that version.

// peopleVersion reads the tenant's version within tx.
func peopleVersion(ctx context.Context, tx *sqlx.Tx, tenant string) (int64, error) {
	var v int64
	err := tx.GetContext(ctx, &v, tx.Rebind("SELECT version FROM people_versions WHERE tenant = ?"), tenant)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read people version: %w", err)
	}
	return v, nil
}

// PeopleVersion returns the current version of the tenant's people (0 when
// no write was ever counted).
func (s *Store) PeopleVersion(ctx context.Context, tenant string) (int64, error) {
	var v int64
	err := s.inReadTx(ctx, "people version", func(tx *sqlx.Tx) error {
		var err error
		v, err = peopleVersion(ctx, tx, tenant)
		return err
	})
	return v, err
}

// snapshotValid reads, in tx, the tenant's version and whether its stored
// snapshot is complete (parts 0 to n-1) and built at that version.
func snapshotValid(ctx context.Context, tx *sqlx.Tx, tenant string) (version int64, valid bool, err error) {
	if version, err = peopleVersion(ctx, tx, tenant); err != nil {
		return 0, false, err
	}
	var (
		n                      int64
		minV, maxV, minP, maxP sql.NullInt64
	)
	err = tx.QueryRowxContext(ctx, tx.Rebind(`SELECT COUNT(*), MIN(version), MAX(version), MIN(part), MAX(part)
		FROM people_snapshots WHERE tenant = ?`), tenant).Scan(&n, &minV, &maxV, &minP, &maxP)
	if err != nil {
		return 0, false, fmt.Errorf("read snapshot parts: %w", err)
	}
	valid = n > 0 && minV.Int64 == version && maxV.Int64 == version && minP.Int64 == 0 && maxP.Int64 == n-1
	return version, valid, nil
}

// PeopleSnapshotValid tells whether the tenant has a stored snapshot built
// at its current version. It reads no part.
func (s *Store) PeopleSnapshotValid(ctx context.Context, tenant string) (bool, error) {
	var valid bool
	err := s.inReadTx(ctx, "check people snapshot", func(tx *sqlx.Tx) error {
		var err error
		_, valid, err = snapshotValid(ctx, tx, tenant)
		return err
	})
	return valid, err
}

// PeopleSnapshot reads the tenant's stored snapshot, in one read
// transaction: if it was built at the tenant's current version, it hands
// each part to fn, in order, and returns ok; otherwise (none stored, or
// built at another version) it reads no part and returns ok false. Either
// way version is the tenant's current version.
//
// The part is valid only during the call of fn: fn must copy what it keeps.
// The parts' content is not checked here (the caller's format carries its
// own checksum). fn's error stops the read and is returned unchanged.
func (s *Store) PeopleSnapshot(ctx context.Context, tenant string, fn func(part []byte) error) (version int64, ok bool, err error) {
	var fnErr error
	err = s.inReadTx(ctx, "read people snapshot", func(tx *sqlx.Tx) error {
		v, valid, err := snapshotValid(ctx, tx, tenant)
		if err != nil {
			return err
		}
		version = v
		if !valid {
			return nil
		}
		rows, err := tx.QueryContext(ctx, tx.Rebind("SELECT data FROM people_snapshots WHERE tenant = ? ORDER BY part"), tenant)
		if err != nil {
			return fmt.Errorf("read snapshot parts: %w", err)
		}
		defer func() { _ = rows.Close() }()
		var data sql.RawBytes
		for rows.Next() {
			if err := rows.Scan(&data); err != nil {
				return fmt.Errorf("read snapshot part: %w", err)
			}
			if fnErr = fn(data); fnErr != nil {
				return fnErr
			}
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read snapshot parts: %w", err)
		}
		ok = true
		return nil
	})
	if fnErr != nil {
		return 0, false, fnErr
	}
	if err != nil {
		return 0, false, err
	}
	return version, ok, nil
}

// SavePeopleSnapshot replaces the tenant's snapshot with parts, built from
// the state at version, in one transaction, if the tenant is still at that
// version; otherwise it writes nothing and returns saved false (the state
// moved since: the snapshot would be stale at once). parts yields the
// snapshot's parts in order, each of a few MiB at most; a part may be
// reused by the iterator once the next one is asked for.
func (s *Store) SavePeopleSnapshot(ctx context.Context, tenant string, version int64, parts iter.Seq[[]byte]) (saved bool, err error) {
	err = s.inTx(ctx, "save people snapshot", func(tx *sqlx.Tx) error {
		// Two savers of one tenant take turns.
		if err := s.db.TxLock(ctx, tx, "people-snapshot\x00"+tenant); err != nil {
			return fmt.Errorf("lock snapshot: %w", err)
		}
		cur, err := peopleVersion(ctx, tx, tenant)
		if err != nil {
			return err
		}
		if cur != version {
			return nil
		}
		if _, err := tx.ExecContext(ctx, tx.Rebind("DELETE FROM people_snapshots WHERE tenant = ?"), tenant); err != nil {
			return fmt.Errorf("delete old snapshot: %w", err)
		}
		st, err := tx.PreparexContext(ctx, tx.Rebind("INSERT INTO people_snapshots (tenant, part, version, data) VALUES (?, ?, ?, ?)"))
		if err != nil {
			return fmt.Errorf("write snapshot: %w", err)
		}
		defer func() { _ = st.Close() }()
		n := 0
		for part := range parts {
			if _, err = st.ExecContext(ctx, tenant, n, version, part); err != nil {
				break
			}
			n++
		}
		if err != nil {
			return fmt.Errorf("write snapshot part %d: %w", n, err)
		}
		saved = true
		return nil
	})
	if err != nil {
		return false, err
	}
	return saved, nil
}
