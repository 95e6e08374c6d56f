package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/lib/pq/pqerror"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// sqliteMaxParams bounds the parameters of one SQLite statement (SQLite's
// own limit is 32766).
const sqliteMaxParams = 30000

// sqliteMaxRows bounds the rows of one multi-row SQLite statement.
const sqliteMaxRows = 500

// sqliteInChunk bounds the keys of one SQLite "IN (...)" list.
const sqliteInChunk = 500

// bulkInsert writes n rows into table's cols within tx; row(i) gives the
// values of row i in the order of cols. conflict, when not empty, is an
// "ON CONFLICT ..." clause that turns the insert into an upsert.
//
// On SQLite it runs multi-row INSERT statements (one prepared statement for
// every full chunk). On PostgreSQL it streams the rows with COPY: straight
// into the table for a plain insert, or into a temporary table dropped at
// commit followed by one INSERT ... SELECT ... ON CONFLICT for an upsert.
func (s *Store) bulkInsert(ctx context.Context, tx *sqlx.Tx, table string, cols []string, conflict string, n int, row func(i int) []any) error {
	if n == 0 {
		return nil
	}
	if s.dialect == dialectPostgres {
		return s.copyIn(ctx, tx, table, cols, conflict, n, row)
	}
	per := min(sqliteMaxRows, sqliteMaxParams/len(cols))
	var (
		full     *sqlx.Stmt
		fullRows int
	)
	defer func() {
		if full != nil {
			_ = full.Close()
		}
	}()
	args := make([]any, 0, per*len(cols))
	for start := 0; start < n; start += per {
		end := min(start+per, n)
		args = args[:0]
		for i := start; i < end; i++ {
			args = append(args, row(i)...)
		}
		q := insertValues(table, cols, end-start) + conflict
		if end-start == per {
			if full == nil {
				st, err := tx.PreparexContext(ctx, q)
				if err != nil {
					return fmt.Errorf("prepare insert %s: %w", table, err)
				}
				full, fullRows = st, per
			}
			if fullRows == end-start {
				if _, err := full.ExecContext(ctx, args...); err != nil {
					return fmt.Errorf("insert %s: %w", table, err)
				}
				continue
			}
		}
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("insert %s: %w", table, err)
		}
	}
	return nil
}

// insertValues renders "INSERT INTO t (a, b) VALUES (?, ?), (?, ?)" for rows rows.
func insertValues(table string, cols []string, rows int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO ")
	b.WriteString(table)
	b.WriteString(" (")
	b.WriteString(strings.Join(cols, ", "))
	b.WriteString(") VALUES ")
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	for i := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(one)
	}
	b.WriteString(" ")
	return b.String()
}

func (s *Store) copyIn(ctx context.Context, tx *sqlx.Tx, table string, cols []string, conflict string, n int, row func(i int) []any) error {
	target := table
	if conflict != "" {
		target = "stage_" + table
		create := "CREATE TEMP TABLE " + target + " (LIKE " + table + " INCLUDING DEFAULTS) ON COMMIT DROP"
		if _, err := tx.ExecContext(ctx, create); err != nil {
			return fmt.Errorf("stage %s: %w", table, err)
		}
	}
	if err := copyRows(ctx, tx, target, cols, n, row); err != nil {
		return fmt.Errorf("copy %s: %w", table, err)
	}
	if conflict == "" {
		return nil
	}
	list := strings.Join(cols, ", ")
	q := "INSERT INTO " + table + " (" + list + ") SELECT " + list + " FROM " + target + " " + conflict
	if _, err := tx.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("upsert %s: %w", table, err)
	}
	if _, err := tx.ExecContext(ctx, "DROP TABLE "+target); err != nil {
		return fmt.Errorf("drop stage %s: %w", table, err)
	}
	return nil
}

// forKeys calls fn with a condition on a text column matching keys ("= ANY(?)"
// on PostgreSQL, "IN (?, ...)" chunks on SQLite) and its arguments. The
// condition is written with "?" placeholders; the query must be rebound.
func (s *Store) forKeys(keys []string, fn func(cond string, args []any) error) error {
	if len(keys) == 0 {
		return nil
	}
	if s.dialect == dialectPostgres {
		return fn("= ANY(?)", []any{pq.Array(keys)})
	}
	for start := 0; start < len(keys); start += sqliteInChunk {
		end := min(start+sqliteInChunk, len(keys))
		args := make([]any, 0, end-start)
		for _, k := range keys[start:end] {
			args = append(args, k)
		}
		cond := "IN (" + strings.TrimSuffix(strings.Repeat("?, ", end-start), ", ") + ")"
		if err := fn(cond, args); err != nil {
			return err
		}
	}
	return nil
}

// isUniqueViolation tells whether err is a unique or primary-key violation on
// either back end.
func isUniqueViolation(err error) bool {
	if pq.As(err, pqerror.UniqueViolation) != nil {
		return true
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		c := se.Code()
		return c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

// copyRows streams n rows into target with COPY FROM STDIN (lib/pq).
func copyRows(ctx context.Context, tx *sqlx.Tx, target string, cols []string, n int, row func(i int) []any) (err error) {
	st, err := tx.PrepareContext(ctx, "COPY "+target+" ("+strings.Join(cols, ", ")+") FROM STDIN")
	if err != nil {
		return err
	}
	defer func() {
		if cerr := st.Close(); err == nil {
			err = cerr
		}
	}()
	for i := range n {
		if _, err := st.ExecContext(ctx, row(i)...); err != nil {
			return err
		}
	}
	_, err = st.ExecContext(ctx) // flushes the rows
	return err
}
