package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"

	"hrsync/model"
)

// InterruptedError is the error text of a run that CloseInterrupted closed.
const InterruptedError = "interrupted: the process ended before the run finished"

// JobLockName is the name of the lock that one job of one tenant runs
// under ("people-acme"): every run of the job for the tenant is started
// and finished under it (LockJob).
func JobLockName(job model.Job, tenant string) string { return string(job) + "-" + tenant }

// LockJob takes the lock of job for tenant (TryLock on JobLockName) without
// waiting, then closes the runs of job and tenant that a process left
// running (CloseInterrupted): every run of a job and tenant is recorded
// under this lock, and the lock goes with its holder (its database session
// or its process), so while it is held here no other process runs one. A
// run another live replica is making keeps its lock, and LockJob answers
// model.ErrLocked without touching it. closed is how many runs it closed.
func (s *Store) LockJob(ctx context.Context, job model.Job, tenant string) (release func() error, closed int, err error) {
	if job == "" || tenant == "" {
		return nil, 0, errors.New("lock job: job and tenant are required")
	}
	release, err = s.TryLock(ctx, JobLockName(job, tenant))
	if err != nil {
		return nil, 0, err
	}
	closed, err = s.closeInterrupted(ctx, job, tenant)
	if err != nil {
		_ = release()
		return nil, 0, err
	}
	return release, closed, nil
}

// CloseInterrupted closes the runs of job and tenant that a process left
// running, when no process runs the job for the tenant: it takes the job's
// lock (LockJob) and releases it. A lock held elsewhere (a live run) closes
// nothing and returns model.ErrLocked. A process calls it for its jobs as
// it starts.
func (s *Store) CloseInterrupted(ctx context.Context, job model.Job, tenant string) (closed int, err error) {
	release, closed, err := s.LockJob(ctx, job, tenant)
	if err != nil {
		return 0, err
	}
	if err := release(); err != nil {
		return closed, fmt.Errorf("close interrupted runs: %w", err)
	}
	return closed, nil
}

// closeInterrupted marks the runs of job and tenant still recorded as
// running as interrupted; the caller holds the job's lock, so no such run
// is alive.
func (s *Store) closeInterrupted(ctx context.Context, job model.Job, tenant string) (n int, err error) {
	err = s.inTx(ctx, "close interrupted runs", func(tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE runs SET outcome = ?, finished_at = ?, error = ?
			WHERE job = ? AND tenant = ? AND outcome = ?`),
			model.OutcomeInterrupted, s.stamp(), InterruptedError, string(job), tenant, model.OutcomeRunning)
		if err != nil {
			return fmt.Errorf("update runs: %w", err)
		}
		rows, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("update runs: %w", err)
		}
		n = int(rows)
		return nil
	})
	return n, err
}

// RunningJobs lists the jobs and tenants that have runs recorded as
// running, live or left by a process that died, in one query: a process
// that starts closes those of them that no live run holds
// (CloseInterrupted) without touching the locks of the others.
func (s *Store) RunningJobs(ctx context.Context) ([]JobTenant, error) {
	var out []JobTenant
	err := queryEach(ctx, s.r, `SELECT DISTINCT job, tenant FROM runs WHERE outcome = ? ORDER BY job, tenant`,
		[]any{model.OutcomeRunning}, func(r *sql.Rows) error {
			var k JobTenant
			if err := r.Scan(&k.Job, &k.Tenant); err != nil {
				return err
			}
			out = append(out, k)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("running jobs: %w", err)
	}
	return out, nil
}
