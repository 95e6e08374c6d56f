package drivertest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"hrsync/store"
)

// person builds a row whose fields derive from n; external ids name people.
func person(id string, n int) store.PersonRow {
	return store.PersonRow{
		ExternalID:  id,
		Email:       fmt.Sprintf("%s@example.test", id),
		FirstName:   fmt.Sprintf("First%d", n),
		LastName:    fmt.Sprintf("Last%d", n),
		Department:  "Dept",
		Location:    "Paris",
		StartDate:   time.Date(2025, 1, 1+n%28, 0, 0, 0, 0, time.UTC),
		Fingerprint: int64(n) * -7919,
		FirstSeenAt: at(1, n%60),
		LastSeenAt:  at(1, n%60),
	}
}

func scanAll(t *testing.T, s *store.Store, tenant string) []store.PersonRow {
	t.Helper()
	var out []store.PersonRow
	must(t, s.ScanPeople(ctx(t), tenant, func(p store.PersonRow) error {
		out = append(out, p)
		return nil
	}))
	return out
}

func samePerson(t *testing.T, got, want store.PersonRow) {
	t.Helper()
	if got.ExternalID != want.ExternalID || got.Email != want.Email || got.FirstName != want.FirstName ||
		got.LastName != want.LastName || got.Department != want.Department || got.Location != want.Location ||
		got.RemoteID != want.RemoteID || got.Fingerprint != want.Fingerprint ||
		!got.StartDate.Equal(want.StartDate) || !got.FirstSeenAt.Equal(want.FirstSeenAt) ||
		!got.LastSeenAt.Equal(want.LastSeenAt) || !got.DepartedAt.Equal(want.DepartedAt) ||
		!got.CreatedOnPlatformAt.Equal(want.CreatedOnPlatformAt) {
		t.Fatalf("person mismatch:\n got %+v\nwant %+v", got, want)
	}
}

func testPeople(t *testing.T, d Backend) {
	eachStore(t, d, func(t *testing.T, s *store.Store) {
		t.Run("save and scan round-trip every field", func(t *testing.T) {
			full := person("p-full", 3)
			full.RemoteID = "remote-1"
			full.DepartedAt = at(5, 1)
			full.CreatedOnPlatformAt = at(2, 2)
			bare := person("p-bare", 4)
			bare.StartDate = time.Time{}
			must(t, s.SavePeople(ctx(t), "rt", []store.PersonRow{full, bare}))
			got := scanAll(t, s, "rt")
			if len(got) != 2 {
				t.Fatalf("scanned %d people", len(got))
			}
			samePerson(t, got[0], bare) // external_id order: p-bare < p-full
			samePerson(t, got[1], full)
			if got[1].StartDate.Location() != time.UTC {
				t.Fatalf("start date not in UTC: %v", got[1].StartDate)
			}
			one, ok, err := s.Person(ctx(t), "rt", "p-full")
			must(t, err)
			if !ok {
				t.Fatal("Person did not find p-full")
			}
			samePerson(t, one, full)
			if _, ok, err := s.Person(ctx(t), "rt", "nobody"); err != nil || ok {
				t.Fatalf("Person(nobody) = %v, %v", ok, err)
			}
		})

		t.Run("bulk upsert updates existing rows and keeps what the new row lacks", func(t *testing.T) {
			a := person("a", 1)
			a.RemoteID = "r-a"
			a.CreatedOnPlatformAt = at(2, 0)
			b := person("b", 2)
			must(t, s.SavePeople(ctx(t), "up", []store.PersonRow{a, b}))

			a2 := person("a", 11) // changed names, no remote id, later sighting
			a2.FirstSeenAt = at(9, 0)
			a2.LastSeenAt = at(9, 0)
			a2.Email = "a.new@example.test"
			c := person("c", 3)
			must(t, s.SavePeople(ctx(t), "up", []store.PersonRow{a2, c}))

			got := scanAll(t, s, "up")
			if len(got) != 3 {
				t.Fatalf("scanned %d people, want 3", len(got))
			}
			want := a2
			want.FirstSeenAt = a.FirstSeenAt // first sighting kept
			want.RemoteID = "r-a"            // kept: the new row had none
			want.CreatedOnPlatformAt = a.CreatedOnPlatformAt
			samePerson(t, got[0], want)
			samePerson(t, got[1], b)
			samePerson(t, got[2], c)
		})

		t.Run("duplicate and empty external ids are refused", func(t *testing.T) {
			if err := s.SavePeople(ctx(t), "dup", []store.PersonRow{person("x", 1), person("x", 2)}); err == nil {
				t.Fatal("duplicate accepted")
			}
			if err := s.SavePeople(ctx(t), "dup", []store.PersonRow{person("", 1)}); err == nil {
				t.Fatal("empty id accepted")
			}
			if got := scanAll(t, s, "dup"); len(got) != 0 {
				t.Fatalf("%d rows written by a refused save", len(got))
			}
		})

		t.Run("mark departed, count, and a returning person", func(t *testing.T) {
			var rows []store.PersonRow
			for i := range 5 {
				rows = append(rows, person(fmt.Sprintf("m%d", i), i))
			}
			must(t, s.SavePeople(ctx(t), "dep", rows))
			must(t, s.MarkDeparted(ctx(t), "dep", []string{"m1", "m3", "unknown"}, at(10, 0)))
			// Marking again does not move the departure time.
			must(t, s.MarkDeparted(ctx(t), "dep", []string{"m1"}, at(20, 0)))
			active, departed, err := s.CountPeople(ctx(t), "dep")
			must(t, err)
			if active != 3 || departed != 2 {
				t.Fatalf("active, departed = %d, %d; want 3, 2", active, departed)
			}
			m1, _, err := s.Person(ctx(t), "dep", "m1")
			must(t, err)
			if !m1.DepartedAt.Equal(at(10, 0)) {
				t.Fatalf("m1 departed at %v", m1.DepartedAt)
			}
			// m3 comes back: saved with no departure.
			must(t, s.SavePeople(ctx(t), "dep", []store.PersonRow{person("m3", 3)}))
			active, departed, err = s.CountPeople(ctx(t), "dep")
			must(t, err)
			if active != 4 || departed != 1 {
				t.Fatalf("after return: active, departed = %d, %d; want 4, 1", active, departed)
			}
			// Other tenants are untouched.
			must(t, s.SavePeople(ctx(t), "dep-other", []store.PersonRow{person("m1", 1)}))
			must(t, s.MarkDeparted(ctx(t), "dep", []string{"m1", "m2"}, at(11, 0)))
			active, _, err = s.CountPeople(ctx(t), "dep-other")
			must(t, err)
			if active != 1 {
				t.Fatal("MarkDeparted crossed tenants")
			}
		})

		t.Run("streaming scan of many rows, in order, chunked writes", func(t *testing.T) {
			const n = 5003 // more than several SQLite statement chunks
			rows := make([]store.PersonRow, n)
			ids := make([]string, 0, n/2)
			for i := range rows {
				rows[i] = person(fmt.Sprintf("s%06d", i), i)
				if i%2 == 0 {
					ids = append(ids, rows[i].ExternalID)
				}
			}
			must(t, s.SavePeople(ctx(t), "many", rows))
			must(t, s.MarkDeparted(ctx(t), "many", ids, at(3, 0)))
			i := 0
			must(t, s.ScanPeople(ctx(t), "many", func(p store.PersonRow) error {
				if p.ExternalID != rows[i].ExternalID {
					return fmt.Errorf("row %d is %s, want %s", i, p.ExternalID, rows[i].ExternalID)
				}
				if (i%2 == 0) == p.DepartedAt.IsZero() {
					return fmt.Errorf("row %d departed = %v", i, p.DepartedAt)
				}
				// The callback may use the store while the scan is open.
				if i == 100 {
					if _, _, err := s.CountPeople(ctx(t), "many"); err != nil {
						return err
					}
					if err := s.SavePeople(ctx(t), "other", []store.PersonRow{person("w", 1)}); err != nil {
						return err
					}
				}
				i++
				return nil
			}))
			if i != n {
				t.Fatalf("scanned %d rows, want %d", i, n)
			}
		})

		t.Run("scan stops at the callback's error and returns it", func(t *testing.T) {
			must(t, s.SavePeople(ctx(t), "stop", []store.PersonRow{person("a", 1), person("b", 2), person("c", 3)}))
			stop := errors.New("stop here")
			calls := 0
			err := s.ScanPeople(ctx(t), "stop", func(store.PersonRow) error {
				calls++
				if calls == 2 {
					return stop
				}
				return nil
			})
			wantErr(t, err, stop)
			if calls != 2 {
				t.Fatalf("callback called %d times after error", calls)
			}
		})
	})
}
