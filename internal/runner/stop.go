package runner

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"hrsync/model"
	"hrsync/store"
)

// JobLocker takes the lock one job of one tenant runs under and closes the
// runs a process left running (store.LockJob); *store.Store is one.
type JobLocker interface {
	LockJob(ctx context.Context, job model.Job, tenant string) (release func() error, closed int, err error)
}

// LockJob takes the lock of job for tenant with l, so that no two runs of
// them overlap on any replica, and closes, as interrupted, the runs that a
// kill, a crash or a stop left running. Every job records its runs under
// it. The error wraps model.ErrLocked when another run holds the lock;
// release logs its own failure.
func LockJob(ctx context.Context, l JobLocker, job model.Job, tenant string, log *zap.Logger) (release func(), err error) {
	rel, closed, err := l.LockJob(ctx, job, tenant)
	if err != nil {
		return nil, fmt.Errorf("lock %s of %s: %w", job, tenant, err)
	}
	if closed > 0 {
		log.Warn("runs that a stop, a kill or a crash interrupted are recorded as interrupted", zap.Int("runs", closed))
	}
	return func() {
		if err := rel(); err != nil {
			log.Warn("release lock", zap.Error(err))
		}
	}, nil
}

// Closer finds the jobs with runs recorded as running and closes those
// that no live run holds (store.RunningJobs, store.CloseInterrupted);
// *store.Store is one.
type Closer interface {
	RunningJobs(ctx context.Context) ([]store.JobTenant, error)
	CloseInterrupted(ctx context.Context, job model.Job, tenant string) (closed int, err error)
}

// CloseInterrupted closes, as interrupted, the runs of the registered jobs
// and tenants that a stopped or dead process left running, as a process
// starts. Only jobs with a run recorded as running are looked at, so that
// the locks of the others are not touched; a job whose lock another run
// holds is left to that run's replica. It returns how many runs it closed
// and the first error other than a held lock.
func (r *Runner) CloseInterrupted(ctx context.Context, c Closer) (int, error) {
	running, err := c.RunningJobs(ctx)
	if err != nil {
		return 0, fmt.Errorf("close interrupted runs: %w", err)
	}
	total := 0
	var first error
	for _, jt := range running {
		k := Key{Job: jt.Job, Tenant: jt.Tenant}
		if _, ok := r.opts.Registry.Lookup(k); !ok {
			continue
		}
		n, err := c.CloseInterrupted(ctx, k.Job, k.Tenant)
		total += n
		if err != nil && !errors.Is(err, model.ErrLocked) && first == nil {
			first = fmt.Errorf("close interrupted runs of %s: %w", k, err)
		}
		if n > 0 {
			r.log.Warn("runs that a stop, a kill or a crash interrupted are recorded as interrupted",
				zap.String("job", string(k.Job)), zap.String("tenant", k.Tenant), zap.Int("runs", n))
		}
	}
	return total, first
}

// CutShort returns the outcome a run records when it ended with outcome
// and ctx: a run that failed because ctx was cancelled (its process is
// stopping) was cut short, and is interrupted, not failed; any other
// outcome stands.
func CutShort(ctx context.Context, outcome model.RunOutcome) model.RunOutcome {
	if ctx.Err() != nil && (outcome == model.OutcomeFailed || outcome == "") {
		return model.OutcomeInterrupted
	}
	return outcome
}

// ErrCut is the error a run cut short records instead of the context
// error its work ended with (Cut).
var ErrCut = errors.New("interrupted: the process was stopped before the run finished; the next run picks its work up")

// Cut is the error of a run cut short whose work ended with err: it reads
// as ErrCut and wraps both ErrCut and err.
func Cut(err error) error {
	if err == nil {
		return ErrCut
	}
	return cutError{err}
}

// cutError is a run's error behind ErrCut's words.
type cutError struct{ err error }

func (e cutError) Error() string   { return ErrCut.Error() }
func (e cutError) Unwrap() []error { return []error{ErrCut, e.err} }
