package daemon

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/robfig/cron/v3"

	"hrsync/internal/runner"
	"hrsync/model"
	"hrsync/store"
)

// storeClaimer claims ticks in a real store, as cmd/hrsync's does.
type storeClaimer struct{ st *store.Store }

func (c storeClaimer) Claim(ctx context.Context, k runner.Key, at time.Time) (Claim, error) {
	t, err := c.st.ClaimTick(ctx, k.Job, k.Tenant, at)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// TestFleet runs two daemons, each with a store of its own on one SQLite
// file (as two processes would), on the same six keys every second, and
// checks that every tick that was claimed ran once, on the replica that
// claimed it, with no second of the run missed, and that both replicas ran
// ticks. A key whose run overruns its period delays its next tick instead
// of losing it.
func TestFleet(t *testing.T) {
	path := "sqlite:" + filepath.Join(t.TempDir(), "state.db")
	type call struct {
		key     runner.Key
		replica string
	}
	var (
		mu    sync.Mutex
		calls []call
		slow  sync.Once
	)
	tenants := []string{"t1", "t2", "t3", "t4", "t5", "slow"}
	stores := map[string]*store.Store{}
	var daemons []*Daemon
	for _, replica := range []string{"replica-a", "replica-b"} {
		st, err := store.Open(t.Context(), path, store.Options{Migrate: true, Replica: replica})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		stores[replica] = st
		reg := runner.NewRegistry()
		var scheds []Schedule
		for _, tenant := range tenants {
			k := runner.Key{Job: model.JobOrders, Tenant: tenant}
			if err := reg.Register(k.Job, tenant, func(context.Context) (runner.Result, error) {
				mu.Lock()
				calls = append(calls, call{k, replica})
				mu.Unlock()
				if tenant == "slow" {
					// Overruns one period: it ends 100 ms past the next
					// whole second (the next tick), however late it
					// started, which leaves that tick 900 ms to be
					// claimed before the one after supersedes it (a
					// fixed 1.3 s sleep left 700 ms less the start's
					// delay, which a loaded CI machine used up).
					slow.Do(func() { time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(1100 * time.Millisecond))) })
				}
				return runner.Result{}, nil
			}); err != nil {
				t.Fatal(err)
			}
			scheds = append(scheds, Schedule{Key: k, Spec: "* * * * * *"})
		}
		r, err := runner.New(runner.Options{Registry: reg})
		if err != nil {
			t.Fatal(err)
		}
		d, err := New(Options{Runner: r, Schedules: scheds, Claimer: storeClaimer{st}})
		if err != nil {
			t.Fatal(err)
		}
		daemons = append(daemons, d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, d := range daemons {
		wg.Add(1)
		go func() { defer wg.Done(); _ = d.Run(ctx) }()
	}
	time.Sleep(4500 * time.Millisecond)
	cancel()
	wg.Wait()

	ticks := map[runner.Key][]time.Time{}
	byReplica := map[string]int{}
	for _, tenant := range tenants {
		k := runner.Key{Job: model.JobOrders, Tenant: tenant}
		for _, tk := range readTicks(t, stores["replica-a"], k) {
			ticks[k] = append(ticks[k], tk.at)
			byReplica[tk.replica]++
			if tk.outcome != string(model.OutcomeOK) {
				t.Errorf("%s tick %s: outcome %q, want ok", k, tk.at, tk.outcome)
			}
		}
	}
	perKeyReplica := map[call]int{}
	for _, c := range calls {
		perKeyReplica[c]++
	}
	for _, tenant := range tenants {
		k := runner.Key{Job: model.JobOrders, Tenant: tenant}
		got := ticks[k]
		if len(got) < 3 {
			t.Fatalf("%s: %d ticks in 4.5s, want at least 3", k, len(got))
		}
		for i := 1; i < len(got); i++ {
			if got[i].Sub(got[i-1]) != time.Second {
				t.Errorf("%s: ticks %s then %s: a second was missed", k, got[i-1], got[i])
			}
		}
		ran := perKeyReplica[call{k, "replica-a"}] + perKeyReplica[call{k, "replica-b"}]
		if ran != len(got) {
			t.Errorf("%s: %d runs for %d claimed ticks", k, ran, len(got))
		}
	}
	for _, replica := range []string{"replica-a", "replica-b"} {
		n := 0
		for c, v := range perKeyReplica {
			if c.replica == replica {
				n += v
			}
		}
		if n != byReplica[replica] || n == 0 {
			t.Errorf("%s ran %d ticks and claimed %d; want the same, and some", replica, n, byReplica[replica])
		}
	}
}

type tickOf struct {
	at       time.Time
	replica  string
	outcome  string
	finished bool
}

// readTicks reads the claimed ticks of k in time order through the store's
// own reading of the table.
func readTicks(t *testing.T, st *store.Store, k runner.Key) []tickOf {
	t.Helper()
	rows, err := st.Ticks(t.Context(), k.Job, k.Tenant)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]tickOf, 0, len(rows))
	for _, r := range rows {
		out = append(out, tickOf{at: r.At, replica: r.Replica, outcome: string(r.Outcome), finished: !r.FinishedAt.IsZero()})
	}
	return out
}

func TestScheduledAt(t *testing.T) {
	p := cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		spec, now, want string
	}{
		{"* * * * * *", "2026-11-24T06:00:01.004Z", "2026-11-24T06:00:01Z"},
		{"* * * * * *", "2026-11-24T06:00:01.999Z", "2026-11-24T06:00:01Z"},
		{"*/15 * * * *", "2026-11-24T06:15:00.2Z", "2026-11-24T06:15:00Z"},
		{"0 6 * * *", "2026-11-24T06:00:00.05Z", "2026-11-24T06:00:00Z"},
	} {
		s, err := p.Parse(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := scheduledAt(s, at(c.now))
		if !ok || !got.Equal(at(c.want)) {
			t.Errorf("%s at %s: tick %s (%v), want %s", c.spec, c.now, got, ok, c.want)
		}
	}
	daily, _ := p.Parse("0 6 * * *")
	if got, ok := scheduledAt(daily, at("2026-11-24T06:02:00Z")); ok {
		t.Errorf("a daily tick two minutes late: %s; want none (past the look-back)", got)
	}
	// "@every 10s" ticks on multiples of 10s on every replica, whenever it started.
	every, _ := p.Parse("@every 10s")
	a, b := alignEvery(every), alignEvery(every)
	na, nb := a.Next(at("2026-11-24T06:00:03.5Z")), b.Next(at("2026-11-24T06:00:07Z"))
	if !na.Equal(at("2026-11-24T06:00:10Z")) || !nb.Equal(na) {
		t.Errorf("@every 10s aligned: next %s and %s, want both 06:00:10", na, nb)
	}
	if got, ok := scheduledAt(a, at("2026-11-24T06:00:10.02Z")); !ok || !got.Equal(at("2026-11-24T06:00:10Z")) {
		t.Errorf("@every 10s aligned: tick %s, want 06:00:10", got)
	}
}
