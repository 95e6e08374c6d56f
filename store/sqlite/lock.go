package sqlite

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/gofrs/flock"

	"hrsync/model"
)

// TryLock takes a file lock (flock) on "<database file>.<name>.lock"; the
// kernel frees it when the process dies. Within one process, two stores on
// one file exclude each other too.
func (c *conn) TryLock(_ context.Context, name string) (func() error, error) {
	fl := flock.New(c.LockPath(name))
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

// LockPath is "<database file>.<name>.lock", where every character of name
// but ASCII letters, digits, '-' and '_' becomes '_'.
func (c *conn) LockPath(name string) string {
	return c.path + "." + sanitizeLockName(name) + ".lock"
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
