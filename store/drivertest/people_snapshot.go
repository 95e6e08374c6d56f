package drivertest

import (
	"bytes"
	"database/sql"
	"errors"
	"iter"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"hrsync/store"
)

// execRaw runs one statement on the raw handle, as an operator's SQL would.
func execRaw(t *testing.T, b backend, raw *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := raw.ExecContext(ctx(t), b.q(q), args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func versionOf(t *testing.T, s *store.Store, tenant string) int64 {
	t.Helper()
	v, err := s.PeopleVersion(ctx(t), tenant)
	must(t, err)
	return v
}

func testPeopleVersion(t *testing.T, d Backend) {
	eachBackend(t, d, func(t *testing.T, b backend) {
		s := b.open(t)
		raw := b.raw(t)
		const tn = "acme"
		rows := []store.PersonRow{person("v1", 1), person("v2", 2), person("v3", 3)}

		// bumps runs write and checks whether it moved the tenant's version.
		bumps := func(t *testing.T, want bool, write func()) {
			t.Helper()
			before := versionOf(t, s, tn)
			write()
			after := versionOf(t, s, tn)
			if moved := after != before; moved != want {
				t.Fatalf("version %d -> %d; want moved = %v", before, after, want)
			}
		}

		t.Run("a tenant never written is at version 0", func(t *testing.T) {
			if v := versionOf(t, s, tn); v != 0 {
				t.Fatalf("version = %d", v)
			}
		})
		t.Run("new people bump it", func(t *testing.T) {
			bumps(t, true, func() { must(t, s.SavePeople(ctx(t), tn, rows)) })
			if versionOf(t, s, tn) == 0 {
				t.Fatal("still at 0")
			}
		})
		t.Run("saving the same people again does not", func(t *testing.T) {
			again := slices.Clone(rows)
			for i := range again {
				again[i].LastSeenAt = at(9, i) // only last_seen_at moves
			}
			bumps(t, false, func() { must(t, s.SavePeople(ctx(t), tn, again)) })
		})
		t.Run("an update of last_seen_at or of a column the index does not read does not", func(t *testing.T) {
			bumps(t, false, func() {
				execRaw(t, b, raw, "UPDATE people SET last_seen_at = first_seen_at, department = 'Moved' WHERE tenant = ?", tn)
			})
			bumps(t, false, func() { // the same value written again
				execRaw(t, b, raw, "UPDATE people SET email = email, fingerprint = fingerprint WHERE tenant = ?", tn)
			})
		})
		t.Run("a changed fingerprint bumps it", func(t *testing.T) {
			changed := rows[1]
			changed.Fingerprint++
			bumps(t, true, func() { must(t, s.SavePeople(ctx(t), tn, []store.PersonRow{changed})) })
		})
		t.Run("a departure bumps it", func(t *testing.T) {
			bumps(t, true, func() { must(t, s.MarkDeparted(ctx(t), tn, []string{"v3"}, at(5, 0))) })
		})
		for _, col := range []struct{ name, set, who string }{
			{"email", "email = 'other@example.test'", "'v1', 'v3'"},
			{"created_on_platform_at", "created_on_platform_at = first_seen_at", "'v1', 'v3'"},
			{"departed_at", "departed_at = NULL", "'v1', 'v3'"},
			{"external_id", "external_id = 'v1-renamed'", "'v1'"},
		} {
			t.Run("an operator's update of "+col.name+" bumps it", func(t *testing.T) {
				bumps(t, true, func() {
					execRaw(t, b, raw, "UPDATE people SET "+col.set+" WHERE tenant = ? AND external_id IN ("+col.who+")", tn)
				})
			})
		}
		t.Run("a person moved to another tenant bumps both", func(t *testing.T) {
			other := versionOf(t, s, "other")
			bumps(t, true, func() {
				execRaw(t, b, raw, "UPDATE people SET tenant = 'other' WHERE tenant = ? AND external_id = 'v2'", tn)
			})
			if versionOf(t, s, "other") == other {
				t.Fatal("the receiving tenant's version did not move")
			}
		})
		t.Run("a delete bumps it", func(t *testing.T) {
			bumps(t, true, func() { execRaw(t, b, raw, "DELETE FROM people WHERE tenant = ? AND external_id = 'v3'", tn) })
		})
		t.Run("other tenants' writes do not", func(t *testing.T) {
			bumps(t, false, func() { must(t, s.SavePeople(ctx(t), "third", rows)) })
		})
		if b.d.Plain != nil {
			t.Run("SQL that names the schema from another search_path bumps it", func(t *testing.T) {
				plain := b.d.Plain(t)
				bumps(t, true, func() {
					q := b.q("UPDATE " + quoteIdent(s.Schema()) + ".people SET email = 'third@example.test' WHERE tenant = ? AND external_id = 'v1-renamed'")
					if _, err := plain.ExecContext(ctx(t), q, tn); err != nil {
						t.Fatal(err)
					}
				})
			})
		}
	})
}

// partsOf yields parts one by one.
func partsOf(parts ...[]byte) iter.Seq[[]byte] { return slices.Values(parts) }

// readSnapshot reads the tenant's snapshot, copying each part.
func readSnapshot(t *testing.T, s *store.Store, tenant string) (parts [][]byte, version int64, ok bool) {
	t.Helper()
	version, ok, err := s.PeopleSnapshot(ctx(t), tenant, func(p []byte) error {
		parts = append(parts, bytes.Clone(p))
		return nil
	})
	must(t, err)
	if !ok && len(parts) > 0 {
		t.Fatalf("%d parts read from a snapshot that is not valid", len(parts))
	}
	return parts, version, ok
}

func testPeopleSnapshot(t *testing.T, d Backend) {
	eachBackend(t, d, func(t *testing.T, b backend) {
		s := b.open(t)
		raw := b.raw(t)
		const tn = "acme"
		must(t, s.SavePeople(ctx(t), tn, []store.PersonRow{person("s1", 1), person("s2", 2)}))
		v1 := versionOf(t, s, tn)

		t.Run("none stored: not ok, nothing read", func(t *testing.T) {
			_, v, ok := readSnapshot(t, s, tn)
			if ok || v != v1 {
				t.Fatalf("ok = %v, version = %d (tenant at %d)", ok, v, v1)
			}
			valid, err := s.PeopleSnapshotValid(ctx(t), tn)
			must(t, err)
			if valid {
				t.Fatal("valid with no snapshot")
			}
		})

		// Parts of a few hundred KiB, random, so that order and content show.
		r := rand.New(rand.NewPCG(7, 7)) //nolint:gosec // test data: a fixed seed, so that a failure repeats
		var want [][]byte
		for i := range 12 {
			p := make([]byte, 1+r.IntN(300<<10))
			for j := range p {
				p[j] = byte(r.Uint32())
			}
			p[0] = byte(i)
			want = append(want, p)
		}

		t.Run("saved at the current version, it comes back part by part in order", func(t *testing.T) {
			saved, err := s.SavePeopleSnapshot(ctx(t), tn, v1, partsOf(want...))
			must(t, err)
			if !saved {
				t.Fatal("not saved at the current version")
			}
			got, v, ok := readSnapshot(t, s, tn)
			if !ok || v != v1 {
				t.Fatalf("ok = %v, version = %d, want %d", ok, v, v1)
			}
			if len(got) != len(want) {
				t.Fatalf("%d parts, want %d", len(got), len(want))
			}
			for i := range want {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("part %d differs (%d bytes, want %d)", i, len(got[i]), len(want[i]))
				}
			}
			valid, err := s.PeopleSnapshotValid(ctx(t), tn)
			must(t, err)
			if !valid {
				t.Fatal("not valid right after the save")
			}
		})

		t.Run("other tenants have none", func(t *testing.T) {
			if _, _, ok := readSnapshot(t, s, "other"); ok {
				t.Fatal("another tenant read acme's snapshot")
			}
		})

		t.Run("a write to the people makes it stale: not ok, nothing read", func(t *testing.T) {
			must(t, s.MarkDeparted(ctx(t), tn, []string{"s2"}, at(3, 0)))
			_, v, ok := readSnapshot(t, s, tn)
			if ok || v == v1 {
				t.Fatalf("ok = %v at version %d after a departure (snapshot at %d)", ok, v, v1)
			}
			valid, err := s.PeopleSnapshotValid(ctx(t), tn)
			must(t, err)
			if valid {
				t.Fatal("stale snapshot said valid")
			}
		})

		t.Run("a save with a stale version is refused and writes nothing", func(t *testing.T) {
			saved, err := s.SavePeopleSnapshot(ctx(t), tn, v1, partsOf([]byte("stale")))
			must(t, err)
			if saved {
				t.Fatal("saved with a stale version")
			}
			var n int
			var part0 []byte
			must(t, raw.QueryRowContext(ctx(t), b.q("SELECT COUNT(*) FROM people_snapshots WHERE tenant = ?"), tn).Scan(&n))
			must(t, raw.QueryRowContext(ctx(t), b.q("SELECT data FROM people_snapshots WHERE tenant = ? AND part = 0"), tn).Scan(&part0))
			if n != len(want) || !bytes.Equal(part0, want[0]) {
				t.Fatalf("the refused save changed the stored parts (%d parts)", n)
			}
		})

		t.Run("a new save replaces every old part", func(t *testing.T) {
			v2 := versionOf(t, s, tn)
			saved, err := s.SavePeopleSnapshot(ctx(t), tn, v2, partsOf([]byte("one"), []byte("two")))
			must(t, err)
			if !saved {
				t.Fatal("not saved")
			}
			got, v, ok := readSnapshot(t, s, tn)
			if !ok || v != v2 || len(got) != 2 || string(got[0]) != "one" || string(got[1]) != "two" {
				t.Fatalf("ok = %v, version %d (want %d), parts %q", ok, v, v2, got)
			}
		})

		t.Run("a missing part makes it invalid", func(t *testing.T) {
			v := versionOf(t, s, tn)
			_, err := s.SavePeopleSnapshot(ctx(t), tn, v, partsOf([]byte("a"), []byte("b"), []byte("c")))
			must(t, err)
			execRaw(t, b, raw, "DELETE FROM people_snapshots WHERE tenant = ? AND part = 1", tn)
			if _, _, ok := readSnapshot(t, s, tn); ok {
				t.Fatal("a snapshot with a hole was read")
			}
		})

		t.Run("the callback's error stops the read and is returned unchanged", func(t *testing.T) {
			v := versionOf(t, s, tn)
			_, err := s.SavePeopleSnapshot(ctx(t), tn, v, partsOf([]byte("a"), []byte("b"), []byte("c")))
			must(t, err)
			stop := errors.New("stop")
			calls := 0
			_, ok, err := s.PeopleSnapshot(ctx(t), tn, func([]byte) error {
				calls++
				return stop
			})
			if err != stop || ok || calls != 1 { //nolint:errorlint // must be returned unchanged
				t.Fatalf("err = %v, ok = %v, calls = %d", err, ok, calls)
			}
		})

		t.Run("losing the version row drops the snapshot", func(t *testing.T) {
			v := versionOf(t, s, tn)
			_, err := s.SavePeopleSnapshot(ctx(t), tn, v, partsOf([]byte("a")))
			must(t, err)
			execRaw(t, b, raw, "DELETE FROM people_versions WHERE tenant = ?", tn)
			if _, v0, ok := readSnapshot(t, s, tn); ok || v0 != 0 {
				t.Fatalf("ok = %v at version %d after the version row was deleted", ok, v0)
			}
		})

		if b.d.Truncate {
			t.Run("TRUNCATE of people drops every snapshot", func(t *testing.T) {
				must(t, s.SavePeople(ctx(t), tn, []store.PersonRow{person("s3", 3)}))
				saved, err := s.SavePeopleSnapshot(ctx(t), tn, versionOf(t, s, tn), partsOf([]byte("a")))
				must(t, err)
				if !saved {
					t.Fatal("not saved")
				}
				execRaw(t, b, raw, "TRUNCATE people CASCADE")
				if _, _, ok := readSnapshot(t, s, tn); ok {
					t.Fatal("snapshot still read after TRUNCATE")
				}
			})
		}
	})
}

// quoteIdent quotes an SQL identifier the standard way.
func quoteIdent(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }
