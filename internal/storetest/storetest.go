// Package storetest opens fresh hrsync stores for tests: a SQLite file in
// the test's temporary folder, and a PostgreSQL schema of its own on the
// server HRSYNC_TEST_POSTGRES_URL names (dropped when the test ends), so
// that tests sharing a server never see each other's rows. A missing
// server fails the test; it is never skipped. It is built on the dialect
// packages hrsync/store/sqlite and hrsync/store/postgres, which importing
// it registers; the store's own tests are the shared driver suite
// (hrsync/store/drivertest).
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"hrsync/store"
	"hrsync/store/postgres"
	"hrsync/store/sqlite"
)

// Store is a fresh store for a test, and a plain handle on its tables to
// read or write them as an operator's SQL would.
type Store struct {
	Name string // the dialect's name: sqlite.Name or postgres.Name
	St   *store.Store
	Raw  *sql.DB
	// Again opens another store on the same state, as a second replica
	// (another process) would; it is closed when the test ends.
	Again func(t testing.TB) *store.Store
}

// Q writes a query's "?" placeholders as the store's database wants them.
func (s Store) Q(query string) string {
	if s.Name != postgres.Name {
		return query
	}
	return sqlx.Rebind(sqlx.DOLLAR, query)
}

// Each runs fn, in parallel subtests, on a fresh SQLite store and on a
// fresh PostgreSQL schema; the PostgreSQL run fails without
// HRSYNC_TEST_POSTGRES_URL.
func Each(t *testing.T, fn func(t *testing.T, s Store)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		fn(t, SQLite(t))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		fn(t, Postgres(t))
	})
}

// SQLite opens a migrated store in a new SQLite file, closed at the end.
func SQLite(t testing.TB) Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	st, err := store.Open(t.Context(), "sqlite:"+path, store.Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	raw, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = raw.Close() })
	again := func(t testing.TB) *store.Store { return open(t, "sqlite:"+path, store.Options{}) }
	return Store{Name: sqlite.Name, St: st, Raw: raw, Again: again}
}

// Postgres opens a migrated store in a new schema of the PostgreSQL server
// HRSYNC_TEST_POSTGRES_URL names; the schema is dropped at the end.
func Postgres(t testing.TB) Store {
	t.Helper()
	u := os.Getenv("HRSYNC_TEST_POSTGRES_URL")
	if u == "" {
		t.Fatal("PostgreSQL tests need a server: set HRSYNC_TEST_POSTGRES_URL (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable)")
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	schema := "hrsync_test_" + hex.EncodeToString(b[:])
	st, err := store.Open(t.Context(), u, store.Options{Schema: schema, Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	raw, err := sql.Open("postgres", u+sep+"search_path="+url.QueryEscape(schema))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = st.Close()
		if _, err := raw.ExecContext(context.Background(), "DROP SCHEMA "+pq.QuoteIdentifier(schema)+" CASCADE"); err != nil {
			t.Errorf("drop schema: %v", err)
		}
		_ = raw.Close()
	})
	again := func(t testing.TB) *store.Store { return open(t, u, store.Options{Schema: schema}) }
	return Store{Name: postgres.Name, St: st, Raw: raw, Again: again}
}

// open opens the store at dsn, closed when the test ends.
func open(t testing.TB, dsn string, opts store.Options) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), dsn, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}
