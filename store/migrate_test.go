package store_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"hrsync/model"
	"hrsync/store"
)

func TestMigrate(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t) // migrates on open, from an empty database
		t.Run("up from empty reaches the latest version", func(t *testing.T) {
			cur, latest, err := s.MigrationVersion(ctx(t))
			must(t, err)
			if latest < 1 || cur != latest {
				t.Fatalf("version = %d, latest = %d", cur, latest)
			}
		})
		t.Run("running again is a no-op", func(t *testing.T) {
			must(t, s.Migrate(ctx(t)))
			must(t, s.Migrate(ctx(t)))
			again := b.open(t) // migrates on open once more
			cur, latest, err := again.MigrationVersion(ctx(t))
			must(t, err)
			if cur != latest {
				t.Fatalf("version = %d, latest = %d", cur, latest)
			}
		})
		t.Run("tables are usable", func(t *testing.T) {
			active, departed, err := s.CountPeople(ctx(t), "acme")
			must(t, err)
			if active != 0 || departed != 0 {
				t.Fatalf("counts = %d, %d on an empty store", active, departed)
			}
		})
	})
}

func TestOpenSQLiteForms(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, dsn string }{
		{"bare path", filepath.Join(dir, "a.db")},
		{"sqlite prefix", "sqlite:" + filepath.Join(dir, "b.db")},
		{"sqlite url form", "sqlite://" + filepath.Join(dir, "c.db")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mustOpen(t, tc.dsn, store.Options{Migrate: true})
			if s.Dialect() != "sqlite" {
				t.Fatalf("dialect = %s", s.Dialect())
			}
			must(t, s.SavePeople(ctx(t), "acme", []store.PersonRow{person("e1", 1)}))
			active, _, err := s.CountPeople(ctx(t), "acme")
			must(t, err)
			if active != 1 {
				t.Fatalf("active = %d", active)
			}
		})
	}
	t.Run("unsupported forms are refused", func(t *testing.T) {
		for _, dsn := range []string{"", "sqlite:", ":memory:", "file:x.db?mode=memory", filepath.Join(dir, "q?.db")} {
			if s, err := store.Open(ctx(t), dsn, store.Options{}); err == nil {
				_ = s.Close()
				t.Errorf("Open(%q) succeeded", dsn)
			}
		}
	})
	t.Run("the same file opened twice shares its state", func(t *testing.T) {
		path := filepath.Join(dir, "shared.db")
		a := mustOpen(t, path, store.Options{Migrate: true})
		b := mustOpen(t, "sqlite:"+path, store.Options{})
		must(t, a.SavePeople(ctx(t), "acme", []store.PersonRow{person("e1", 1)}))
		active, _, err := b.CountPeople(ctx(t), "acme")
		must(t, err)
		if active != 1 {
			t.Fatalf("second store sees %d people", active)
		}
	})
}

func TestSQLiteSettings(t *testing.T) {
	b := sqliteBackend(t)
	s := b.open(t)
	must(t, s.SavePeople(ctx(t), "acme", []store.PersonRow{person("e1", 1)}))
	raw := b.raw(t)
	t.Run("the database is in WAL mode", func(t *testing.T) {
		var mode string
		must(t, raw.QueryRowContext(ctx(t), "PRAGMA journal_mode").Scan(&mode))
		if mode != "wal" {
			t.Fatalf("journal_mode = %s", mode)
		}
	})
	t.Run("foreign keys are enforced", func(t *testing.T) {
		// A grant for a person the store does not know breaks the
		// grants -> people foreign key.
		must(t, s.StartRun(ctx(t), store.Run{ID: "r", Job: model.JobPeople, Tenant: "acme"}))
		in := intent("r", "acme", "k", "e1")
		in.People = nil
		in.Grants = append(in.Grants, welcome("acme", "ghost", 1))
		if _, err := s.BeginBatch(ctx(t), in); err == nil {
			t.Fatal("grant for an unknown person accepted")
		}
	})
}

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
