package sqlite_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"hrsync/store"
	"hrsync/store/drivertest"
)

// TestSQLiteFileModes: the state file, its -wal and its -shm are created
// 0600 (they name people), even under a permissive umask; -wal and -shm an
// earlier version left with a wider mode are narrowed to the state file's.
func TestSQLiteFileModes(t *testing.T) {
	old := syscall.Umask(0o002) // the widest usual umask: files would be 0664
	t.Cleanup(func() { syscall.Umask(old) })

	t.Run("new state", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "state.db")
		s := drivertest.Open(t, "sqlite:"+path, store.Options{Migrate: true})
		must(t, s.SavePeople(ctx(t), "acme", []store.PersonRow{person("e1", 1)}))
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			st, err := os.Stat(p)
			if err != nil {
				t.Fatalf("%s: %v", filepath.Base(p), err)
			}
			if perm := st.Mode().Perm(); perm != 0o600 {
				t.Errorf("%s has mode %v, want 0600", filepath.Base(p), perm)
			}
		}
	})
	t.Run("wider companions left by an earlier version", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "state.db")
		s, err := store.Open(ctx(t), "sqlite:"+path, store.Options{Migrate: true})
		must(t, err)
		must(t, s.Close())
		for _, suffix := range []string{"-wal", "-shm"} {
			if err := os.WriteFile(path+suffix, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			must(t, os.Chmod(path+suffix, 0o644))
		}
		s = drivertest.Open(t, "sqlite:"+path, store.Options{Migrate: true})
		must(t, s.SavePeople(ctx(t), "acme", []store.PersonRow{person("e1", 1)}))
		for _, suffix := range []string{"-wal", "-shm"} {
			st, err := os.Stat(path + suffix)
			if err != nil {
				t.Fatal(err)
			}
			if perm := st.Mode().Perm(); perm != 0o600 {
				t.Errorf("state.db%s has mode %v, want 0600", suffix, perm)
			}
		}
	})
}
