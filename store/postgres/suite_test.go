package postgres_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"hrsync/store"
	"hrsync/store/drivertest"
	"hrsync/store/postgres"

	// store.OpenEmpty, which the suite tests, keeps its throwaway state in
	// the dialect that can hold one in a folder.
	_ "hrsync/store/sqlite"
)

// pgEnv names the variable that gives the PostgreSQL server for tests.
const pgEnv = "HRSYNC_TEST_POSTGRES_URL"

// pgURL returns the PostgreSQL URL for tests, failing the test (never
// skipping it) when unset.
func pgURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(pgEnv)
	if u == "" {
		t.Fatalf("PostgreSQL tests need a server: set %s (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable)", pgEnv)
	}
	return u
}

// backend describes PostgreSQL to the shared suite: each test gets a schema
// of its own on the server HRSYNC_TEST_POSTGRES_URL names, dropped when the
// test ends.
func backend() drivertest.Backend {
	return drivertest.Backend{
		Name:   postgres.Name,
		Driver: postgres.Driver{},
		Bind:   sqlx.DOLLAR,
		New: func(t testing.TB) drivertest.Target {
			t.Helper()
			pb := postgresBackend(t)
			return drivertest.Target{DSN: pb.dsn, Schema: pb.schema}
		},
		Raw: func(t testing.TB, tg drivertest.Target) *sql.DB {
			t.Helper()
			return pgBackend{dsn: tg.DSN, schema: tg.Schema}.raw(t)
		},
		Where: func(tg drivertest.Target) string { return "PostgreSQL schema " + tg.Schema },
		Untouched: func(t testing.TB, tg drivertest.Target) bool {
			t.Helper()
			var n int
			must(t, plainDB(t).QueryRowContext(ctx(t),
				"SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = $1", tg.Schema).Scan(&n))
			return n == 0
		},
		MakeEmpty: func(t testing.TB, tg drivertest.Target) func(testing.TB) {
			t.Helper()
			db := plainDB(t)
			_, err := db.ExecContext(ctx(t), "CREATE SCHEMA "+pq.QuoteIdentifier(tg.Schema))
			must(t, err)
			return func(t testing.TB) {
				t.Helper()
				_, err := db.ExecContext(ctx(t), "DROP SCHEMA "+pq.QuoteIdentifier(tg.Schema))
				must(t, err)
			}
		},
		DropTrigger: func(trigger, table string) string { return "DROP TRIGGER " + trigger + " ON " + table },
		Plain:       plainDB,
		Truncate:    true,
	}
}

// TestSuite runs the shared driver suite on PostgreSQL.
func TestSuite(t *testing.T) { drivertest.Run(t, backend()) }

func BenchmarkPeople(b *testing.B) { drivertest.BenchPeople(b, backend()) }

func BenchmarkPeopleVersionTriggers(b *testing.B) {
	drivertest.BenchPeopleVersionTriggers(b, backend())
}

// pgBackend is a schema of its own for a test.
type pgBackend struct{ dsn, schema string }

func randomName(t testing.TB, prefix string) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("random: %v", err)
	}
	return prefix + hex.EncodeToString(b[:])
}

// postgresBackend makes a fresh schema name for the test; the schema is
// dropped when it ends.
func postgresBackend(t testing.TB) pgBackend {
	t.Helper()
	u := pgURL(t)
	schema := randomName(t, "hrsync_test_")
	t.Cleanup(func() {
		db, err := sql.Open("postgres", u)
		if err != nil {
			t.Errorf("drop schema: %v", err)
			return
		}
		defer func() { _ = db.Close() }()
		if _, err := db.ExecContext(context.Background(), "DROP SCHEMA IF EXISTS "+pq.QuoteIdentifier(schema)+" CASCADE"); err != nil {
			t.Errorf("drop schema: %v", err)
		}
	})
	return pgBackend{dsn: u, schema: schema}
}

func (b pgBackend) open(t testing.TB) *store.Store {
	t.Helper()
	return drivertest.Open(t, b.dsn, store.Options{Schema: b.schema, Migrate: true})
}

// raw is a plain handle whose search_path is the schema: lib/pq passes
// unknown URL parameters to the server as settings.
func (b pgBackend) raw(t testing.TB) *sql.DB {
	t.Helper()
	sep := "?"
	if strings.Contains(b.dsn, "?") {
		sep = "&"
	}
	return rawDB(t, b.dsn+sep+"search_path="+url.QueryEscape(b.schema))
}

// plainDB is a handle on the test server, outside any test schema.
func plainDB(t testing.TB) *sql.DB {
	t.Helper()
	return rawDB(t, pgURL(t))
}

func rawDB(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatalf("open raw: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func ctx(t testing.TB) context.Context { return t.Context() }

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func person(id string, n int) store.PersonRow { return drivertest.Person(id, n) }

func ptrF(f float64) *float64 { return &f }
