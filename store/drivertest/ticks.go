package drivertest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"hrsync/model"
	"hrsync/store"
)

// replicaStore opens a Store on b's database as the replica named name:
// a pool of its own, as another process has.
func replicaStore(t *testing.T, b backend, name string) *store.Store {
	t.Helper()
	return Open(t, b.dsn, store.Options{Schema: b.schema, Migrate: true, Replica: name})
}

// tickRow is a ticks row as stored.
type tickRow struct {
	replica  string
	finished bool
	outcome  string
}

func readTicks(t *testing.T, b backend, tenant string) map[time.Time]tickRow {
	t.Helper()
	db := b.raw(t)
	q := b.q(`SELECT tick_at, replica, finished_at IS NOT NULL, COALESCE(outcome, '') FROM ticks WHERE tenant = ?`)
	rows, err := db.QueryContext(ctx(t), q, tenant)
	must(t, err)
	defer func() { _ = rows.Close() }()
	out := map[time.Time]tickRow{}
	for rows.Next() {
		var at time.Time
		var r tickRow
		must(t, rows.Scan(&at, &r.replica, &r.finished, &r.outcome))
		out[at.UTC()] = r
	}
	must(t, rows.Err())
	return out
}

func testClaimTick(t *testing.T, d Backend) {
	eachBackend(t, d, func(t *testing.T, b backend) {
		r1, r2 := replicaStore(t, b, "replica-1"), replicaStore(t, b, "replica-2")
		at := time.Date(2026, 11, 24, 6, 0, 1, 0, time.UTC)

		testClaimTickRace(t, b, r1, r2, at)
		testClaimTickApart(t, b, r1, r2, at)
		testClaimTickAbandonedAndRetention(t, b, r1, r2, at)
	})
}

func testClaimTickAbandonedAndRetention(t *testing.T, b backend, r1, r2 *store.Store, at time.Time) {
	t.Run("an abandoned tick can be claimed by another replica", func(t *testing.T) {
		tk, err := r1.ClaimTick(ctx(t), model.JobPeople, "abandoned", at)
		must(t, err)
		must(t, tk.Abandon(ctx(t)))
		if got := readTicks(t, b, "abandoned"); len(got) != 0 {
			t.Fatalf("ticks %+v after abandon, want none", got)
		}
		again, err := r2.ClaimTick(ctx(t), model.JobPeople, "abandoned", at)
		must(t, err)
		must(t, again.Finish(ctx(t), model.OutcomeOK))
		if got := readTicks(t, b, "abandoned"); got[at].replica != "replica-2" {
			t.Errorf("ticks %+v, want the tick run by replica-2", got)
		}
	})

	t.Run("rows older than the retention are deleted", func(t *testing.T) {
		old, err := r1.ClaimTick(ctx(t), model.JobOrders, "gc", at.Add(-store.TickRetention-time.Second))
		must(t, err)
		must(t, old.Finish(ctx(t), model.OutcomeOK))
		kept, err := r1.ClaimTick(ctx(t), model.JobOrders, "gc", at.Add(-store.TickRetention+time.Second))
		must(t, err)
		must(t, kept.Finish(ctx(t), model.OutcomeOK))
		if n := len(readTicks(t, b, "gc")); n != 2 {
			t.Fatalf("%d ticks before a newer one finished, want 2", n)
		}
		now, err := r2.ClaimTick(ctx(t), model.JobOrders, "gc", at)
		must(t, err)
		must(t, now.Finish(ctx(t), model.OutcomeOK))
		got := readTicks(t, b, "gc")
		if _, ok := got[at.Add(-store.TickRetention-time.Second)]; ok || len(got) != 2 {
			t.Errorf("ticks %+v: want the one older than the retention deleted, two kept", got)
		}
	})

	t.Run("runs carry the replica that recorded them", func(t *testing.T) {
		must(t, r2.StartRun(ctx(t), store.Run{ID: "run-of-replica-2", Job: model.JobOrders, Tenant: "runs"}))
		runs, err := r1.LastRuns(ctx(t), 50)
		must(t, err)
		found := false
		for _, r := range runs {
			if r.ID == "run-of-replica-2" {
				found = r.Replica == "replica-2"
			}
		}
		if !found {
			t.Errorf("run-of-replica-2 not listed with replica-2: %+v", runs)
		}
	})
}

func testClaimTickApart(t *testing.T, b backend, r1, r2 *store.Store, at time.Time) {
	t.Run("ticks of other jobs and tenants are claimed apart", func(t *testing.T) {
		a, err := r1.ClaimTick(ctx(t), model.JobPeople, "apart", at)
		must(t, err)
		c, err := r2.ClaimTick(ctx(t), model.JobOrders, "apart", at)
		must(t, err)
		d, err := r2.ClaimTick(ctx(t), model.JobPeople, "apart-too", at)
		must(t, err)
		for _, tk := range []*store.Tick{a, c, d} {
			must(t, tk.Finish(ctx(t), model.OutcomeAttention))
		}
	})

	t.Run("a tick whose run failed is not run again; the next tick is free", func(t *testing.T) {
		tk, err := r1.ClaimTick(ctx(t), model.JobPeople, "dies", at)
		must(t, err)
		must(t, tk.Finish(ctx(t), model.OutcomeFailed))
		_, err = r2.ClaimTick(ctx(t), model.JobPeople, "dies", at)
		wantErr(t, err, store.ErrTickTaken)
		next, err := r2.ClaimTick(ctx(t), model.JobPeople, "dies", at.Add(time.Second))
		must(t, err)
		must(t, next.Finish(ctx(t), model.OutcomeOK))
		got := readTicks(t, b, "dies")
		if got[at].replica != "replica-1" || got[at.Add(time.Second)].replica != "replica-2" {
			t.Errorf("ticks %+v: want the first by replica-1, the next by replica-2", got)
		}
	})
}

func testClaimTickRace(t *testing.T, b backend, r1, r2 *store.Store, at time.Time) {
	t.Run("of claimers racing for one tick, one wins", func(t *testing.T) {
		var (
			mu     sync.Mutex
			wins   []*store.Tick
			others int
			wg     sync.WaitGroup
		)
		for i := range 8 {
			s := r1
			if i%2 == 1 {
				s = r2
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				tk, err := s.ClaimTick(ctx(t), model.JobOrders, "race", at)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					wins = append(wins, tk)
				case errors.Is(err, model.ErrLocked), errors.Is(err, store.ErrTickTaken):
					others++
				default:
					t.Errorf("claim: %v", err)
				}
			}()
		}
		wg.Wait()
		if len(wins) != 1 || others != 7 {
			t.Fatalf("%d claims won and %d refused, want 1 and 7", len(wins), others)
		}
		// While the winner runs the tick, nobody else claims it or the next one.
		_, err := r2.ClaimTick(ctx(t), model.JobOrders, "race", at.Add(time.Second))
		wantErr(t, err, model.ErrLocked)
		must(t, wins[0].Finish(ctx(t), model.OutcomeOK))
		// Finished, the tick is taken for every replica, the winner too.
		for _, s := range []*store.Store{r1, r2} {
			_, err := s.ClaimTick(ctx(t), model.JobOrders, "race", at)
			wantErr(t, err, store.ErrTickTaken)
		}
		got := readTicks(t, b, "race")
		row, ok := got[at]
		if len(got) != 1 || !ok || !row.finished || row.outcome != "ok" || (row.replica != "replica-1" && row.replica != "replica-2") {
			t.Errorf("ticks %+v, want one finished ok tick at %s by a replica", got, at)
		}
	})
}
