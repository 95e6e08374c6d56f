package sqlite_test

import (
	"path/filepath"
	"testing"

	"hrsync/model"
	"hrsync/store"
	"hrsync/store/drivertest"
)

func TestOpenSQLiteForms(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, dsn string }{
		{"bare path", filepath.Join(dir, "a.db")},
		{"sqlite prefix", "sqlite:" + filepath.Join(dir, "b.db")},
		{"sqlite url form", "sqlite://" + filepath.Join(dir, "c.db")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := drivertest.Open(t, tc.dsn, store.Options{Migrate: true})
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
		a := drivertest.Open(t, path, store.Options{Migrate: true})
		b := drivertest.Open(t, "sqlite:"+path, store.Options{})
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
