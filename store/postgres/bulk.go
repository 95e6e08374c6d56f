package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"hrsync/store"
)

// BulkInsert streams the rows with COPY: straight into the table for a
// plain insert, or into a temporary table dropped at commit followed by one
// INSERT ... SELECT ... ON CONFLICT for an upsert.
func (c *conn) BulkInsert(ctx context.Context, tx *sqlx.Tx, table string, cols []string, conflict string, n int, row func(i int) []any) error {
	if n == 0 {
		return nil
	}
	_, err := c.UpsertCounted(ctx, tx, table, cols, conflict, n, row)
	return err
}

// UpsertCounted copies the rows straight into the table when there is no
// conflict clause (every row is new); otherwise into a temporary table
// dropped at commit, merged with one INSERT ... SELECT.
func (c *conn) UpsertCounted(ctx context.Context, tx *sqlx.Tx, table string, cols []string, conflict string, n int, row func(i int) []any) (int64, error) {
	if n == 0 {
		return 0, nil
	}
	if conflict == "" {
		if err := copyRows(ctx, tx, table, cols, n, row); err != nil {
			return 0, fmt.Errorf("copy %s: %w", table, err)
		}
		return int64(n), nil
	}
	stage, err := stageRows(ctx, tx, table, cols, n, row)
	if err != nil {
		return 0, err
	}
	list := strings.Join(cols, ", ")
	r, err := tx.ExecContext(ctx, "INSERT INTO "+table+" ("+list+") SELECT "+list+" FROM "+stage+" "+conflict)
	if err != nil {
		return 0, fmt.Errorf("upsert %s: %w", table, err)
	}
	if _, err := tx.ExecContext(ctx, "DROP TABLE "+stage); err != nil {
		return 0, fmt.Errorf("drop stage %s: %w", table, err)
	}
	k, err := r.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("upsert %s: %w", table, err)
	}
	return k, nil
}

// stageRows copies n rows into a temporary table shaped like table and
// dropped at commit, and returns its name.
func stageRows(ctx context.Context, tx *sqlx.Tx, table string, cols []string, n int, row func(i int) []any) (string, error) {
	stage := "stage_" + table
	if _, err := tx.ExecContext(ctx, "CREATE TEMP TABLE "+stage+" (LIKE "+table+" INCLUDING DEFAULTS) ON COMMIT DROP"); err != nil {
		return "", fmt.Errorf("stage %s: %w", table, err)
	}
	if err := copyRows(ctx, tx, stage, cols, n, row); err != nil {
		return "", fmt.Errorf("copy %s: %w", stage, err)
	}
	return stage, nil
}

// MergeRows copies the rows into a temporary table dropped at commit and
// merges them with two set-wise statements (an UPDATE ... FROM of the rows
// that differ, and an INSERT ... SELECT of those whose key is missing),
// which neither lock nor rewrite the rows that are the same.
func (c *conn) MergeRows(ctx context.Context, tx *sqlx.Tx, sh store.RowShape, n int, row func(i int) []any) (int64, error) {
	if n == 0 {
		return 0, nil
	}
	stage, err := stageRows(ctx, tx, sh.Table, sh.Cols, n, row)
	if err != nil {
		return 0, err
	}
	// Fresh statistics let the planner join the staged rows with a hash
	// join when there are many of them.
	if _, err := tx.ExecContext(ctx, "ANALYZE "+stage); err != nil {
		return 0, fmt.Errorf("analyze %s: %w", stage, err)
	}
	match := make([]string, len(sh.Key))
	for i, k := range sh.Key {
		match[i] = "t." + k + " = s." + k
	}
	on := strings.Join(match, " AND ")
	assign := make([]string, 0, len(sh.Set)+1)
	differ := make([]string, len(sh.Set))
	for i, col := range sh.Set {
		assign = append(assign, col+" = s."+col)
		differ[i] = "t." + col + " IS DISTINCT FROM s." + col
	}
	assign = append(assign, "updated_at = s.updated_at")
	updated, err := execCount(ctx, tx, "UPDATE "+sh.Table+" t SET "+strings.Join(assign, ", ")+" FROM "+stage+" s WHERE "+
		on+" AND ("+strings.Join(differ, " OR ")+")")
	if err != nil {
		return 0, fmt.Errorf("update %s: %w", sh.Table, err)
	}
	list := strings.Join(sh.Cols, ", ")
	inserted, err := execCount(ctx, tx, "INSERT INTO "+sh.Table+" ("+list+") SELECT "+list+" FROM "+stage+
		" s WHERE NOT EXISTS (SELECT 1 FROM "+sh.Table+" t WHERE "+on+")")
	if err != nil {
		return 0, fmt.Errorf("insert %s: %w", sh.Table, err)
	}
	if _, err := tx.ExecContext(ctx, "DROP TABLE "+stage); err != nil {
		return 0, fmt.Errorf("drop %s: %w", stage, err)
	}
	return updated + inserted, nil
}

// execCount runs q and returns the rows it affected.
func execCount(ctx context.Context, tx *sqlx.Tx, q string) (int64, error) {
	r, err := tx.ExecContext(ctx, q)
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
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

// SetRemoteIDs updates every person in one statement over two arrays.
func (c *conn) SetRemoteIDs(ctx context.Context, tx *sqlx.Tx, tenant string, ids map[string]string, at time.Time) error {
	ext := make([]string, 0, len(ids))
	rem := make([]string, 0, len(ids))
	for e, r := range ids {
		ext, rem = append(ext, e), append(rem, r)
	}
	q := `UPDATE people p SET remote_id = v.remote_id,
		created_on_platform_at = COALESCE(p.created_on_platform_at, $1)
		FROM unnest($2::text[], $3::text[]) AS v(external_id, remote_id)
		WHERE p.tenant = $4 AND p.external_id = v.external_id`
	if _, err := tx.ExecContext(ctx, q, at, pq.Array(ext), pq.Array(rem), tenant); err != nil {
		return fmt.Errorf("set remote ids: %w", err)
	}
	return nil
}
