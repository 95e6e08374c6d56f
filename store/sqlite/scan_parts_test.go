package sqlite_test

import (
	"strings"
	"testing"

	"hrsync/store/sqlite"
)

// TestRowidRangeReadsTheEnds checks that the bounds of a scan in parts are
// read from the ends of the people table, not by reading all of it: the
// query's plan searches the table, and scans no part of it.
func TestRowidRangeReadsTheEnds(t *testing.T) {
	b := sqliteBackend(t)
	_ = b.open(t) // migrated
	rows, err := b.raw(t).QueryContext(ctx(t), "EXPLAIN QUERY PLAN "+sqlite.RowidRange)
	must(t, err)
	defer func() { _ = rows.Close() }()
	var steps []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		must(t, rows.Scan(&id, &parent, &unused, &detail))
		steps = append(steps, detail)
	}
	must(t, rows.Err())
	searches := 0
	for _, s := range steps {
		if strings.HasPrefix(s, "SCAN people") {
			t.Errorf("the rowid range reads the whole table: plan %q", steps)
		}
		if strings.HasPrefix(s, "SEARCH people") {
			searches++
		}
	}
	if searches != 2 {
		t.Errorf("plan %q: %d searches of people, want 2 (one for each end)", steps, searches)
	}
}
