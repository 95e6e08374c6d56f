package sqlite

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"hrsync/store"
)

// maxParams bounds the parameters of one statement (SQLite's own limit is
// 32766).
const maxParams = 30000

// maxRows bounds the rows of one multi-row statement.
const maxRows = 500

// inChunk bounds the keys of one "IN (...)" list.
const inChunk = 500

// BulkInsert runs multi-row INSERT statements, with one prepared statement
// for every full chunk.
func (c *conn) BulkInsert(ctx context.Context, tx *sqlx.Tx, table string, cols []string, conflict string, n int, row func(i int) []any) error {
	if n == 0 {
		return nil
	}
	per := min(maxRows, maxParams/len(cols))
	var full *sqlx.Stmt
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
		if end-start < per {
			if _, err := tx.ExecContext(ctx, q, args...); err != nil {
				return fmt.Errorf("insert %s: %w", table, err)
			}
			continue
		}
		if full == nil {
			st, err := tx.PreparexContext(ctx, q)
			if err != nil {
				return fmt.Errorf("prepare insert %s: %w", table, err)
			}
			full = st
		}
		if _, err := full.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("insert %s: %w", table, err)
		}
	}
	return nil
}

// UpsertCounted runs multi-row INSERT statements with the conflict clause,
// summing the rows each one wrote.
func (c *conn) UpsertCounted(ctx context.Context, tx *sqlx.Tx, table string, cols []string, conflict string, n int, row func(i int) []any) (int64, error) {
	if n == 0 {
		return 0, nil
	}
	per := min(maxRows, maxParams/len(cols))
	var total int64
	args := make([]any, 0, per*len(cols))
	for start := 0; start < n; start += per {
		end := min(start+per, n)
		args = args[:0]
		for i := start; i < end; i++ {
			args = append(args, row(i)...)
		}
		r, err := tx.ExecContext(ctx, insertValues(table, cols, end-start)+conflict, args...)
		if err != nil {
			return 0, fmt.Errorf("upsert %s: %w", table, err)
		}
		k, err := r.RowsAffected()
		if err != nil {
			return 0, fmt.Errorf("upsert %s: %w", table, err)
		}
		total += k
	}
	return total, nil
}

// MergeRows goes through multi-row upserts that update a row only when
// one of its Set columns changed.
func (c *conn) MergeRows(ctx context.Context, tx *sqlx.Tx, sh store.RowShape, n int, row func(i int) []any) (int64, error) {
	return c.UpsertCounted(ctx, tx, sh.Table, sh.Cols, sh.ChangedUpsert(), n, row)
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

// ForKeys calls fn with "IN (?, ...)" conditions of at most inChunk keys.
func (c *conn) ForKeys(keys []string, fn func(cond string, args []any) error) error {
	for start := 0; start < len(keys); start += inChunk {
		end := min(start+inChunk, len(keys))
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

// SetRemoteIDs runs one prepared UPDATE per person.
func (c *conn) SetRemoteIDs(ctx context.Context, tx *sqlx.Tx, tenant string, ids map[string]string, at time.Time) error {
	st, err := tx.PreparexContext(ctx, `UPDATE people SET remote_id = ?,
		created_on_platform_at = COALESCE(created_on_platform_at, ?) WHERE tenant = ? AND external_id = ?`)
	if err != nil {
		return fmt.Errorf("set remote ids: %w", err)
	}
	defer func() { _ = st.Close() }()
	for e, r := range ids {
		if _, err := st.ExecContext(ctx, r, at, tenant, e); err != nil {
			return fmt.Errorf("set remote ids: %w", err)
		}
	}
	return nil
}
