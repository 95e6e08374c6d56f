// Package daemon runs hrsync's jobs on their cron schedules (robfig/cron/v3)
// and serves /healthz, /readyz and /metrics.
//
// Each job of each tenant has its own schedule, read in the configured time
// zone. A job never overlaps itself: a tick that comes while the previous
// run of the same job and tenant is still going is skipped, logged and
// counted; across processes and replicas the store lock the job takes keeps
// runs apart. At most Options.MaxRuns runs go at once. With a Claimer
// (PostgreSQL state), the daemon is one replica of a fleet: each tick is
// claimed by one replica, which runs it (fleet.go). A panic in a job is
// recovered by the runner and recorded as a failed run; the daemon goes on.
//
// Jobs may also be triggered (Trigger; settle.go): the SCIM endpoint, one
// of Options.Servers, asks for a tenant's people job at each write, and the
// job runs a settle delay after the last one, through the same RunOnce.
//
// When the context given to Run is cancelled (SIGTERM, SIGINT), the daemon
// drains: no new run starts (no tick is claimed or waits on, the settle
// delays are dropped), and the runs in flight go on to their end and
// commit, for the first part of a grace period (Cut). Runs still going
// then are cut short: their context is cancelled, each stops after the
// call it is making and records itself as interrupted, in the rest of the
// grace period. Then the HTTP servers stop and Run returns.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/robfig/cron/v3"
	"go.uber.org/zap"

	"hrsync/config"
	"hrsync/internal/metrics"
	"hrsync/internal/runner"
	"hrsync/model"
)

// Runner runs one cycle of a job; *runner.Runner is one.
type Runner interface {
	RunOnce(ctx context.Context, k runner.Key) (runner.Result, error)
}

// Schedule is the cron spec of one job of one tenant.
type Schedule struct {
	Key  runner.Key
	Spec string
}

// DefaultGrace is how long a stopping daemon waits for runs in flight:
// daemon.grace's default, under Kubernetes' default
// terminationGracePeriodSeconds (30 s) with room for the process to exit.
const DefaultGrace = config.DefaultDaemonGrace

// maxCommitShare bounds the part of the grace period kept for runs cut
// short to commit (Cut).
const maxCommitShare = 15 * time.Second

// Cut is how long after a stop begins the runs still in flight are cut
// short: two thirds of grace, and all but 15 s of a grace longer than 45 s.
// The rest of grace is theirs to commit as interrupted.
func Cut(grace time.Duration) time.Duration {
	return grace - min(grace/3, maxCommitShare)
}

// DefaultMaxRuns is how many runs a daemon has going at once by default:
// two connections each, and one more, stay within the PostgreSQL store's
// pool of 16.
const DefaultMaxRuns = 6

// Options configure a Daemon.
type Options struct {
	// Runner runs the jobs; required.
	Runner Runner
	// Schedules are the jobs to run and when; at least one.
	Schedules []Schedule
	// Parser reads the specs; the zero value means five fields with an
	// optional seconds field first, and descriptors (@hourly, @every 10s).
	Parser cron.Parser
	// Location is the time zone the specs are read in; nil means UTC.
	Location *time.Location
	// Listen is the host:port of /healthz, /readyz and /metrics; "" serves
	// nothing.
	Listen string
	// Ready checks what the daemon needs (the store); /readyz fails while
	// it returns an error. nil checks nothing.
	Ready func(ctx context.Context) error
	// Metrics are served on /metrics and count skipped ticks; nil serves
	// an empty 404.
	Metrics *metrics.Metrics
	// Grace bounds the wait for runs in flight at shutdown (default
	// DefaultGrace); they are cut short after Cut(Grace).
	Grace time.Duration
	// Logger logs the schedule and every tick; nil logs nothing.
	Logger *zap.Logger
	// OnListen, when not nil, is told the address the HTTP server listens
	// on (useful with port 0).
	OnListen func(addr net.Addr)
	// MaxRuns bounds the runs going at once (default DefaultMaxRuns); a
	// tick waits for a free slot. On PostgreSQL each run holds two
	// connections of the store's pool (the tick's lock and the job's) while
	// it needs a third for its queries: the bound keeps the pool from
	// running dry with many tenants.
	MaxRuns int
	// Claimer, when not nil, makes the daemon one replica of a fleet that
	// shares one state: each tick is claimed before it runs, so that one
	// replica runs it (fleet.go). nil runs every tick here (one replica).
	// Triggered runs are not claimed: the job's own lock keeps replicas
	// apart, and a run that finds it held is tried again (settle.go).
	Claimer Claimer
	// Servers are more HTTP endpoints (the SCIM endpoint), each served on a
	// listener of its own.
	Servers []Server
	// Triggered are the jobs Trigger may run, scheduled or not (the people
	// job of each tenant fed by SCIM).
	Triggered []runner.Key
	// Settle is how long after its last Trigger a job runs (default
	// DefaultSettle).
	Settle time.Duration
}

// Daemon runs jobs on schedules.
type Daemon struct {
	opts    Options
	log     *zap.Logger
	entries []entry
	running atomic.Bool // the scheduler is started and not stopping
	// inFlight counts the runs going in this process; a fleet replica
	// waits longer to claim a tick the more it runs (fleet.go).
	inFlight atomic.Int64
	// slots holds a token per run going (Options.MaxRuns).
	slots chan struct{}
	now   func() time.Time
	// triggerable holds Options.Triggered; settle keeps their delays.
	triggerable map[runner.Key]bool
	settle      settler
}

type entry struct {
	sched   Schedule
	cron    cron.Schedule // nil for a job that is only triggered
	active  atomic.Bool   // a run of this entry is going
	skipped atomic.Int64
}

// ErrGraceExceeded is returned by Run when runs in flight did not end
// within the grace period.
var ErrGraceExceeded = errors.New("runs still in flight after the grace period")

// New checks the options and parses every schedule.
func New(opts Options) (*Daemon, error) {
	if opts.Runner == nil {
		return nil, errors.New("daemon: runner is required")
	}
	if len(opts.Schedules) == 0 && len(opts.Triggered) == 0 {
		return nil, errors.New("daemon: no job is scheduled")
	}
	if opts.Parser == (cron.Parser{}) {
		opts.Parser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)
	}
	if opts.Location == nil {
		opts.Location = time.UTC
	}
	if opts.Grace <= 0 {
		opts.Grace = DefaultGrace
	}
	if opts.MaxRuns <= 0 {
		opts.MaxRuns = DefaultMaxRuns
	}
	if opts.Settle <= 0 {
		opts.Settle = DefaultSettle
	}
	log := opts.Logger
	if log == nil {
		log = zap.NewNop()
	}
	d := &Daemon{opts: opts, log: log, entries: make([]entry, len(opts.Schedules)), now: time.Now,
		slots: make(chan struct{}, opts.MaxRuns), triggerable: map[runner.Key]bool{}}
	d.settle.timers = map[runner.Key]*time.Timer{}
	seen := map[runner.Key]bool{}
	for i, s := range opts.Schedules {
		if seen[s.Key] {
			return nil, fmt.Errorf("daemon: %s is scheduled twice", s.Key)
		}
		seen[s.Key] = true
		cs, err := opts.Parser.Parse(s.Spec)
		if err != nil {
			return nil, fmt.Errorf("daemon: schedule of %s %q: %w", s.Key, s.Spec, err)
		}
		if opts.Claimer != nil {
			cs = alignEvery(cs)
		}
		d.entries[i].sched, d.entries[i].cron = s, cs
	}
	if err := d.addTriggered(seen); err != nil {
		return nil, err
	}
	return d, nil
}

// addTriggered adds an entry for each triggerable job that has no schedule
// (seen holds the scheduled ones).
func (d *Daemon) addTriggered(seen map[runner.Key]bool) error {
	for _, k := range d.opts.Triggered {
		if d.triggerable[k] {
			return fmt.Errorf("daemon: %s is triggerable twice", k)
		}
		d.triggerable[k] = true
		if !seen[k] {
			d.entries = append(d.entries, entry{sched: Schedule{Key: k}})
		}
	}
	return nil
}

// Run schedules the jobs and serves HTTP until ctx is cancelled, then shuts
// down gracefully. It returns nil after a clean shutdown, ErrGraceExceeded
// when runs were still going after the grace period, or the error that
// stopped an HTTP server.
func (d *Daemon) Run(ctx context.Context) error {
	servers, err := d.listen(ctx)
	if err != nil {
		return err
	}
	srvErr := serve(servers)
	// Ticks and settle delays wait for a slot and claim under ticks,
	// cancelled as the stop begins: no new run starts. Runs get a context
	// of their own, runs, cancelled only when the stop cuts them short.
	ticks, stopTicks := context.WithCancel(context.WithoutCancel(ctx))
	defer stopTicks()
	runs, cancelRuns := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRuns()
	c := d.startCron(ticks, runs)
	d.startSettle(ticks, runs)
	d.running.Store(true)
	// Announced only now, so that whoever waits for the address finds the
	// scheduler running (/readyz answers 200).
	d.announce(servers)

	select {
	case <-ctx.Done():
		d.log.Info("stopping: no new run starts; runs in flight go on to their end and commit",
			zap.Duration("grace", d.opts.Grace), zap.Duration("cutAfter", Cut(d.opts.Grace)))
	case se := <-srvErr:
		se.s.stopped = true
		err = se.err
		d.log.Error("http server stopped; stopping", zap.Error(err))
	}
	if werr := d.drain(c, stopTicks, cancelRuns); werr != nil && err == nil { //nolint:contextcheck // drain bounds its wait by the grace period, not by a context
		err = werr
	}
	if serr := shutdown(ctx, servers); serr != nil && err == nil {
		err = serr
	}
	if err == nil {
		d.log.Info("stopped cleanly")
	}
	return err
}

// drain stops the daemon's runs: no tick or settle delay waits for a slot
// or claims any more (stopTicks), the scheduler stops, the settle delays
// are dropped, and the runs in flight go on until Cut(Grace), when
// cancelRuns cuts them short; it waits for them up to the grace period
// (wait).
func (d *Daemon) drain(c *cron.Cron, stopTicks, cancelRuns context.CancelFunc) error {
	stopTicks()
	d.running.Store(false)
	stopped := c.Stop() // no new tick from here on; done when the runs in flight end
	settled := d.stopSettle()
	cut := time.AfterFunc(Cut(d.opts.Grace), func() {
		d.log.Warn("runs still in flight are cut short: each stops after the call it is making and records itself as interrupted",
			zap.Int64("runs", d.inFlight.Load()))
		cancelRuns()
	})
	defer cut.Stop()
	return d.wait(stopped, settled)
}

// startCron schedules every entry that has a schedule and starts the
// scheduler; its ticks wait and claim with ticks and run with runs.
func (d *Daemon) startCron(ticks, runs context.Context) *cron.Cron {
	c := cron.New(cron.WithLocation(d.opts.Location), cron.WithParser(d.opts.Parser), cron.WithLogger(cronLogger{d.log}))
	for i := range d.entries {
		e := &d.entries[i]
		if e.cron == nil {
			continue
		}
		c.Schedule(e.cron, cron.FuncJob(func() { d.tick(ticks, runs, e) }))
		d.log.Info("job scheduled", zap.String("job", string(e.sched.Key.Job)), zap.String("tenant", e.sched.Key.Tenant),
			zap.String("schedule", e.sched.Spec), zap.Time("next", e.cron.Next(time.Now().In(d.opts.Location))))
	}
	for _, k := range d.opts.Triggered {
		d.log.Info("job triggered by writes", zap.String("job", string(k.Job)), zap.String("tenant", k.Tenant),
			zap.Duration("settle", d.opts.Settle))
	}
	c.Start()
	return c
}

// wait waits for the runs in flight (scheduled is done when the scheduled
// ones end, triggered when the triggered ones do), up to the grace period.
func (d *Daemon) wait(scheduled, triggered context.Context) error {
	timer := time.NewTimer(d.opts.Grace)
	defer timer.Stop()
	select {
	case <-scheduled.Done():
	case <-timer.C:
		return d.graceExceeded()
	}
	select {
	case <-triggered.Done():
		return nil
	case <-timer.C:
		return d.graceExceeded()
	}
}

// graceExceeded logs and returns ErrGraceExceeded.
func (d *Daemon) graceExceeded() error {
	d.log.Error("runs still in flight after the grace period; exiting anyway (the next run holds their unknown outcomes)",
		zap.Duration("grace", d.opts.Grace))
	return ErrGraceExceeded
}

// tick runs one scheduled cycle of e, unless the previous one still runs.
// cron calls it on a goroutine of its own. It waits for a slot (and
// claims) under ticks, and runs under runs (Run).
func (d *Daemon) tick(ticks, runs context.Context, e *entry) {
	k := e.sched.Key
	if ticks.Err() != nil {
		return
	}
	if d.opts.Claimer != nil {
		d.fleetTick(ticks, runs, e)
		return
	}
	if !e.active.CompareAndSwap(false, true) {
		e.skipped.Add(1)
		if d.opts.Metrics != nil {
			d.opts.Metrics.RunSkipped(string(k.Job), k.Tenant)
		}
		d.log.Warn("tick skipped: the previous run is still going", zap.String("job", string(k.Job)), zap.String("tenant", k.Tenant))
		return
	}
	defer e.active.Store(false)
	if !d.acquire(ticks, time.Time{}) {
		return
	}
	defer d.releaseSlot()
	if ticks.Err() != nil {
		return // the stop began while the tick waited
	}
	d.run(runs, k)
}

// acquire takes a run slot, waiting until one is free, ctx is done, or
// (when not zero) until; it tells whether it took one.
func (d *Daemon) acquire(ctx context.Context, until time.Time) bool {
	var expired <-chan time.Time
	if !until.IsZero() {
		t := time.NewTimer(until.Sub(d.now()))
		defer t.Stop()
		expired = t.C
	}
	select {
	case d.slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	case <-expired:
		return false
	}
}

// releaseSlot frees the slot a run took.
func (d *Daemon) releaseSlot() { <-d.slots }

// run runs one cycle of k and returns its outcome (failed when the runner
// itself panicked).
func (d *Daemon) run(ctx context.Context, k runner.Key) (outcome model.RunOutcome) {
	d.inFlight.Add(1)
	defer d.inFlight.Add(-1)
	// The runner recovers a job's panic; this guard keeps a panic of the
	// runner itself from ending the daemon.
	defer func() {
		if p := recover(); p != nil {
			d.log.Error("run panicked outside the job", zap.String("job", string(k.Job)), zap.String("tenant", k.Tenant), zap.Any("panic", p))
			outcome = model.OutcomeFailed
		}
	}()
	res, _ := d.opts.Runner.RunOnce(ctx, k) // the runner logs and records the outcome
	return res.Outcome
}

// Skipped returns how many ticks of k were skipped because its previous run
// was still going.
func (d *Daemon) Skipped(k runner.Key) int64 {
	if e := d.entry(k); e != nil {
		return e.skipped.Load()
	}
	return 0
}

// Handler serves /healthz (the process answers), /readyz (the scheduler
// runs and Ready passes) and /metrics.
func (d *Daemon) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if !d.running.Load() {
			http.Error(w, "scheduler not running", http.StatusServiceUnavailable)
			return
		}
		if d.opts.Ready != nil {
			ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
			defer cancel()
			if err := d.opts.Ready(ctx); err != nil {
				d.log.Warn("not ready", zap.Error(err))
				http.Error(w, "store not reachable", http.StatusServiceUnavailable)
				return
			}
		}
		_, _ = fmt.Fprintln(w, "ready")
	})
	if d.opts.Metrics != nil {
		mux.Handle("GET /metrics", d.opts.Metrics.Handler())
	}
	return mux
}

// cronLogger passes robfig/cron's own log lines to zap; its Info lines
// (every schedule and wake-up) go to debug.
type cronLogger struct{ log *zap.Logger }

func (l cronLogger) Info(msg string, kv ...any) {
	l.log.Debug("cron: "+msg, zap.Any("details", kv))
}

func (l cronLogger) Error(err error, msg string, kv ...any) {
	l.log.Error("cron: "+msg, zap.Error(err), zap.Any("details", kv))
}
