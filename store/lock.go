package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"hrsync/model"

	"github.com/gofrs/flock"
)

// TryLock takes the lock called name (for example "people/acme": one job of
// one tenant) without waiting, so that two runs never overlap, across
// processes and replicas. It returns model.ErrLocked at once when another holder
// has it. The returned release frees the lock; calling it again is a no-op.
//
// On PostgreSQL the lock is a session advisory lock (pg_try_advisory_lock on
// a hash of the schema and name) held on a dedicated connection until
// release; if the process dies the server frees it with the session. On
// SQLite it is a file lock (flock) on "<database file>.<name>.lock", where
// every character of name but ASCII letters, digits, '-' and '_' becomes
// '_'; the kernel frees it when the process dies. Within one process, two
// Store values on one file exclude each other too.
func (s *Store) TryLock(ctx context.Context, name string) (release func() error, err error) {
	if name == "" {
		return nil, errors.New("try lock: empty name")
	}
	if s.dialect == dialectPostgres {
		return s.tryAdvisoryLock(ctx, name)
	}
	return s.tryFileLock(name)
}

// LockPath is the file TryLock locks for name on SQLite ("" on PostgreSQL).
func (s *Store) LockPath(name string) string {
	if s.dialect == dialectPostgres {
		return ""
	}
	return s.path + "." + sanitizeLockName(name) + ".lock"
}

func sanitizeLockName(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return '_'
	}, name)
}

func (s *Store) tryFileLock(name string) (func() error, error) {
	fl := flock.New(s.LockPath(name))
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("try lock %s: %w", name, err)
	}
	if !ok {
		_ = fl.Close()
		return nil, fmt.Errorf("lock %s: %w", name, model.ErrLocked)
	}
	var once sync.Once
	var relErr error
	return func() error {
		once.Do(func() {
			// Close unlocks and closes the file. The file stays: removing
			// it could let a waiter lock a file that is being unlinked.
			if err := fl.Close(); err != nil {
				relErr = fmt.Errorf("release lock %s: %w", name, err)
			}
		})
		return relErr
	}, nil
}

// unlockTimeout bounds the unlock of an advisory lock; release has no
// context of its own.
const unlockTimeout = 10 * time.Second

func (s *Store) tryAdvisoryLock(ctx context.Context, name string) (func() error, error) {
	conn, err := s.w.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("try lock %s: %w", name, err)
	}
	key := s.lockKey("lock:" + name)
	var got bool
	if err := conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock($1)", key).Scan(&got); err != nil {
		discard(conn)
		return nil, fmt.Errorf("try lock %s: %w", name, err)
	}
	if !got {
		_ = conn.Close()
		return nil, fmt.Errorf("lock %s: %w", name, model.ErrLocked)
	}
	var once sync.Once
	var relErr error
	//nolint:contextcheck // release has no context of its own; the unlock is bounded by unlockTimeout instead
	return func() error {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), unlockTimeout)
			defer cancel()
			var freed bool
			err := conn.QueryRowContext(ctx, "SELECT pg_advisory_unlock($1)", key).Scan(&freed)
			if err != nil || !freed {
				// Ending the session frees every lock it holds.
				discard(conn)
				if err != nil {
					relErr = fmt.Errorf("release lock %s: %w", name, err)
				} else {
					relErr = fmt.Errorf("release lock %s: lock was not held", name)
				}
				return
			}
			_ = conn.Close()
		})
		return relErr
	}, nil
}

// discard closes a dedicated connection's session instead of returning it
// to the pool.
func discard(conn interface {
	Raw(func(any) error) error
	Close() error
}) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = conn.Close()
}
