package postgres

import (
	"context"
	"database/sql/driver"
	"fmt"
	"sync"
	"time"

	"hrsync/model"
)

// unlockTimeout bounds the unlock of an advisory lock; release has no
// context of its own.
const unlockTimeout = 10 * time.Second

// TryLock takes a session advisory lock (pg_try_advisory_lock on a hash of
// the schema and name) held on a dedicated connection until release; if
// the process dies the server frees it with the session.
func (c *conn) TryLock(ctx context.Context, name string) (func() error, error) {
	dc, err := c.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("try lock %s: %w", name, err)
	}
	key := c.lockKey("lock:" + name)
	var got bool
	if err := dc.QueryRowContext(ctx, "SELECT pg_try_advisory_lock($1)", key).Scan(&got); err != nil {
		discard(dc)
		return nil, fmt.Errorf("try lock %s: %w", name, err)
	}
	if !got {
		_ = dc.Close()
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
			err := dc.QueryRowContext(ctx, "SELECT pg_advisory_unlock($1)", key).Scan(&freed)
			if err != nil || !freed {
				// Ending the session frees every lock it holds.
				discard(dc)
				if err != nil {
					relErr = fmt.Errorf("release lock %s: %w", name, err)
				} else {
					relErr = fmt.Errorf("release lock %s: lock was not held", name)
				}
				return
			}
			_ = dc.Close()
		})
		return relErr
	}, nil
}

// LockPath is "": the locks are not files.
func (c *conn) LockPath(string) string { return "" }

// discard closes a dedicated connection's session instead of returning it
// to the pool.
func discard(conn interface {
	Raw(func(any) error) error
	Close() error
}) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = conn.Close()
}
