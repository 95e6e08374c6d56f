package postgres_test

import (
	"database/sql"
	"testing"

	"hrsync/model"
	"hrsync/store"
)

func TestPostgresSchema(t *testing.T) {
	t.Parallel()
	u := pgURL(t)
	t.Run("every table lives in its schema, and schemas do not see each other", func(t *testing.T) {
		a := postgresBackend(t).open(t)
		b := postgresBackend(t).open(t)
		if a.Schema() == b.Schema() {
			t.Fatal("schemas should differ")
		}
		must(t, a.SavePeople(ctx(t), "acme", []store.PersonRow{person("e1", 1), person("e2", 2)}))
		must(t, a.StartRun(ctx(t), store.Run{ID: "r1", Job: model.JobPeople, Tenant: "acme"}))
		active, _, err := b.CountPeople(ctx(t), "acme")
		must(t, err)
		if active != 0 {
			t.Fatalf("other schema sees %d people", active)
		}
		runs, err := b.LastRuns(ctx(t), 10)
		must(t, err)
		if len(runs) != 0 {
			t.Fatalf("other schema sees %d runs", len(runs))
		}
		// The same lock name in two schemas names two different locks.
		relA, err := a.TryLock(ctx(t), "people/acme")
		must(t, err)
		defer func() { must(t, relA()) }()
		relB, err := b.TryLock(ctx(t), "people/acme")
		must(t, err)
		must(t, relB())

		db, err := sql.Open("postgres", u)
		must(t, err)
		defer func() { _ = db.Close() }()
		var n int
		must(t, db.QueryRow(`SELECT count(*) FROM pg_tables WHERE schemaname = $1
			AND tablename IN ('people', 'grants', 'api_journal', 'runs', 'rejections', 'source_files')`, a.Schema()).Scan(&n))
		if n != 6 {
			t.Fatalf("schema %s holds %d of the 6 tables", a.Schema(), n)
		}
		must(t, db.QueryRow(`SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND tablename = 'people'`).Scan(&n))
		if n != 0 {
			t.Fatal("a people table leaked into the public schema")
		}
	})
	t.Run("every table and column has a COMMENT ON", func(t *testing.T) {
		s := postgresBackend(t).open(t)
		db, err := sql.Open("postgres", u)
		must(t, err)
		defer func() { _ = db.Close() }()
		rows, err := db.Query(`SELECT c.relname, a.attname,
				obj_description(c.oid, 'pg_class') IS NOT NULL,
				col_description(c.oid, a.attnum) IS NOT NULL
			FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
			WHERE n.nspname = $1 AND c.relkind = 'r' AND c.relname <> 'goose_db_version'`, s.Schema())
		must(t, err)
		defer func() { _ = rows.Close() }()
		cols := 0
		for rows.Next() {
			var table, col string
			var tableDoc, colDoc bool
			must(t, rows.Scan(&table, &col, &tableDoc, &colDoc))
			cols++
			if !tableDoc {
				t.Errorf("table %s has no comment", table)
			}
			if !colDoc {
				t.Errorf("column %s.%s has no comment", table, col)
			}
		}
		must(t, rows.Err())
		if cols < 50 {
			t.Fatalf("only %d columns found", cols)
		}
	})
}
