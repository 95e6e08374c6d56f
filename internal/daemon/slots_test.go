package daemon

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"hrsync/internal/runner"
	"hrsync/model"
)

// TestMaxRuns schedules eight slow jobs every second on a daemon allowed
// two runs at once: never more than two run together, and the slots are
// used (two do run together).
func TestMaxRuns(t *testing.T) {
	var going, most, runs atomic.Int32
	var mu sync.Mutex
	reg := runner.NewRegistry()
	var scheds []Schedule
	for i := range 8 {
		tenant := fmt.Sprintf("t%d", i)
		if err := reg.Register(model.JobOrders, tenant, func(context.Context) (runner.Result, error) {
			n := going.Add(1)
			defer going.Add(-1)
			mu.Lock()
			if n > most.Load() {
				most.Store(n)
			}
			mu.Unlock()
			runs.Add(1)
			time.Sleep(300 * time.Millisecond)
			return runner.Result{}, nil
		}); err != nil {
			t.Fatal(err)
		}
		scheds = append(scheds, Schedule{Key: runner.Key{Job: model.JobOrders, Tenant: tenant}, Spec: "* * * * * *"})
	}
	r, err := runner.New(runner.Options{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(Options{Runner: r, Schedules: scheds, MaxRuns: 2})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	waitUntil(t, "six runs", func() bool { return runs.Load() >= 6 })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	if m := most.Load(); m != 2 {
		t.Errorf("at most %d runs went at once, want 2 (MaxRuns)", m)
	}
}
