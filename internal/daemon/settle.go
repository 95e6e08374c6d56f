package daemon

// Jobs run on demand, a settle delay after the last demand: the SCIM
// endpoint calls Trigger for a tenant's people job at every write it
// stores, and the job runs Settle after the last one, so that a burst of
// writes (an identity provider's first push of 200 users) gives one run.
//
//   - The run goes through the Runner's RunOnce, as a scheduled tick does
//     (lock, outcome, run record, metrics, notifications): there is no
//     second way of running a job.
//   - A run never overlaps another run of its job and tenant in this
//     process: when the delay ends while one goes (a scheduled tick, or the
//     previous triggered run), the triggered run waits another delay. A run
//     that finds the job's lock held by another process (a replica, an
//     operator's `hrsync run`) is tried again after another delay too, so a
//     write is never left to the next cron tick because of that.
//   - A write that comes during the run starts the delay again: the run may
//     have read the directory before the write, so another one follows.
//   - At start, every triggerable job is due once after the delay: writes
//     stored while no daemon ran, or whose delay a stop or a crash cut
//     short, are not left to the next cron tick.
//   - At shutdown the delays are dropped (the writes are stored: the next
//     start runs them) and the triggered runs in flight are waited for with
//     the scheduled ones.

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"hrsync/internal/runner"
	"hrsync/model"
)

// DefaultSettle is the delay between the last Trigger of a job and its run
// when Options.Settle is not set.
const DefaultSettle = time.Minute

// settler keeps the delays of the triggerable jobs.
type settler struct {
	mu      sync.Mutex
	timers  map[runner.Key]*time.Timer
	ctx     context.Context // the runs' context, set by start
	waits   context.Context // the waits' context (for a slot), set by start
	stopped bool
	runs    sync.WaitGroup // the triggered runs in flight
}

// Trigger asks for a run of k Options.Settle from now, or from the next
// Trigger of k if one comes before: each call starts the delay again. It
// returns at once. A key not in Options.Triggered is logged and ignored;
// so is a Trigger before Run or after the daemon began to stop.
func (d *Daemon) Trigger(k runner.Key) {
	if d.entry(k) == nil || !d.triggerable[k] {
		d.log.Warn("run asked for a job that cannot be triggered; ignored", zap.String("job", string(k.Job)), zap.String("tenant", k.Tenant))
		return
	}
	d.settle.mu.Lock()
	defer d.settle.mu.Unlock()
	if d.settle.stopped || d.settle.ctx == nil {
		return
	}
	d.arm(k)
}

// arm starts, or starts again, the delay of k. The caller holds settle.mu.
func (d *Daemon) arm(k runner.Key) {
	if t, ok := d.settle.timers[k]; ok {
		t.Reset(d.opts.Settle)
		return
	}
	d.log.Debug("run due after the settle delay", zap.String("job", string(k.Job)), zap.String("tenant", k.Tenant),
		zap.Duration("settle", d.opts.Settle))
	d.settle.timers[k] = time.AfterFunc(d.opts.Settle, func() { d.settled(k) })
}

// startSettle arms every triggerable job once, with waits as the context
// of their waits for a run slot and runs as that of their runs.
func (d *Daemon) startSettle(waits, runs context.Context) {
	d.settle.mu.Lock()
	defer d.settle.mu.Unlock()
	d.settle.ctx, d.settle.waits = runs, waits
	for _, k := range d.opts.Triggered {
		d.arm(k)
	}
}

// stopSettle drops every delay and returns a context done when the
// triggered runs in flight have ended.
func (d *Daemon) stopSettle() context.Context {
	d.settle.mu.Lock()
	d.settle.stopped = true
	for _, t := range d.settle.timers {
		t.Stop()
	}
	d.settle.mu.Unlock()
	done, cancel := context.WithCancel(context.Background())
	go func() {
		d.settle.runs.Wait()
		cancel()
	}()
	return done
}

// settled runs k, its delay over: at once when no run of k goes in this
// process, else after another delay; again after another delay when the
// run found k's lock held elsewhere.
func (d *Daemon) settled(k runner.Key) {
	d.settle.mu.Lock()
	if d.settle.stopped {
		d.settle.mu.Unlock()
		return
	}
	d.settle.runs.Add(1) // under mu, so that stopSettle's Wait sees it
	ctx, waits := d.settle.ctx, d.settle.waits
	d.settle.mu.Unlock()
	defer d.settle.runs.Done()

	log := d.log.With(zap.String("job", string(k.Job)), zap.String("tenant", k.Tenant))
	e := d.entry(k)
	if !e.active.CompareAndSwap(false, true) {
		log.Info("settle delay over while a run is going; the run follows it after another delay", zap.Duration("settle", d.opts.Settle))
		d.rearm(k)
		return
	}
	defer e.active.Store(false)
	if !d.acquire(waits, time.Time{}) {
		return // stopping
	}
	defer d.releaseSlot()
	if waits.Err() != nil {
		return // the stop began while the run waited for a slot
	}
	log.Info("settle delay over: running")
	if outcome := d.run(ctx, k); outcome == model.OutcomeLocked && ctx.Err() == nil {
		d.rearm(k)
	}
}

// rearm starts k's delay again unless the daemon is stopping.
func (d *Daemon) rearm(k runner.Key) {
	d.settle.mu.Lock()
	defer d.settle.mu.Unlock()
	if !d.settle.stopped {
		d.arm(k)
	}
}

// entry returns the entry of k, nil when k is neither scheduled nor
// triggerable.
func (d *Daemon) entry(k runner.Key) *entry {
	for i := range d.entries {
		if d.entries[i].sched.Key == k {
			return &d.entries[i]
		}
	}
	return nil
}
