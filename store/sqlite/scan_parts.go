package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jmoiron/sqlx"

	"hrsync/store"
)

// rowidRange reads the people table's lowest and highest rowid. Each is a
// SELECT of its own: SQLite reads MIN or MAX of the rowid from one end of
// the table's b-tree only when it is a query's sole aggregate, and reads
// every row for both in one SELECT (about 0.3 s for a million people).
const rowidRange = "SELECT (SELECT MIN(rowid) FROM people), (SELECT MAX(rowid) FROM people)"

// PeopleScanParts splits the people table by rowid, the order of its
// pages, into parts of about the same span: the first part has no lower
// bound and the last no upper one, so that together they hold every row
// whatever the bounds read. A part spans at least minRows rowids.
func (c *conn) PeopleScanParts(ctx context.Context, tx *sqlx.Tx, n, minRows int) ([]string, error) {
	var lo, hi sql.NullInt64
	if err := tx.QueryRowxContext(ctx, rowidRange).Scan(&lo, &hi); err != nil {
		return nil, fmt.Errorf("read rowid range: %w", err)
	}
	return store.RangeParts(lo.Int64, hi.Int64, int64(max(minRows, 1)), n, "rowid", func(b int64) string { return fmt.Sprint(b) }), nil
}

// PreparePeopleScan does nothing: PeopleScan already names no index
// (NOT INDEXED), so a scan or a part is read in rowid order.
func (c *conn) PreparePeopleScan(context.Context, *sqlx.Tx) error { return nil }
