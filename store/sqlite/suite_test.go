package sqlite_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"hrsync/model"
	"hrsync/store"
	"hrsync/store/drivertest"
	"hrsync/store/sqlite"
)

// backend describes SQLite to the shared suite: each test gets a state file
// of its own in its temporary folder.
func backend() drivertest.Backend {
	path := func(tg drivertest.Target) string { return strings.TrimPrefix(tg.DSN, "sqlite:") }
	return drivertest.Backend{
		Name:   sqlite.Name,
		Driver: sqlite.Driver{},
		Bind:   sqlx.QUESTION,
		New: func(t testing.TB) drivertest.Target {
			return drivertest.Target{DSN: "sqlite:" + filepath.Join(t.TempDir(), "state.db")}
		},
		Raw: func(t testing.TB, tg drivertest.Target) *sql.DB {
			t.Helper()
			return rawDB(t, path(tg))
		},
		Where: path,
		Untouched: func(t testing.TB, tg drivertest.Target) bool {
			t.Helper()
			es, err := os.ReadDir(filepath.Dir(path(tg)))
			return err == nil && len(es) == 0
		},
		MakeEmpty: func(t testing.TB, tg drivertest.Target) func(testing.TB) {
			t.Helper()
			must(t, os.WriteFile(path(tg), nil, 0o600))
			return func(t testing.TB) {
				t.Helper()
				if fi, err := os.Stat(path(tg)); err != nil || fi.Size() != 0 {
					t.Errorf("the file changed: %v %v", fi, err)
				}
				must(t, os.Remove(path(tg)))
			}
		},
		DropTrigger: func(trigger, _ string) string { return "DROP TRIGGER " + trigger },
	}
}

// TestSuite runs the shared driver suite on SQLite.
func TestSuite(t *testing.T) { drivertest.Run(t, backend()) }

func BenchmarkPeople(b *testing.B) { drivertest.BenchPeople(b, backend()) }

func BenchmarkPeopleVersionTriggers(b *testing.B) {
	drivertest.BenchPeopleVersionTriggers(b, backend())
}

// rawDB is a plain database/sql handle on the state file at path.
func rawDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)&_time_format=sqlite")
	if err != nil {
		t.Fatalf("open raw: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// sqliteBackend is a fresh state file for a test of this package.
type fileBackend struct{ path string }

func sqliteBackend(t testing.TB) fileBackend {
	return fileBackend{path: filepath.Join(t.TempDir(), "state.db")}
}

func (b fileBackend) open(t testing.TB) *store.Store {
	t.Helper()
	return drivertest.Open(t, "sqlite:"+b.path, store.Options{Migrate: true})
}

func (b fileBackend) raw(t testing.TB) *sql.DB {
	t.Helper()
	return rawDB(t, b.path)
}

func ctx(t testing.TB) context.Context { return t.Context() }

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func person(id string, n int) store.PersonRow { return drivertest.Person(id, n) }

func intent(run, tenant, key string, ids ...string) store.BatchIntent {
	return drivertest.Intent(run, tenant, key, ids...)
}

func welcome(tenant, ext string, amount float64) model.Grant {
	return drivertest.Welcome(tenant, ext, amount)
}
