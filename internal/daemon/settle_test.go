package daemon

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"hrsync/internal/runner"
	"hrsync/model"
)

// settleWorld is a daemon whose one job, acme's people job, is only
// triggered, run by a real runner, inside a synctest bubble: time is the
// bubble's fake clock, so every time below is exact.
type settleWorld struct {
	d      *Daemon
	mu     sync.Mutex
	starts []time.Time // when each run of the job started
	cancel context.CancelFunc
	done   chan error
}

const testSettle = time.Minute

// startSettle starts the daemon in the bubble; job is the job's body,
// given the number of its run (1 for the first).
func startSettle(t *testing.T, job func(ctx context.Context, n int) error) *settleWorld {
	t.Helper()
	w := &settleWorld{done: make(chan error, 1)}
	reg := runner.NewRegistry()
	err := reg.Register(model.JobPeople, "acme", func(ctx context.Context) (runner.Result, error) {
		w.mu.Lock()
		w.starts = append(w.starts, time.Now())
		n := len(w.starts)
		w.mu.Unlock()
		return runner.Result{}, job(ctx, n)
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.New(runner.Options{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	w.d, err = New(Options{Runner: r, Triggered: []runner.Key{key("acme")}, Settle: testSettle})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	go func() { w.done <- w.d.Run(ctx) }()
	synctest.Wait()
	return w
}

// runs returns how long after t0 each run started.
func (w *settleWorld) runs(t0 time.Time) []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]time.Duration, 0, len(w.starts))
	for _, at := range w.starts {
		out = append(out, at.Sub(t0))
	}
	return out
}

// stop stops the daemon and checks that it stopped cleanly.
func (w *settleWorld) stop(t *testing.T) {
	t.Helper()
	w.cancel()
	if err := <-w.done; err != nil {
		t.Errorf("Run: %v", err)
	}
}

// after sleeps d of the bubble's clock and waits until every goroutine of
// the bubble is blocked: the runs due by then have ended.
func after(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

func wantRuns(t *testing.T, w *settleWorld, t0 time.Time, want ...time.Duration) {
	t.Helper()
	got := w.runs(t0)
	if !slices.Equal(got, want) {
		t.Errorf("runs started at %v after t0, want %v", got, want)
	}
}

func TestSettle(t *testing.T) {
	noop := func(context.Context, int) error { return nil }
	t.Run("due once at start", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			t0 := time.Now()
			w := startSettle(t, noop)
			after(testSettle - time.Second)
			wantRuns(t, w, t0)
			after(time.Hour)
			wantRuns(t, w, t0, testSettle)
			w.stop(t)
		})
	})
	t.Run("a burst of 200 writes gives one run, a settle delay after the last", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			t0 := time.Now()
			w := startSettle(t, noop)
			after(time.Hour) // the run at start
			for range 200 {
				w.d.Trigger(key("acme"))
				after(time.Second)
			}
			last := time.Hour + 199*time.Second
			after(testSettle - 2*time.Second) // one second before the delay ends
			wantRuns(t, w, t0, testSettle)
			after(time.Hour)
			wantRuns(t, w, t0, testSettle, last+testSettle)
			w.stop(t)
		})
	})
	t.Run("a write during a run: another run follows that one", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			release := make(chan struct{})
			t0 := time.Now()
			w := startSettle(t, func(_ context.Context, n int) error {
				if n == 1 {
					<-release // the first run lasts until released
				}
				return nil
			})
			after(testSettle + 10*time.Second) // the run at start goes on
			w.d.Trigger(key("acme"))           // a write it may not have read
			after(90 * time.Second)            // the delay ended at 2m10s, during the run: no run at once
			wantRuns(t, w, t0, testSettle)
			close(release) // the first run ends at 2m40s
			synctest.Wait()
			// The delay that found the run going began again at 2m10s.
			after(time.Hour)
			wantRuns(t, w, t0, testSettle, testSettle+10*time.Second+2*testSettle)
			w.stop(t)
		})
	})
	t.Run("a lock held elsewhere: tried again after another delay", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			t0 := time.Now()
			w := startSettle(t, func(_ context.Context, n int) error {
				if n <= 2 {
					return model.ErrLocked // a replica or an operator's run holds it
				}
				return nil
			})
			after(time.Hour)
			wantRuns(t, w, t0, testSettle, 2*testSettle, 3*testSettle)
			w.stop(t)
		})
	})
	t.Run("a failed run is left to the schedule", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			t0 := time.Now()
			w := startSettle(t, func(context.Context, int) error { return errors.New("platform down") })
			after(time.Hour)
			wantRuns(t, w, t0, testSettle)
			w.stop(t)
		})
	})
	t.Run("stopping drops the delays and ignores later writes", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			t0 := time.Now()
			w := startSettle(t, noop)
			w.d.Trigger(key("acme"))
			after(testSettle / 2)
			w.stop(t)
			w.d.Trigger(key("acme"))
			after(time.Hour)
			wantRuns(t, w, t0)
		})
	})
	t.Run("a triggered run in flight at shutdown ends before Run returns", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var committed atomic.Bool
			w := startSettle(t, func(ctx context.Context, _ int) error {
				<-ctx.Done()
				time.Sleep(5 * time.Second) // the batch in flight ends (within the grace), then the outcome is committed
				committed.Store(true)
				return ctx.Err()
			})
			after(testSettle) // the run at start is going
			w.stop(t)
			if !committed.Load() {
				t.Error("Run returned before the triggered run in flight ended")
			}
		})
	})
	t.Run("a job that is not triggerable is ignored", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			t0 := time.Now()
			w := startSettle(t, noop)
			after(time.Hour)
			w.d.Trigger(key("globex"))
			w.d.Trigger(runner.Key{Job: model.JobOrders, Tenant: "acme"})
			after(time.Hour)
			wantRuns(t, w, t0, testSettle)
			w.stop(t)
		})
	})
}
