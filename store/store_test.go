package store_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lib/pq"

	"hrsync/store"
)

// pgEnv names the variable that gives the PostgreSQL server for tests.
const pgEnv = "HRSYNC_TEST_POSTGRES_URL"

// backend opens stores of one kind for a test: open returns a new Store on
// the same database (and schema) each time it is called, so that tests can
// hold two Store values at once, as two processes would.
type backend struct {
	name string
	// dsn and schema name the database, for opening it in other ways.
	dsn, schema string
	open        func(t testing.TB) *store.Store
	// raw is a plain database/sql handle on the same tables, for baselines.
	raw func(t testing.TB) *sql.DB
}

// pgURL returns the PostgreSQL URL for tests, failing the test when unset.
func pgURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(pgEnv)
	if u == "" {
		t.Fatalf("PostgreSQL tests need a server: set %s (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable)", pgEnv)
	}
	return u
}

func randomName(t testing.TB, prefix string) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("random: %v", err)
	}
	return prefix + hex.EncodeToString(b[:])
}

func sqliteBackend(t testing.TB) backend {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	return backend{name: "sqlite", dsn: "sqlite:" + path, open: func(t testing.TB) *store.Store {
		t.Helper()
		return mustOpen(t, "sqlite:"+path, store.Options{Migrate: true})
	}, raw: func(t testing.TB) *sql.DB {
		t.Helper()
		return rawDB(t, "sqlite", path+"?_pragma=busy_timeout(10000)&_time_format=sqlite")
	}}
}

// postgresBackend makes a fresh schema for the test, dropped when it ends.
func postgresBackend(t testing.TB) backend {
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
		if _, err := db.Exec("DROP SCHEMA IF EXISTS " + pq.QuoteIdentifier(schema) + " CASCADE"); err != nil {
			t.Errorf("drop schema: %v", err)
		}
	})
	return backend{name: "postgres", dsn: u, schema: schema, open: func(t testing.TB) *store.Store {
		t.Helper()
		return mustOpen(t, u, store.Options{Schema: schema, Migrate: true})
	}, raw: func(t testing.TB) *sql.DB {
		t.Helper()
		sep := "?"
		if strings.Contains(u, "?") {
			sep = "&"
		}
		// lib/pq passes unknown URL parameters to the server as settings.
		return rawDB(t, "postgres", u+sep+"search_path="+url.QueryEscape(schema))
	}}
}

func rawDB(t testing.TB, driver, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatalf("open raw: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func mustOpen(t testing.TB, dsn string, opts store.Options) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), dsn, opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

// eachBackend runs fn, in parallel, on SQLite and on PostgreSQL, each with a
// database of its own.
func eachBackend(t *testing.T, fn func(t *testing.T, b backend)) {
	t.Helper()
	kinds := []struct {
		name string
		mk   func(testing.TB) backend
	}{{"sqlite", sqliteBackend}, {"postgres", postgresBackend}}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			fn(t, k.mk(t))
		})
	}
}

// eachStore runs fn, in parallel, on a fresh SQLite and a fresh PostgreSQL
// store.
func eachStore(t *testing.T, fn func(t *testing.T, s *store.Store)) {
	t.Helper()
	eachBackend(t, func(t *testing.T, b backend) { fn(t, b.open(t)) })
}

// ctx is the context of a test: cancelled when the test ends.
func ctx(t testing.TB) context.Context { return t.Context() }

// must fails the test on err.
func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// wantErr fails the test unless err matches target.
func wantErr(t testing.TB, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v, want %v", err, target)
	}
}

// at is a fixed instant in tests, with microseconds (both back ends keep them).
func at(day, sec int) time.Time {
	return time.Date(2025, 3, day, 9, 30, sec, 123456000, time.UTC)
}
