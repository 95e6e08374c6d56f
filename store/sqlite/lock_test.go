package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"hrsync/model"
	"hrsync/store"
	"hrsync/store/drivertest"
)

func TestLockFileName(t *testing.T) {
	s := sqliteBackend(t).open(t)
	for _, tc := range []struct{ name, suffix string }{
		{"people/acme", ".people_acme.lock"},
		{"orders:ACME corp", ".orders_ACME_corp.lock"},
		{"../../etc", ".______etc.lock"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := s.LockPath(tc.name)
			if !strings.HasSuffix(p, "state.db"+tc.suffix) {
				t.Fatalf("lock path = %s, want suffix state.db%s", p, tc.suffix)
			}
			if filepath.Dir(p) != filepath.Dir(strings.TrimSuffix(p, tc.suffix)) {
				t.Fatalf("lock file %s is not next to the database", p)
			}
		})
	}
}

// lockHelperEnv makes the test binary, re-run as a child, try one lock and
// report "acquired" or "busy" on stdout.
const lockHelperEnv = "HRSYNC_STORE_LOCK_HELPER"

// TestLockHelperProcess is not a test: it is the child process of
// TestTryLockAcrossProcesses, and does nothing when run normally.
func TestLockHelperProcess(t *testing.T) {
	arg := os.Getenv(lockHelperEnv)
	if arg == "" {
		return
	}
	path, name, _ := strings.Cut(arg, "|")
	s, err := store.Open(context.Background(), path, store.Options{})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	release, err := s.TryLock(context.Background(), name)
	switch {
	case errors.Is(err, model.ErrLocked):
		fmt.Println("busy")
	case err != nil:
		fmt.Println("error:", err)
		os.Exit(2)
	default:
		fmt.Println("acquired")
		_ = release()
	}
	_ = s.Close()
	os.Exit(0)
}

func TestTryLockAcrossProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s := drivertest.Open(t, path, store.Options{Migrate: true})
	child := func(t *testing.T) string {
		t.Helper()
		cmd := exec.CommandContext(ctx(t), os.Args[0], "-test.run=^TestLockHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), lockHelperEnv+"="+path+"|people/acme")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("child: %v (%s)", err, out)
		}
		return strings.TrimSpace(strings.Split(string(out), "\n")[0])
	}
	t.Run("another process is refused while the lock is held", func(t *testing.T) {
		release, err := s.TryLock(ctx(t), "people/acme")
		must(t, err)
		if got := child(t); got != "busy" {
			t.Fatalf("child says %q, want busy", got)
		}
		must(t, release())
	})
	t.Run("another process takes the lock once released", func(t *testing.T) {
		if got := child(t); got != "acquired" {
			t.Fatalf("child says %q, want acquired", got)
		}
	})
}
