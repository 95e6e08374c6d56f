package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"hrsync/internal/metrics"
	"hrsync/internal/metrics/metricstest"
	"hrsync/internal/runner"
	"hrsync/model"
	"hrsync/store"
)

// waitUntil polls cond until it holds; it fails the test after a generous
// bound, so that a broken scheduler fails instead of hanging.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// harness is a daemon over a real runner and a SQLite store.
type harness struct {
	d      *Daemon
	st     *store.Store
	m      *metrics.Metrics
	addr   chan string
	cancel context.CancelFunc
	done   chan error
	ready  atomic.Bool
}

func start(t *testing.T, grace time.Duration, jobs map[string]runner.Func) *harness {
	t.Helper()
	st, err := store.Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "state.db"), store.Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	h := &harness{st: st, m: metrics.New(), addr: make(chan string, 1), done: make(chan error, 1)}
	h.ready.Store(true)
	reg := runner.NewRegistry()
	var scheds []Schedule
	for tenant, fn := range jobs {
		if err := reg.Register(model.JobPeople, tenant, fn); err != nil {
			t.Fatal(err)
		}
		scheds = append(scheds, Schedule{Key: runner.Key{Job: model.JobPeople, Tenant: tenant}, Spec: "* * * * * *"})
	}
	r, err := runner.New(runner.Options{Registry: reg, Recorder: st, Metrics: h.m})
	if err != nil {
		t.Fatal(err)
	}
	h.d, err = New(Options{
		Runner: r, Schedules: scheds, Listen: "127.0.0.1:0", Metrics: h.m, Grace: grace,
		Ready: func(context.Context) error {
			if !h.ready.Load() {
				return errors.New("store down")
			}
			return nil
		},
		OnListen: func(a net.Addr) { h.addr <- a.String() },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.done <- h.d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-h.done:
			_ = err // checked by the test that stopped it
		case <-time.After(time.Minute):
			t.Error("the daemon did not stop")
		}
	})
	return h
}

func (h *harness) get(t *testing.T, addr, path string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

func key(tenant string) runner.Key { return runner.Key{Job: model.JobPeople, Tenant: tenant} }

func TestDaemon(t *testing.T) {
	var (
		mu       sync.Mutex
		fastRuns []time.Time
		release  = make(chan struct{})
		slowIn   atomic.Int32
		slowMax  atomic.Int32
		slowRuns atomic.Int32
		panics   atomic.Int32
		afterPan atomic.Int32
	)
	h := start(t, time.Minute, map[string]runner.Func{
		"fast": func(context.Context) (runner.Result, error) {
			mu.Lock()
			fastRuns = append(fastRuns, time.Now())
			mu.Unlock()
			return runner.Result{}, nil
		},
		"slow": func(context.Context) (runner.Result, error) {
			n := slowIn.Add(1)
			defer slowIn.Add(-1)
			if n > slowMax.Load() {
				slowMax.Store(n)
			}
			if slowRuns.Add(1) == 1 {
				<-release
			}
			return runner.Result{}, nil
		},
		"panicky": func(context.Context) (runner.Result, error) {
			if panics.Add(1) == 1 {
				panic("first run explodes")
			}
			afterPan.Add(1)
			return runner.Result{}, nil
		},
	})
	addr := <-h.addr

	t.Run("health and readiness", func(t *testing.T) {
		waitUntil(t, "the scheduler running", func() bool { return h.get(t, addr, "/readyz") == http.StatusOK })
		if code := h.get(t, addr, "/healthz"); code != http.StatusOK {
			t.Errorf("/healthz %d", code)
		}
		h.ready.Store(false)
		if code := h.get(t, addr, "/readyz"); code != http.StatusServiceUnavailable {
			t.Errorf("/readyz with the store down: %d, want 503", code)
		}
		h.ready.Store(true)
	})
	t.Run("each job runs on its schedule", func(t *testing.T) {
		waitUntil(t, "three runs of the fast job", func() bool { mu.Lock(); defer mu.Unlock(); return len(fastRuns) >= 3 })
		mu.Lock()
		defer mu.Unlock()
		seen := map[int64]bool{}
		for _, at := range fastRuns {
			if seen[at.Unix()] {
				t.Errorf("two runs in one second of a one-second schedule: %v", fastRuns)
			}
			seen[at.Unix()] = true
		}
	})
	t.Run("a slow run is not overlapped", func(t *testing.T) {
		waitUntil(t, "two skipped ticks", func() bool { return h.d.Skipped(key("slow")) >= 2 })
		if slowRuns.Load() != 1 {
			t.Errorf("%d slow runs started while the first one was going", slowRuns.Load())
		}
		close(release)
		waitUntil(t, "a run after the slow one", func() bool { return slowRuns.Load() >= 2 })
		if slowMax.Load() != 1 {
			t.Errorf("%d slow runs at once", slowMax.Load())
		}
	})
	t.Run("a panic is recorded and the daemon goes on", func(t *testing.T) {
		waitUntil(t, "a run after the panic", func() bool { return afterPan.Load() >= 1 })
		runs, err := h.st.LastRuns(t.Context(), 100)
		if err != nil {
			t.Fatal(err)
		}
		failed := 0
		for _, r := range runs {
			if r.Tenant == "panicky" && r.Outcome == model.OutcomeFailed && strings.Contains(r.Error, "first run explodes") {
				failed++
			}
		}
		if failed != 1 {
			t.Errorf("%d failed runs recorded for the panic, want 1: %+v", failed, runs)
		}
	})
	t.Run("metrics", func(t *testing.T) {
		families, err := h.m.Registry().Gather()
		if err != nil {
			t.Fatal(err)
		}
		found := map[string]bool{}
		for _, f := range families {
			found[f.GetName()] = true
		}
		for _, name := range []string{"hrsync_runs_total", "hrsync_runs_skipped_total", "hrsync_run_panics_total"} {
			if !found[name] {
				t.Errorf("%s not exported", name)
			}
		}
		if code := h.get(t, addr, "/metrics"); code != http.StatusOK {
			t.Errorf("/metrics %d", code)
		}
	})
	t.Run("stops cleanly", func(t *testing.T) {
		h.cancel()
		if err := <-h.done; err != nil {
			t.Errorf("Run: %v", err)
		}
		h.done <- nil // for the cleanup
	})
}

func TestShutdown(t *testing.T) {
	t.Run("the run in flight goes on to its end and commits", func(t *testing.T) {
		started, finish := make(chan struct{}), make(chan struct{})
		var committed, cut atomic.Bool
		var once sync.Once
		h := start(t, time.Minute, map[string]runner.Func{
			"acme": func(ctx context.Context) (runner.Result, error) {
				once.Do(func() { close(started) })
				<-finish // the run's work, which the stop does not cut short
				cut.Store(ctx.Err() != nil)
				committed.Store(true)
				return runner.Result{}, ctx.Err()
			},
		})
		addr := <-h.addr
		<-started
		h.cancel()
		waitUntil(t, "the stop", func() bool { return h.get(t, addr, "/readyz") == http.StatusServiceUnavailable })
		close(finish)
		if err := <-h.done; err != nil {
			t.Errorf("Run: %v, want a clean stop", err)
		}
		h.done <- nil
		if !committed.Load() || cut.Load() {
			t.Errorf("committed %v, cut short %v: the run in flight must end on its own, uncancelled, before Run returns", committed.Load(), cut.Load())
		}
		if v, _ := metricstest.Value(t, h.m.Registry(), "hrsync_runs_total", map[string]string{"outcome": "ok"}); v != 1 {
			t.Errorf("%v runs ended ok, want 1", v)
		}
	})
	t.Run("a run still going at the cut is cut short and recorded interrupted", func(t *testing.T) {
		started := make(chan struct{})
		var once sync.Once
		h := start(t, 300*time.Millisecond, map[string]runner.Func{
			"acme": func(ctx context.Context) (runner.Result, error) {
				once.Do(func() { close(started) })
				<-ctx.Done() // a long run: only the cut ends it
				return runner.Result{Outcome: model.OutcomeFailed}, fmt.Errorf("stage order_line_items: %w", ctx.Err())
			},
		})
		<-h.addr
		<-started
		h.cancel()
		if err := <-h.done; err != nil {
			t.Errorf("Run: %v, want a clean stop", err)
		}
		h.done <- nil
		for outcome, want := range map[string]float64{"interrupted": 1, "failed": 0} {
			if v, _ := metricstest.Value(t, h.m.Registry(), "hrsync_runs_total", map[string]string{"outcome": outcome}); v != want {
				t.Errorf("%v runs ended %s, want %v", v, outcome, want)
			}
		}
	})
	t.Run("grace exceeded", func(t *testing.T) {
		started := make(chan struct{})
		stuck := make(chan struct{})
		t.Cleanup(func() { close(stuck) })
		var once sync.Once
		h := start(t, 50*time.Millisecond, map[string]runner.Func{
			"acme": func(context.Context) (runner.Result, error) {
				once.Do(func() { close(started) })
				<-stuck // ignores cancellation
				return runner.Result{}, nil
			},
		})
		<-h.addr
		<-started
		h.cancel()
		if err := <-h.done; !errors.Is(err, ErrGraceExceeded) {
			t.Errorf("Run: %v, want ErrGraceExceeded", err)
		}
		h.done <- nil
	})
}

func TestNew(t *testing.T) {
	r := runner.Key{Job: model.JobPeople, Tenant: "a"}
	reg := runner.NewRegistry()
	run, err := runner.New(runner.Options{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	for name, opts := range map[string]Options{
		"no runner":         {Schedules: []Schedule{{Key: r, Spec: "@hourly"}}},
		"no schedule":       {Runner: run},
		"bad spec":          {Runner: run, Schedules: []Schedule{{Key: r, Spec: "every minute"}}},
		"twice":             {Runner: run, Schedules: []Schedule{{Key: r, Spec: "@hourly"}, {Key: r, Spec: "@daily"}}},
		"triggerable twice": {Runner: run, Triggered: []runner.Key{r, r}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := New(opts); err == nil {
				t.Error("New accepted the options")
			}
		})
	}
	t.Run("only triggered", func(t *testing.T) {
		if _, err := New(Options{Runner: run, Triggered: []runner.Key{r}}); err != nil {
			t.Errorf("New: %v", err)
		}
	})
}
