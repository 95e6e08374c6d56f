package drivertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"hrsync/model"
	"hrsync/store"
)

// openReadOnly opens the backend's database read-only.
func openReadOnly(b backend) (*store.Store, error) {
	return store.Open(context.Background(), b.dsn, store.Options{Schema: b.schema, ReadOnly: true})
}

func testOpenReadOnly(t *testing.T, d Backend) {
	eachBackend(t, d, func(t *testing.T, b backend) {
		t.Run("no state yet: a typed error, and nothing is created", func(t *testing.T) {
			_, err := openReadOnly(b)
			wantErr(t, err, store.ErrNoState)
			var nse *store.NoStateError
			if !errors.As(err, &nse) || !strings.HasPrefix(err.Error(), "no state yet at ") {
				t.Fatalf("error = %v, want a *NoStateError", err)
			}
			if !b.d.Untouched(t, b.tg) {
				t.Errorf("read-only open created state")
			}
			if want := b.d.Where(b.tg); nse.Where != want {
				t.Errorf("where = %q, want %q", nse.Where, want)
			}
		})
		t.Run("an empty database holds no state and stays empty", func(t *testing.T) {
			checkAndUndo := b.d.MakeEmpty(t, b.tg)
			_, err := openReadOnly(b)
			wantErr(t, err, store.ErrNoState)
			checkAndUndo(t)
		})

		rw := b.open(t) // creates and migrates the state
		run := store.Run{ID: uuid.NewString(), Job: model.JobPeople, Tenant: "acme"}
		must(t, rw.StartRun(ctx(t), run))

		t.Run("existing state reads, and refuses writes", func(t *testing.T) {
			ro, err := openReadOnly(b)
			must(t, err)
			defer ro.Close()
			runs, err := ro.LastRuns(ctx(t), 10)
			must(t, err)
			if len(runs) != 1 || runs[0].ID != run.ID {
				t.Errorf("runs = %+v", runs)
			}
			if err := ro.StartRun(ctx(t), store.Run{ID: uuid.NewString(), Job: model.JobPeople, Tenant: "acme"}); err == nil {
				t.Errorf("a read-only store wrote a run")
			}
			if runs, err := rw.LastRuns(ctx(t), 10); err != nil || len(runs) != 1 {
				t.Errorf("runs after the refused write: %d, %v", len(runs), err)
			}
		})
		t.Run("tables older than the binary", func(t *testing.T) {
			db := b.raw(t)
			var latest int64
			must(t, db.QueryRowContext(ctx(t), "SELECT MAX(version_id) FROM goose_db_version").Scan(&latest))
			_, err := db.ExecContext(ctx(t), fmt.Sprintf("DELETE FROM goose_db_version WHERE version_id = %d", latest))
			must(t, err)
			_, err = openReadOnly(b)
			wantErr(t, err, store.ErrStateOutdated)
		})
	})
}

func testOpenEmpty(t *testing.T, d Backend) {
	s, err := store.OpenEmpty(ctx(t))
	must(t, err)
	runs, err := s.LastRuns(ctx(t), 10)
	if err != nil || len(runs) != 0 {
		t.Errorf("runs = %v, %v", runs, err)
	}
	grants, err := s.ListGrants(ctx(t), store.GrantFilter{})
	if err != nil || len(grants) != 0 {
		t.Errorf("grants = %v, %v", grants, err)
	}
	dir := filepath.Dir(s.LockPath("x"))
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("its folder: %v", err)
	}
	must(t, s.Close())
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Close left its folder %s: %v", filepath.Base(dir), err)
	}
}
