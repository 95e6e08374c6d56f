package drivertest_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"hrsync/store"
	"hrsync/store/drivertest"
	"hrsync/store/sqlite"
)

// fakeDriver is a third dialect, for tests only: SQLite under the "fakedb:"
// scheme and another name. It proves the recipe of docs/architecture.md: a
// new dialect is one package (here one file) plus one registration, and the
// shared suite runs on it unchanged.
type fakeDriver struct{}

func init() { store.Register(fakeDriver{}, "fakedb") }

func (fakeDriver) Name() string { return "fakedb" }

func (fakeDriver) Open(ctx context.Context, dsn string, opts store.Options) (store.Conn, error) {
	c, err := sqlite.Driver{}.Open(ctx, "sqlite:"+strings.TrimPrefix(dsn, "fakedb:"), opts)
	if err != nil {
		return nil, err
	}
	return fakeConn{c}, nil
}

// fakeConn is SQLite's connection under the fake dialect's name.
type fakeConn struct{ store.Conn }

func (fakeConn) Name() string { return "fakedb" }

func fakeBackend() drivertest.Backend {
	path := func(tg drivertest.Target) string { return strings.TrimPrefix(tg.DSN, "fakedb:") }
	return drivertest.Backend{
		Name:   "fakedb",
		Driver: fakeDriver{},
		Bind:   sqlx.QUESTION,
		New: func(t testing.TB) drivertest.Target {
			return drivertest.Target{DSN: "fakedb:" + filepath.Join(t.TempDir(), "state.db")}
		},
		Raw: func(t testing.TB, tg drivertest.Target) *sql.DB {
			t.Helper()
			db, err := sql.Open("sqlite", path(tg)+"?_pragma=busy_timeout(10000)&_time_format=sqlite")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = db.Close() })
			return db
		},
		Where: path,
		Untouched: func(t testing.TB, tg drivertest.Target) bool {
			es, err := os.ReadDir(filepath.Dir(path(tg)))
			return err == nil && len(es) == 0
		},
		MakeEmpty: func(t testing.TB, tg drivertest.Target) func(testing.TB) {
			t.Helper()
			if err := os.WriteFile(path(tg), nil, 0o600); err != nil {
				t.Fatal(err)
			}
			return func(t testing.TB) {
				t.Helper()
				if err := os.Remove(path(tg)); err != nil {
					t.Fatal(err)
				}
			}
		},
		DropTrigger: func(trigger, _ string) string { return "DROP TRIGGER " + trigger },
	}
}

// TestFakeDialect runs the whole shared suite on the fake dialect, opened
// by its scheme through store.Open.
func TestFakeDialect(t *testing.T) {
	s, err := store.Open(t.Context(), "fakedb:"+filepath.Join(t.TempDir(), "x.db"), store.Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.Dialect() != "fakedb" {
		t.Errorf("dialect = %q, want fakedb", s.Dialect())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	drivertest.Run(t, fakeBackend())
}

// TestUnknownScheme: a DSN whose dialect the program did not import is a
// clear error, naming the scheme and never the rest of the DSN.
func TestUnknownScheme(t *testing.T) {
	_, err := store.Open(t.Context(), "mysql://user:secret@host/db", store.Options{})
	if err == nil {
		t.Fatal("opened a DSN no driver serves")
	}
	if !strings.Contains(err.Error(), `"mysql"`) || strings.Contains(err.Error(), "secret") {
		t.Errorf("error = %v", err)
	}
	if !errors.Is(err, store.ErrNoDriver) {
		t.Errorf("error = %v, want ErrNoDriver", err)
	}
}
