package drivertest

import (
	"testing"
)

func testMigrate(t *testing.T, d Backend) {
	eachBackend(t, d, func(t *testing.T, b backend) {
		s := b.open(t) // migrates on open, from an empty database
		t.Run("up from empty reaches the latest version", func(t *testing.T) {
			cur, latest, err := s.MigrationVersion(ctx(t))
			must(t, err)
			if latest < 1 || cur != latest {
				t.Fatalf("version = %d, latest = %d", cur, latest)
			}
		})
		t.Run("running again is a no-op", func(t *testing.T) {
			must(t, s.Migrate(ctx(t)))
			must(t, s.Migrate(ctx(t)))
			again := b.open(t) // migrates on open once more
			cur, latest, err := again.MigrationVersion(ctx(t))
			must(t, err)
			if cur != latest {
				t.Fatalf("version = %d, latest = %d", cur, latest)
			}
		})
		t.Run("tables are usable", func(t *testing.T) {
			active, departed, err := s.CountPeople(ctx(t), "acme")
			must(t, err)
			if active != 0 || departed != 0 {
				t.Fatalf("counts = %d, %d on an empty store", active, departed)
			}
		})
	})
}
