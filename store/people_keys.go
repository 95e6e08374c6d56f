package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/jmoiron/sqlx"
)

// ScanPeopleKeys streams every person of tenant to fn, in no particular
// order, reading only what PersonKey holds; fn must not keep the key's
// byte slices. It is the scan for large diffs:
// much cheaper than ScanPeople, since no timestamp is read or parsed. It
// stops at fn's first error and returns that error unchanged.
//
// It also returns the version of the tenant's people (see PeopleVersion)
// that the rows belong to: both are read in one read transaction, so an
// index built from the rows is exactly the state at that version.
func (s *Store) ScanPeopleKeys(ctx context.Context, tenant string, fn func(PersonKey) error) (version int64, err error) {
	return s.ScanPeopleKeysParts(ctx, tenant, 1, func(_ int, k PersonKey) error { return fn(k) })
}

// maxScanParts bounds the connections one scan holds, well under the
// dialects' pools of readers.
const maxScanParts = 4

// scanRetries is how many times ScanPeopleKeysParts opens its parts' read
// transactions again when a write landed between their starts, before it
// scans in one part.
const scanRetries = 3

// ScanPeopleKeysParts is ScanPeopleKeys split into at most parts parts
// that together hold every person once, each read on a connection of its
// own and handed to fn on a goroutine of its own: fn is called
// concurrently for different parts, and in turn within a part. part is
// the part's index, from 0 to the number of parts less one; the parts
// follow one another in the table's storage order (SQLite's rowid,
// PostgreSQL's pages). The dialect decides how many parts a table this
// size is worth (one for a small table, or where the dialect does not
// split a scan), and the store uses at most maxScanParts.
//
// Every part reads the tenant's version in its own read transaction
// before any row: the scan goes ahead only when they all read the same
// one, so every part sees the same people (each write that changes what
// a scan reads bumps the version), and that version is returned. When
// writes keep landing between the parts' starts, it scans in one part.
// It stops at fn's first error (the other parts stop too) and returns
// that error unchanged.
func (s *Store) ScanPeopleKeysParts(ctx context.Context, tenant string, parts int,
	fn func(part int, k PersonKey) error) (version int64, err error) {
	for try := 0; parts > 1 && try < scanRetries; try++ {
		txs, version, err := s.beginScanParts(ctx, tenant, parts)
		if err != nil {
			return 0, fmt.Errorf("scan people keys: %w", err)
		}
		if txs == nil {
			continue // the parts read different versions
		}
		return s.scanParts(ctx, tenant, txs, version, fn)
	}
	err = s.inReadTx(ctx, "scan people keys", func(tx *sqlx.Tx) error {
		v, err := peopleVersion(ctx, tx, tenant)
		if err != nil {
			return err
		}
		version = v
		return scanKeysPart(ctx, s.db, tx, tenant, "", func(k PersonKey) error { return fn(0, k) })
	})
	var stop *fnError
	if errors.As(err, &stop) {
		return 0, stop.err
	}
	if err != nil {
		return 0, err
	}
	return version, nil
}

// scanTx is a read transaction of one part of a scan, and the condition
// that selects the part's rows.
type scanTx struct {
	tx   *sqlx.Tx
	cond string
}

// beginScanParts opens the read transactions of a scan in parts and reads
// the tenant's version in each. It returns no transaction (and no error)
// when they read different versions, and one when the dialect scans this
// table in one part.
func (s *Store) beginScanParts(ctx context.Context, tenant string, parts int) (txs []scanTx, version int64, err error) {
	first, err := s.r.BeginTxx(ctx, s.db.ReadTxOptions())
	if err != nil {
		return nil, 0, fmt.Errorf("begin: %w", err)
	}
	txs = append(txs, scanTx{tx: first})
	if version, err = peopleVersion(ctx, first, tenant); err != nil {
		return rollbackAll(txs), 0, err
	}
	conds, err := s.db.PeopleScanParts(ctx, first, min(parts, maxScanParts), s.scanPartRows)
	if err != nil {
		return rollbackAll(txs), 0, fmt.Errorf("split: %w", err)
	}
	txs[0].cond = conds[0]
	for _, cond := range conds[1:] {
		tx, err := s.r.BeginTxx(ctx, s.db.ReadTxOptions())
		if err != nil {
			return rollbackAll(txs), 0, fmt.Errorf("begin: %w", err)
		}
		txs = append(txs, scanTx{tx: tx, cond: cond})
		v, err := peopleVersion(ctx, tx, tenant)
		if err != nil {
			return rollbackAll(txs), 0, err
		}
		if v != version {
			return rollbackAll(txs), 0, nil
		}
	}
	return txs, version, nil
}

// rollbackAll rolls back the transactions of txs, and returns nil.
func rollbackAll(txs []scanTx) []scanTx {
	for _, t := range txs {
		_ = t.tx.Rollback()
	}
	return nil
}

// fnError carries the error of a scan's callback through the scan, to be
// returned unchanged.
type fnError struct{ err error }

func (e *fnError) Error() string { return e.err.Error() }
func (e *fnError) Unwrap() error { return e.err }

// scanParts reads the parts of txs concurrently, then ends their
// transactions. The first error stops every part.
func (s *Store) scanParts(ctx context.Context, tenant string, txs []scanTx, version int64,
	fn func(part int, k PersonKey) error) (int64, error) {
	defer rollbackAll(txs)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for i, t := range txs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := scanKeysPart(ctx, s.db, t.tx, tenant, t.cond, func(k PersonKey) error { return fn(i, k) })
			if err != nil {
				once.Do(func() { first = err })
				cancel(err)
			}
		}()
	}
	wg.Wait()
	var stop *fnError
	if errors.As(first, &stop) {
		return 0, stop.err
	}
	if first != nil {
		return 0, fmt.Errorf("scan people keys: %w", first)
	}
	return version, nil
}

// scanKeysPart reads, within tx, the tenant's people that cond selects
// (all of them when cond is empty), from db's PeopleScan as db prepares
// it, and hands each to fn. An error of fn comes back as an *fnError.
func scanKeysPart(ctx context.Context, db Conn, tx *sqlx.Tx, tenant, cond string, fn func(PersonKey) error) error {
	if err := db.PreparePeopleScan(ctx, tx); err != nil {
		return err
	}
	// Both flags in one column: every column costs the driver a call per row.
	q := `SELECT external_id, email, fingerprint,
		CASE WHEN departed_at IS NULL THEN 0 ELSE 1 END + CASE WHEN created_on_platform_at IS NULL THEN 0 ELSE 2 END
		FROM ` + db.PeopleScan() + ` WHERE tenant = ?`
	if cond != "" {
		q += " AND " + cond
	}
	rows, err := tx.QueryContext(ctx, tx.Rebind(q), tenant)
	if err != nil {
		return err
	}
	defer func() { _ = rows.Close() }()
	var (
		k         PersonKey
		id, email sql.RawBytes
		flags     int64
	)
	for rows.Next() {
		if err := rows.Scan(&id, &email, &k.Fingerprint, &flags); err != nil {
			return err
		}
		k.ExternalID, k.Email = id, email
		k.Departed, k.Created = flags&1 != 0, flags&2 != 0
		if err := fn(k); err != nil {
			return &fnError{err}
		}
	}
	return rows.Err()
}

// RangeParts splits [lo, hi] into at most n parts of at least minSpan,
// as conditions on col (bounds written by lit); one part is the empty
// condition. The first part has no lower bound and the last no upper one,
// so that the parts hold every value of col, within [lo, hi] or not. It
// serves the dialects' PeopleScanParts.
func RangeParts(lo, hi, minSpan int64, n int, col string, lit func(int64) string) []string {
	span := hi - lo + 1
	parts := int64(n)
	if span/minSpan < parts {
		parts = span / minSpan
	}
	if parts <= 1 {
		return []string{""}
	}
	conds := make([]string, 0, parts)
	prev := ""
	for i := int64(1); i < parts; i++ {
		b := lit(lo + span*i/parts)
		cond := col + " < " + b
		if prev != "" {
			cond = col + " >= " + prev + " AND " + cond
		}
		conds = append(conds, cond)
		prev = b
	}
	return append(conds, col+" >= "+prev)
}
