package store

import (
	"context"
	"errors"
)

// TryLock takes the lock called name (for example "people/acme": one job of
// one tenant) without waiting, so that two runs never overlap, across
// processes and replicas. It returns model.ErrLocked at once when another holder
// has it. The returned release frees the lock; calling it again is a no-op.
//
// How the lock is held is the dialect's: on PostgreSQL a session advisory
// lock held on a dedicated connection until release, freed by the server
// if the process dies; on SQLite a file lock (flock) on
// "<database file>.<name>.lock", freed by the kernel if the process dies
// (see LockPath). Within one process, two Store values on one state
// exclude each other too.
func (s *Store) TryLock(ctx context.Context, name string) (release func() error, err error) {
	if name == "" {
		return nil, errors.New("try lock: empty name")
	}
	return s.db.TryLock(ctx, name)
}

// LockPath is the file TryLock locks for name ("" when the dialect's locks
// are not files, as on PostgreSQL).
func (s *Store) LockPath(name string) string { return s.db.LockPath(name) }
