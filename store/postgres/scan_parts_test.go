package postgres_test

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"hrsync/store"
	"hrsync/store/postgres"
)

// TestScanReadsPagesWithoutStatistics: while the people table has no
// statistics (never analyzed, autovacuum not come by yet), the planner
// reads a scan's part through the tenant's index, and the scan's settings
// make it a TID range scan, the plan the parts are made for; once the
// table has statistics, the settings change nothing.
func TestScanReadsPagesWithoutStatistics(t *testing.T) {
	b := postgresBackend(t)
	st := b.open(t)
	db := b.raw(t)
	// No analyze behind the test's back.
	_, err := db.ExecContext(ctx(t), "ALTER TABLE people SET (autovacuum_enabled = false)")
	must(t, err)
	rows := make([]store.PersonRow, 20000)
	for i := range rows {
		rows[i] = store.PersonRow{ExternalID: fmt.Sprintf("E%05d", i), Email: fmt.Sprintf("p%d@example.com", i)}
	}
	must(t, st.SavePeople(ctx(t), "t", rows))

	part := `SELECT external_id FROM people WHERE tenant = 't' AND ctid >= '(0,0)'::tid AND ctid < '(200,0)'::tid`
	// plan returns the part's plan, and the bitmap scan setting after
	// the scan's settings, in a read transaction of its own.
	plan := func(settings bool) (string, string) {
		tx, err := db.BeginTx(ctx(t), &sql.TxOptions{ReadOnly: true})
		must(t, err)
		defer func() { _ = tx.Rollback() }()
		if settings {
			_, err := tx.ExecContext(ctx(t), postgres.ScanSettings)
			must(t, err)
		}
		var bitmap string
		must(t, tx.QueryRowContext(ctx(t), "SELECT current_setting('enable_bitmapscan')").Scan(&bitmap))
		lines, err := tx.QueryContext(ctx(t), "EXPLAIN "+part)
		must(t, err)
		defer func() { _ = lines.Close() }()
		var out []string
		for lines.Next() {
			var l string
			must(t, lines.Scan(&l))
			out = append(out, l)
		}
		must(t, lines.Err())
		return strings.Join(out, "\n"), bitmap
	}

	if p, _ := plan(false); !strings.Contains(p, "Bitmap Heap Scan") {
		t.Fatalf("without statistics or settings the planner was expected to read the tenant's index:\n%s", p)
	}
	if p, bitmap := plan(true); !strings.Contains(p, "Tid Range Scan") || bitmap != "off" {
		t.Errorf("with the scan's settings and no statistics: enable_bitmapscan %s, plan\n%s\nwant off and a Tid Range Scan", bitmap, p)
	}
	_, err = db.ExecContext(ctx(t), "ANALYZE people")
	must(t, err)
	if _, bitmap := plan(true); bitmap != "on" {
		t.Errorf("with statistics the scan's settings turned enable_bitmapscan %s, want it left on", bitmap)
	}
	// The settings end with their transaction.
	var bitmap string
	must(t, db.QueryRowContext(ctx(t), "SELECT current_setting('enable_bitmapscan')").Scan(&bitmap))
	if bitmap != "on" {
		t.Errorf("enable_bitmapscan %s outside the scan's transaction, want on", bitmap)
	}
}
