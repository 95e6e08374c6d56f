package drivertest

import (
	"errors"
	"fmt"
	"testing"

	"hrsync/store"
)

func testScanPeopleKeys(t *testing.T, d Backend) {
	eachStore(t, d, func(t *testing.T, s *store.Store) {
		t.Run("keys, fingerprint and flags of every person of the tenant", func(t *testing.T) {
			const n = 1203
			rows := make([]store.PersonRow, n)
			var gone []string
			for i := range rows {
				rows[i] = person(fmt.Sprintf("k%05d", i), i)
				if i%3 == 0 {
					rows[i].CreatedOnPlatformAt = at(2, i%60)
					rows[i].RemoteID = fmt.Sprintf("r%d", i)
				}
				if i%5 == 0 {
					gone = append(gone, rows[i].ExternalID)
				}
			}
			must(t, s.SavePeople(ctx(t), "keys", rows))
			must(t, s.MarkDeparted(ctx(t), "keys", gone, at(4, 0)))
			must(t, s.SavePeople(ctx(t), "keys-other", []store.PersonRow{person("k00001", 99)}))

			// key is a PersonKey with its bytes copied, comparable.
			type key struct {
				id, email         string
				fingerprint       int64
				departed, created bool
			}
			want := map[string]key{}
			for i, r := range rows {
				want[r.ExternalID] = key{r.ExternalID, r.Email, r.Fingerprint, i%5 == 0, i%3 == 0}
			}
			got := map[string]key{}
			version, err := s.ScanPeopleKeys(ctx(t), "keys", func(k store.PersonKey) error {
				c := key{string(k.ExternalID), string(k.Email), k.Fingerprint, k.Departed, k.Created}
				if _, twice := got[c.id]; twice {
					return fmt.Errorf("%s scanned twice", c.id)
				}
				got[c.id] = c
				return nil
			})
			must(t, err)
			current, err := s.PeopleVersion(ctx(t), "keys")
			must(t, err)
			if version == 0 || version != current {
				t.Fatalf("scan saw version %d, the tenant is at %d", version, current)
			}
			if len(got) != len(want) {
				t.Fatalf("scanned %d people, want %d", len(got), len(want))
			}
			for id, w := range want {
				if got[id] != w {
					t.Fatalf("person %s: got %+v, want %+v", id, got[id], w)
				}
			}
		})

		t.Run("a tenant with no people calls nothing and is at version 0", func(t *testing.T) {
			version, err := s.ScanPeopleKeys(ctx(t), "nobody-here", func(store.PersonKey) error {
				return errors.New("called for an empty tenant")
			})
			must(t, err)
			if version != 0 {
				t.Fatalf("version = %d, want 0", version)
			}
		})

		t.Run("stops at the callback's error and returns it unchanged", func(t *testing.T) {
			must(t, s.SavePeople(ctx(t), "keys-stop", []store.PersonRow{person("a", 1), person("b", 2), person("c", 3)}))
			stop := errors.New("stop here")
			calls := 0
			_, err := s.ScanPeopleKeys(ctx(t), "keys-stop", func(store.PersonKey) error {
				calls++
				if calls == 2 {
					return stop
				}
				return nil
			})
			if err != stop { //nolint:errorlint // must be returned unchanged
				t.Fatalf("err = %v, want the callback's error", err)
			}
			if calls != 2 {
				t.Fatalf("callback called %d times after stopping", calls)
			}
		})
	})
}
