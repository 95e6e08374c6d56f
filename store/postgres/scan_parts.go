package postgres

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"

	"hrsync/store"
)

// rowsPerBlock is about how many people an 8 KiB page of the people table
// holds (rows of about 150 bytes): it turns a part's fewest rows into its
// fewest pages (50,000 people: about 1,000 pages, 8 MiB).
const rowsPerBlock = 48

// tidRangeVersion is the first server version that reads a range of ctid
// by itself (a TID range scan) rather than filtering a whole scan.
const tidRangeVersion = 140000

// PeopleScanParts splits the people table by page, with conditions on
// ctid, into parts of about the same number of pages; the last part has
// no upper bound, so that it holds the rows of pages added since the size
// was read. A part spans at least the pages of about minRows rows. A
// server before PostgreSQL 14 scans in one part.
func (c *conn) PeopleScanParts(ctx context.Context, tx *sqlx.Tx, n, minRows int) ([]string, error) {
	var version, size, block int64
	err := tx.QueryRowxContext(ctx, `SELECT current_setting('server_version_num')::bigint,
		pg_relation_size('people'), current_setting('block_size')::bigint`).Scan(&version, &size, &block)
	if err != nil {
		return nil, fmt.Errorf("read table size: %w", err)
	}
	if version < tidRangeVersion || block <= 0 {
		return []string{""}, nil
	}
	return store.RangeParts(0, size/block, int64(max(minRows/rowsPerBlock, 1)), n, "ctid", func(b int64) string {
		return fmt.Sprintf("'(%d,0)'::tid", b)
	}), nil
}
