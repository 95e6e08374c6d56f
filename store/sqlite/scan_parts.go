package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jmoiron/sqlx"

	"hrsync/store"
)

// minPartRows is the fewest rowids a part of a scan spans: a smaller part
// is not worth its connection.
const minPartRows = 50_000

// PeopleScanParts splits the people table by rowid, the order of its
// pages, into parts of about the same span: the first part has no lower
// bound and the last no upper one, so that together they hold every row
// whatever the bounds read.
func (c *conn) PeopleScanParts(ctx context.Context, tx *sqlx.Tx, n int) ([]string, error) {
	var lo, hi sql.NullInt64
	if err := tx.QueryRowxContext(ctx, "SELECT MIN(rowid), MAX(rowid) FROM people").Scan(&lo, &hi); err != nil {
		return nil, fmt.Errorf("read rowid range: %w", err)
	}
	return store.RangeParts(lo.Int64, hi.Int64, minPartRows, n, "rowid", func(b int64) string { return fmt.Sprint(b) }), nil
}
