// Package runner is the one code path that runs a cycle of a job for a
// tenant, shared by `hrsync run ...` and the daemon's scheduled callbacks.
//
// A job package registers its Kind from init with RegisterKind (its name,
// its order, its schedule, its gauges and how it builds one cycle for a
// tenant), the way source kinds and store dialects register. A Registry
// holds the cycles of every kind for every tenant (RegisterKinds), each a
// Func that runs one cycle and says how it ended. Runner.RunOnce looks the
// cycle up, runs it with a panic recovered, logged and recorded in the
// store as a failed run, turns a held lock into the locked outcome, and
// feeds the metrics; LastLine and NewSummary say how a run of cycles ended.
package runner

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"hrsync/internal/metrics"
	"hrsync/model"
	"hrsync/store"
)

// Key names one job of one tenant.
type Key struct {
	Job    model.Job
	Tenant string
}

// String renders the key as job/tenant.
func (k Key) String() string { return string(k.Job) + "/" + k.Tenant }

// Result is how one cycle of a job ended.
type Result struct {
	// Outcome is the cycle's overall outcome; empty is read as ok when the
	// Func returns no error and as failed when it does.
	Outcome model.RunOutcome
	// Counts are what the cycle did, summed over its runs; the keys of
	// package metrics (created, grantsApplied, rejected) feed counters.
	Counts map[string]int
	// GrantsHeld, when not nil, is how many of the tenant's grants are held
	// for an operator after the cycle.
	GrantsHeld *int
	// OrdersByStatus, when not nil, counts the tenant's orders by status
	// after the cycle (the orders job sets it).
	OrdersByStatus map[string]int
	// Cause says in one phrase why the cycle ended as it did, and Next
	// what an operator does about it; together with the outcome they make
	// the last line of `hrsync run` and the cycle's log line.
	Cause string
	Next  string
	// RuleGrants, when not nil, are the grants job's counts per rule.
	RuleGrants []metrics.RuleGrants
	// Report is the job's own report of the cycle, for `hrsync run -o
	// json`; nil when the job made none.
	Report any
}

// Func runs one cycle of a job for a tenant. It should let work in flight
// finish and commit when ctx is cancelled, then return. An error wrapping
// model.ErrLocked means another run holds the job's lock.
type Func func(ctx context.Context) (Result, error)

// ErrUnknownJob is returned by RunOnce for a job and tenant not registered.
var ErrUnknownJob = errors.New("job not registered")

// ErrPanic is wrapped by the error RunOnce returns when a job panicked.
var ErrPanic = errors.New("job panicked")

// Registry maps a job and tenant to the Func that runs it. It is built once
// by its owner and then only read; it is not safe for concurrent Register.
type Registry struct {
	funcs map[Key]Func
	keys  []Key
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{funcs: map[Key]Func{}}
}

// Register adds the Func of a job for a tenant. Registering one key twice
// is an error.
func (r *Registry) Register(job model.Job, tenant string, fn Func) error {
	k := Key{Job: job, Tenant: tenant}
	if job == "" || tenant == "" || fn == nil {
		return fmt.Errorf("register %s: job, tenant and func are required", k)
	}
	if _, dup := r.funcs[k]; dup {
		return fmt.Errorf("register %s: already registered", k)
	}
	r.funcs[k] = fn
	r.keys = append(r.keys, k)
	return nil
}

// Lookup returns the Func registered for k.
func (r *Registry) Lookup(k Key) (Func, bool) {
	fn, ok := r.funcs[k]
	return fn, ok
}

// Keys lists the registered keys in the order they were registered.
func (r *Registry) Keys() []Key {
	return append([]Key(nil), r.keys...)
}

// Recorder records runs; *store.Store is one. The runner records a run
// itself only for a job that panicked.
type Recorder interface {
	StartRun(ctx context.Context, r store.Run) error
	FinishRun(ctx context.Context, res store.RunResult) error
}

// Options configure a Runner.
type Options struct {
	// Registry holds the jobs; required.
	Registry *Registry
	// Recorder records a panicked job's failed run; nil records nothing.
	Recorder Recorder
	// Metrics, when not nil, is fed with every run.
	Metrics *metrics.Metrics
	// Logger logs every run's start and end; nil logs nothing.
	Logger *zap.Logger
	// RecordTimeout bounds the recording of a panicked run (default 30s).
	RecordTimeout time.Duration
	// Notifier, when not nil, is told how every cycle ended, after the
	// metrics and the log line; it decides whom to tell. It must not fail
	// the cycle: its errors are its own.
	Notifier Notifier
}

// Notifier tells people how a cycle ended.
type Notifier interface {
	Notify(ctx context.Context, k Key, res Result, err error)
}

// Runner runs registered jobs.
type Runner struct {
	opts Options
	log  *zap.Logger
	now  func() time.Time
}

// New returns a runner.
func New(opts Options) (*Runner, error) {
	if opts.Registry == nil {
		return nil, errors.New("runner: registry is required")
	}
	if opts.RecordTimeout <= 0 {
		opts.RecordTimeout = 30 * time.Second
	}
	log := opts.Logger
	if log == nil {
		log = zap.NewNop()
	}
	return &Runner{opts: opts, log: log, now: time.Now}, nil
}

// Registry returns the runner's registry.
func (r *Runner) Registry() *Registry { return r.opts.Registry }

// RunOnce runs one cycle of the job k. A panic in the job is recovered,
// logged with its stack, recorded as a failed run and returned as an error
// wrapping ErrPanic; a held lock gives the locked outcome and an error
// wrapping model.ErrLocked. The returned Result always has an outcome.
func (r *Runner) RunOnce(ctx context.Context, k Key) (Result, error) {
	fn, ok := r.opts.Registry.Lookup(k)
	if !ok {
		return Result{Outcome: model.OutcomeFailed}, fmt.Errorf("run %s: %w", k, ErrUnknownJob)
	}
	// The cycle id ties the runner's lines of one cycle together; the job's
	// own lines carry the ids of the runs it records.
	log := r.log.With(zap.String("job", string(k.Job)), zap.String("tenant", k.Tenant), zap.String("cycle", uuid.NewString()))
	m := r.opts.Metrics
	start := r.now()
	if m != nil {
		m.RunStarted(string(k.Job), k.Tenant)
	}
	log.Info("cycle started")
	res, err := r.call(ctx, k, fn, log)
	switch {
	case errors.Is(err, model.ErrLocked):
		res.Outcome = model.OutcomeLocked
	case ctx.Err() != nil && res.Outcome != model.OutcomeSafeguard && (err != nil || CutShort(ctx, res.Outcome) != res.Outcome):
		// The process is stopping and cut the cycle short (CutShort).
		res.Outcome, res.Cause, res.Next = model.OutcomeInterrupted, interruptedCause, interruptedNext
	case err != nil && (res.Outcome == "" || res.Outcome == model.OutcomeOK || res.Outcome == model.OutcomeAttention):
		// The job's words were for the outcome it meant; the error's
		// words say why the cycle failed (End.Describe).
		res.Outcome, res.Cause, res.Next = model.OutcomeFailed, "", ""
	case res.Outcome == "":
		res.Outcome = model.OutcomeOK
	}
	took := r.now().Sub(start)
	if m != nil {
		m.RunFinished(string(k.Job), k.Tenant, string(res.Outcome), took, r.now())
		m.ObserveCounts(string(k.Job), k.Tenant, res.Counts)
		for _, rg := range res.RuleGrants {
			m.ObserveRuleGrants(string(k.Job), k.Tenant, rg)
		}
		if res.GrantsHeld != nil {
			m.SetGrantsHeld(string(k.Job), k.Tenant, *res.GrantsHeld)
		}
		if res.OrdersByStatus != nil {
			m.SetOrdersByStatus(string(k.Job), k.Tenant, res.OrdersByStatus)
		}
	}
	fields := []zap.Field{zap.String("outcome", string(res.Outcome)), zap.Duration("took", took), zap.Any("counts", res.Counts)}
	if res.Cause != "" {
		fields = append(fields, zap.String("cause", res.Cause))
	}
	if res.Next != "" {
		fields = append(fields, zap.String("next", res.Next))
	}
	switch res.Outcome {
	case model.OutcomeLocked:
		log.Info("cycle skipped: another run holds the lock", fields...)
	case model.OutcomeFailed:
		log.Error("cycle failed", append(fields, zap.Error(err))...)
	case model.OutcomeInterrupted:
		log.Warn("cycle cut short: the process is stopping", append(fields, zap.Error(err))...)
	case model.OutcomeSafeguard, model.OutcomeAttention:
		log.Warn("cycle done, needs attention", append(fields, zap.Error(err))...)
	default:
		log.Info("cycle done", fields...)
	}
	if r.opts.Notifier != nil {
		r.opts.Notifier.Notify(ctx, k, res, err)
	}
	return res, err
}

// call runs fn with a panic recovered and recorded.
func (r *Runner) call(ctx context.Context, k Key, fn Func, log *zap.Logger) (res Result, err error) {
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		err = fmt.Errorf("%s: %w: %v", k, ErrPanic, p)
		res = Result{Outcome: model.OutcomeFailed}
		log.Error("job panicked; recorded as a failed run", zap.Any("panic", p), zap.ByteString("stack", debug.Stack()))
		if r.opts.Metrics != nil {
			r.opts.Metrics.RunPanicked(string(k.Job), k.Tenant)
		}
		if rerr := r.recordPanic(ctx, k, err); rerr != nil {
			log.Error("record the panicked run", zap.Error(rerr))
		}
	}()
	return fn(ctx)
}

// recordPanic records a failed run for a job that panicked, even when ctx
// is cancelled.
func (r *Runner) recordPanic(ctx context.Context, k Key, cause error) error {
	if r.opts.Recorder == nil {
		return nil
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.opts.RecordTimeout)
	defer cancel()
	id := uuid.NewString()
	if err := r.opts.Recorder.StartRun(rctx, store.Run{ID: id, Job: k.Job, Tenant: k.Tenant}); err != nil {
		return fmt.Errorf("start run: %w", err)
	}
	if err := r.opts.Recorder.FinishRun(rctx, store.RunResult{ID: id, Outcome: model.OutcomeFailed, Err: cause}); err != nil {
		return fmt.Errorf("finish run: %w", err)
	}
	return nil
}

// Rank orders outcomes from best to worst for an overall outcome: ok,
// attention, locked, interrupted, safeguard, failed.
func Rank(o model.RunOutcome) int {
	switch o {
	case model.OutcomeAttention:
		return 1
	case model.OutcomeLocked:
		return 2
	case model.OutcomeInterrupted:
		return 3
	case model.OutcomeSafeguard:
		return 4
	case model.OutcomeFailed, model.OutcomeRunning:
		return 5
	}
	return 0
}

// Worst returns the worse of two outcomes by Rank.
func Worst(a, b model.RunOutcome) model.RunOutcome {
	if Rank(b) > Rank(a) {
		return b
	}
	return a
}
