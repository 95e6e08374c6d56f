package postgres_test

import (
	"database/sql"
	"strconv"
	"strings"
	"testing"

	"hrsync/store/drivertest"

	"github.com/lib/pq"
)

func TestReportingPostgres(t *testing.T) {
	b := postgresBackend(t)
	s := b.open(t)
	raw := b.raw(t)
	var schema string
	must(t, raw.QueryRowContext(ctx(t), "SELECT current_schema()").Scan(&schema))
	if schema != s.Schema() {
		t.Fatalf("raw handle on schema %q, store on %q", schema, s.Schema())
	}

	t.Run("every table, view and column has a comment", func(t *testing.T) {
		rows := drivertest.QueryRows(t, raw, `SELECT c.relname, COALESCE(a.attname, '') FROM pg_class c
			JOIN pg_namespace n ON n.oid = c.relnamespace
			LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
			WHERE n.nspname = current_schema() AND c.relname IN ('`+strings.Join(drivertest.ReportingTables(), "', '")+`')
			AND (obj_description(c.oid, 'pg_class') IS NULL OR col_description(c.oid, a.attnum) IS NULL)`)
		if len(rows) > 0 {
			t.Fatalf("without a comment: %v", rows)
		}
		n := drivertest.QueryRows(t, raw, `SELECT COUNT(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = current_schema() AND c.relname IN ('`+strings.Join(drivertest.ReportingTables(), "', '")+`')`)
		if n[0][0] != strconv.Itoa(len(drivertest.ReportingTables())) {
			t.Fatalf("found %s of %d tables and views", n[0][0], len(drivertest.ReportingTables()))
		}
	})

	t.Run("the documented analyst role reads the reporting tables only", func(t *testing.T) {
		blocks := drivertest.DocSQL(t, "A read-only role")
		if len(blocks) != 1 {
			t.Fatalf("want one sql block in the role section, got %d", len(blocks))
		}
		role := randomName(t, "hrsync_analyst_test_")
		script := strings.NewReplacer(
			"hrsync_analyst", role,
			"SCHEMA hrsync ", "SCHEMA "+pq.QuoteIdentifier(schema)+" ",
			"search_path TO hrsync;", "search_path TO "+pq.QuoteIdentifier(schema)+";",
		).Replace(blocks[0])
		conn, err := raw.Conn(ctx(t))
		must(t, err)
		defer func() { _ = conn.Close() }()
		t.Cleanup(func() {
			db, err := sql.Open("postgres", pgURL(t))
			if err != nil {
				t.Errorf("drop role: %v", err)
				return
			}
			defer func() { _ = db.Close() }()
			for _, q := range []string{"DROP OWNED BY " + role, "DROP ROLE IF EXISTS " + role} {
				if _, err := db.Exec(q); err != nil {
					t.Errorf("%s: %v", q, err)
				}
			}
		})
		for stmt := range strings.SplitSeq(script, ";") {
			if strings.TrimSpace(stmt) == "" {
				continue
			}
			if _, err := conn.ExecContext(ctx(t), stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
		_, err = conn.ExecContext(ctx(t), "SET ROLE "+role)
		must(t, err)
		defer func() { _, _ = conn.ExecContext(ctx(t), "RESET ROLE") }()
		for _, tbl := range []string{"orders", "order_line_items", "analyst_people", "analyst_grants", "order_facts", "line_item_facts", "grants_by_rule_month"} {
			var n int
			if err := conn.QueryRowContext(ctx(t), "SELECT COUNT(*) FROM "+tbl).Scan(&n); err != nil {
				t.Errorf("analyst cannot read %s: %v", tbl, err)
			}
		}
		for _, q := range []string{"SELECT email FROM people", "SELECT amount FROM grants",
			"INSERT INTO orders_watermarks (tenant, last_day, updated_at) VALUES ('x', '2025-01-01', now())",
			"DELETE FROM orders"} {
			if _, err := conn.ExecContext(ctx(t), q); err == nil {
				t.Errorf("analyst may run %q", q)
			}
		}
	})
}
