package seed_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lib/pq"

	"hrsync/internal/bench/gen"
	"hrsync/internal/bench/seed"
	"hrsync/sources"
	"hrsync/store"
)

const pgEnv = "HRSYNC_TEST_POSTGRES_URL"

var at = time.Date(2025, time.January, 2, 3, 4, 5, 0, time.UTC)

// backends opens a fresh store of each kind; the PostgreSQL one lives in a
// schema of its own, dropped when the test ends.
func backends(t *testing.T) map[string]func(t *testing.T) *store.Store {
	t.Helper()
	return map[string]func(t *testing.T) *store.Store{
		"sqlite": func(t *testing.T) *store.Store {
			return open(t, "sqlite:"+filepath.Join(t.TempDir(), "state.db"), "")
		},
		"postgres": func(t *testing.T) *store.Store {
			u := os.Getenv(pgEnv)
			if u == "" {
				t.Fatalf("PostgreSQL tests need a server: set %s (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable)", pgEnv)
			}
			var b [6]byte
			if _, err := rand.Read(b[:]); err != nil {
				t.Fatal(err)
			}
			schema := "hrsync_seedtest_" + hex.EncodeToString(b[:])
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
			return open(t, u, schema)
		},
	}
}

func open(t *testing.T, dsn, schema string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), dsn, store.Options{Schema: schema, Migrate: true})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func TestSeed(t *testing.T) {
	ctx := context.Background()
	for name, newStore := range backends(t) {
		t.Run(name, func(t *testing.T) {
			st := newStore(t)
			const n = 2500
			saved, err := seed.Seed(ctx, st, "bench", gen.Previous(n), 1000, at)
			if err != nil {
				t.Fatalf("seed: %v", err)
			}
			if saved != n {
				t.Fatalf("saved %d, want %d", saved, n)
			}
			t.Run("rows are the generated people, created on the platform", func(t *testing.T) {
				for _, i := range []int{0, 999, 1000, n - 1} {
					p := gen.Person(i)
					r, ok, err := st.Person(ctx, "bench", p.ExternalID)
					if err != nil || !ok {
						t.Fatalf("person %s: ok=%v err=%v", p.ExternalID, ok, err)
					}
					if uint64(r.Fingerprint) != sources.Fingerprint(p) {
						t.Errorf("%s: stored fingerprint differs from sources.Fingerprint", p.ExternalID)
					}
					if r.CreatedOnPlatformAt.IsZero() || r.RemoteID == "" || !r.DepartedAt.IsZero() {
						t.Errorf("%s: not an active person created on the platform: %+v", p.ExternalID, r)
					}
				}
			})
			before, err := seed.Checksum(ctx, st, "bench")
			if err != nil {
				t.Fatalf("checksum: %v", err)
			}
			t.Run("checksum counts and is stable", func(t *testing.T) {
				if before.Rows != n || before.Active != n || before.Hash == 0 {
					t.Errorf("checksum = %+v", before)
				}
				again, err := seed.Checksum(ctx, st, "bench")
				if err != nil {
					t.Fatal(err)
				}
				if again != before {
					t.Errorf("second checksum %+v differs from %+v", again, before)
				}
			})
			t.Run("checksum moves when only last_seen_at moves", func(t *testing.T) {
				r := seed.Row(gen.Person(7), at)
				r.LastSeenAt = at.Add(time.Hour)
				if err := st.SavePeople(ctx, "bench", []store.PersonRow{r}); err != nil {
					t.Fatal(err)
				}
				after, err := seed.Checksum(ctx, st, "bench")
				if err != nil {
					t.Fatal(err)
				}
				if after.Hash == before.Hash || after.Rows != n {
					t.Errorf("checksum after a write = %+v, before %+v", after, before)
				}
			})
			t.Run("other tenants are not counted", func(t *testing.T) {
				s, err := seed.Checksum(ctx, st, "nobody")
				if err != nil {
					t.Fatal(err)
				}
				if s.Rows != 0 {
					t.Errorf("rows = %d", s.Rows)
				}
			})
		})
	}
}

func TestSeedStops(t *testing.T) {
	t.Run("cancelled context", func(t *testing.T) {
		st := open(t, "sqlite:"+filepath.Join(t.TempDir(), "state.db"), "")
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		n, err := seed.Seed(ctx, st, "bench", gen.Previous(10), 4, at)
		if err == nil {
			t.Fatal("no error")
		}
		if n != 0 {
			t.Errorf("saved %d people with a cancelled context", n)
		}
	})
}
