package drivertest

import (
	"testing"

	"hrsync/model"
)

func testTryLock(t *testing.T, d Backend) {
	eachBackend(t, d, func(t *testing.T, b backend) {
		// Two Store values with pools of their own, as two processes have.
		a, other := b.open(t), b.open(t)

		t.Run("a held lock is refused at once to another holder", func(t *testing.T) {
			release, err := a.TryLock(ctx(t), "people/acme")
			must(t, err)
			_, err = other.TryLock(ctx(t), "people/acme")
			wantErr(t, err, model.ErrLocked)
			// The same store is refused too: a second run in one process.
			_, err = a.TryLock(ctx(t), "people/acme")
			wantErr(t, err, model.ErrLocked)
			must(t, release())
		})
		t.Run("a released lock can be taken again", func(t *testing.T) {
			release, err := other.TryLock(ctx(t), "people/acme")
			must(t, err)
			must(t, release())
			must(t, release()) // releasing twice is harmless
			again, err := a.TryLock(ctx(t), "people/acme")
			must(t, err)
			must(t, again())
		})
		t.Run("different names do not block each other", func(t *testing.T) {
			r1, err := a.TryLock(ctx(t), "people/acme")
			must(t, err)
			defer func() { must(t, r1()) }()
			r2, err := other.TryLock(ctx(t), "orders/acme")
			must(t, err)
			defer func() { must(t, r2()) }()
			r3, err := other.TryLock(ctx(t), "people/globex")
			must(t, err)
			must(t, r3())
		})
		t.Run("an empty name is refused", func(t *testing.T) {
			if _, err := a.TryLock(ctx(t), ""); err == nil {
				t.Fatal("empty name accepted")
			}
		})
	})
}
