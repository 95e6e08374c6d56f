package daemon

// A fleet: several daemons (replicas) on one PostgreSQL state share the
// tenants. Every replica schedules every job of every tenant; at a tick,
// each one tries to claim it, and the one that claims it runs it:
//
//   - The tick is named by the schedule's time (the latest time of the
//     schedule not after the replica's clock), not by the clock reading, so
//     that replicas whose clocks differ by less than the period name the
//     same tick. "@every" schedules are aligned on multiples of their
//     interval for the same reason.
//   - The claim (Claimer, store.ClaimTick) takes the tick's lock and
//     inserts the tick's row; the row's key lets one replica win. The lock
//     is held for the run, so a tick that comes while the previous run of
//     its job and tenant still goes (here or on another replica) waits.
//   - Before claiming, a replica waits a random moment (claimJitter), then
//     claimPerRun for each run it has in flight, then for a free run slot
//     (Options.MaxRuns): idle replicas claim first, a full one does not
//     claim at all, and the work spreads.
//   - A claim refused because the lock is held is tried again every
//     claimRetry until the next tick of the schedule, which supersedes it:
//     a run that overruns its period delays the next tick instead of losing
//     it, and a backlog never builds.
//   - A replica told to stop just as it claims a tick gives it back (the
//     row is deleted) for a replica still trying to claim it.
//   - A replica that dies during a run loses that tick (its row stays, with
//     no outcome); the lock goes with its database session, so the next
//     tick runs on another replica, whose job closes the interrupted run.

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/robfig/cron/v3"
	"go.uber.org/zap"

	"hrsync/internal/runner"
	"hrsync/model"
	"hrsync/store"
)

// Claim is a tick a replica claimed; Finish records its outcome and lets
// the job's next tick be claimed; Abandon gives it back unrun.
type Claim interface {
	Finish(ctx context.Context, outcome model.RunOutcome) error
	Abandon(ctx context.Context) error
}

// Claimer claims the tick at of k for this replica. It returns an error
// wrapping model.ErrLocked while another holder runs k or claims the tick,
// and store.ErrTickTaken when the tick was claimed already.
type Claimer interface {
	Claim(ctx context.Context, k runner.Key, at time.Time) (Claim, error)
}

const (
	// claimJitter bounds the random wait before a claim, so that replicas
	// woken by one tick claim in a random order.
	claimJitter = 50 * time.Millisecond
	// claimPerRun is the extra wait per run in flight on the replica.
	claimPerRun = 10 * time.Millisecond
	// claimMaxWait caps the wait before a claim.
	claimMaxWait = 300 * time.Millisecond
	// claimRetry is how often a claim refused by a held lock is tried again.
	claimRetry = 50 * time.Millisecond
	// tickLookback bounds how far back the time of a tick is looked for:
	// cron starts a tick within milliseconds of its time.
	tickLookback = time.Minute
)

// fleetTick claims the tick that woke e and runs it when the claim wins:
// it waits and claims under ctx, and runs under runs.
func (d *Daemon) fleetTick(ctx, runs context.Context, e *entry) {
	k := e.sched.Key
	log := d.log.With(zap.String("job", string(k.Job)), zap.String("tenant", k.Tenant))
	at, ok := scheduledAt(e.cron, d.now().In(d.opts.Location))
	if !ok {
		log.Warn("tick skipped: no scheduled time in the last minute (the process was paused?)")
		return
	}
	next := e.cron.Next(at) // the tick that supersedes this one
	log = log.With(zap.Time("tick", at))
	if !sleep(ctx, d.claimWait()) {
		return
	}
	for {
		if !d.acquire(ctx, next) {
			if ctx.Err() == nil {
				d.skip(e, log, "tick skipped: every run slot of this replica was busy until the next tick")
			}
			return
		}
		claim, err := d.opts.Claimer.Claim(ctx, k, at)
		switch {
		case err == nil && ctx.Err() != nil:
			// Told to stop while claiming: another replica may still run it.
			if err := claim.Abandon(ctx); err != nil {
				log.Warn("give back the tick", zap.Error(err))
			}
			d.releaseSlot()
			return
		case err == nil:
			outcome := d.run(runs, k)
			if err := claim.Finish(runs, outcome); err != nil {
				log.Error("record the end of the tick", zap.Error(err))
			}
			d.releaseSlot()
			return
		case errors.Is(err, store.ErrTickTaken):
			d.releaseSlot()
			log.Debug("tick run by another replica")
			return
		case !errors.Is(err, model.ErrLocked):
			log.Warn("claim the tick; trying again", zap.Error(err))
		}
		d.releaseSlot()
		if !d.now().Add(claimRetry).Before(next) {
			d.skip(e, log, "tick skipped: the previous run was still going at the next tick")
			return
		}
		if !sleep(ctx, claimRetry) {
			return
		}
	}
}

// skip counts and logs a tick this replica gave up.
func (d *Daemon) skip(e *entry, log *zap.Logger, msg string) {
	e.skipped.Add(1)
	if d.opts.Metrics != nil {
		d.opts.Metrics.RunSkipped(string(e.sched.Key.Job), e.sched.Key.Tenant)
	}
	log.Warn(msg)
}

// claimWait is how long this replica waits before it claims a tick: a
// random moment, then more for each run it has in flight.
func (d *Daemon) claimWait() time.Duration {
	w := rand.N(claimJitter) + time.Duration(d.inFlight.Load())*claimPerRun //nolint:gosec // spreading claims needs no secure randomness
	return min(w, claimMaxWait)
}

// sleep waits for d or until ctx is done; it tells whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// scheduledAt returns the latest time of s not after now, looking back at
// most tickLookback; false when there is none.
func scheduledAt(s cron.Schedule, now time.Time) (time.Time, bool) {
	var last time.Time
	for t := s.Next(now.Add(-tickLookback)); !t.IsZero() && !t.After(now); t = s.Next(t) {
		last = t
	}
	return last, !last.IsZero()
}

// alignEvery turns an "@every" schedule, whose ticks count from the start
// of the process, into one whose ticks fall on multiples of its interval,
// the same on every replica; other schedules are returned as they are.
func alignEvery(s cron.Schedule) cron.Schedule {
	if cd, ok := s.(cron.ConstantDelaySchedule); ok {
		return alignedEvery{every: cd.Delay}
	}
	return s
}

// alignedEvery ticks at every multiple of its interval (since the zero time).
type alignedEvery struct{ every time.Duration }

// Next returns the first multiple of the interval after t.
func (a alignedEvery) Next(t time.Time) time.Time {
	return t.Truncate(a.every).Add(a.every)
}
