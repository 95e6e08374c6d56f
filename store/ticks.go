package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"hrsync/model"

	"github.com/jmoiron/sqlx"
)

// ErrTickTaken is returned by ClaimTick when the tick was already claimed,
// by another replica or earlier by this one.
var ErrTickTaken = errors.New("tick already claimed")

// TickRetention is how long the row of a claimed tick is kept: far longer
// than any clock skew between replicas or any delay of a claim, so that no
// replica can claim a tick whose row is gone.
const TickRetention = time.Hour

// Tick is a scheduled tick of a job of a tenant that this process claimed:
// it holds the tick's lock until Finish.
type Tick struct {
	s       *Store
	job     model.Job
	tenant  string
	at      time.Time
	release func() error
}

// At is the tick's scheduled time, as stored.
func (t *Tick) At() time.Time { return t.at }

// ClaimTick claims the tick at (the schedule's time, not a clock reading) of
// job for tenant, so that one replica of a fleet runs it. Under the tick's
// lock ("tick-JOB-TENANT", taken with TryLock and held until Finish), it
// inserts the tick's row (job, tenant, at) with the store's replica; the
// primary key lets one insert win. It returns model.ErrLocked when another holder
// has the lock (a replica is running this job of this tenant, or claiming
// this tick), and ErrTickTaken when the row exists (the tick already ran or
// runs). The caller runs the job, then calls Finish.
func (s *Store) ClaimTick(ctx context.Context, job model.Job, tenant string, at time.Time) (*Tick, error) {
	if job == "" || tenant == "" || at.IsZero() {
		return nil, errors.New("claim tick: job, tenant and time are required")
	}
	what := fmt.Sprintf("claim tick %s %s %s", job, tenant, at.Format(time.RFC3339))
	// A look first spares the lock to the replicas that come late.
	var n int
	if err := s.r.QueryRowxContext(ctx, s.r.Rebind(`SELECT COUNT(*) FROM ticks WHERE job = ? AND tenant = ? AND tick_at = ?`),
		string(job), tenant, ts(at)).Scan(&n); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if n > 0 {
		return nil, fmt.Errorf("%s: %w", what, ErrTickTaken)
	}
	release, err := s.TryLock(ctx, "tick-"+string(job)+"-"+tenant)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	t := &Tick{s: s, job: job, tenant: tenant, at: ts(at), release: release}
	claimed := false
	err = s.inTx(ctx, "claim tick", func(tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO ticks (job, tenant, tick_at, replica, claimed_at)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT (job, tenant, tick_at) DO NOTHING`),
			string(job), tenant, t.at, s.replica, s.stamp())
		if err != nil {
			return fmt.Errorf("insert tick: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("insert tick: %w", err)
		}
		claimed = n == 1
		return nil
	})
	if err == nil && !claimed {
		err = fmt.Errorf("%s: %w", what, ErrTickTaken)
	}
	if err != nil {
		_ = release()
		return nil, err
	}
	return t, nil
}

// unlockTimeout bounds the writes a tick makes after its context is
// cancelled.
const unlockTimeout = 10 * time.Second

// Finish records how the run of the tick ended, deletes the job's tick rows
// older than TickRetention, and releases the tick's lock. It does its
// writes even when ctx is cancelled (a stopping daemon), bounded by
// unlockTimeout.
func (t *Tick) Finish(ctx context.Context, outcome model.RunOutcome) error {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unlockTimeout)
	defer cancel()
	err := t.s.inTx(wctx, "finish tick", func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(wctx, tx.Rebind(`UPDATE ticks SET finished_at = ?, outcome = ?
			WHERE job = ? AND tenant = ? AND tick_at = ?`),
			t.s.stamp(), string(outcome), string(t.job), t.tenant, t.at); err != nil {
			return fmt.Errorf("update tick: %w", err)
		}
		if _, err := tx.ExecContext(wctx, tx.Rebind(`DELETE FROM ticks WHERE job = ? AND tenant = ? AND tick_at < ?`),
			string(t.job), t.tenant, t.at.Add(-TickRetention)); err != nil {
			return fmt.Errorf("delete old ticks: %w", err)
		}
		return nil
	})
	if rerr := t.release(); rerr != nil && err == nil {
		err = rerr
	}
	return err
}

// TickRecord is a claimed tick as stored.
type TickRecord struct {
	Job        model.Job
	Tenant     string
	At         time.Time
	Replica    string
	ClaimedAt  time.Time
	FinishedAt time.Time        // zero while running, or when the replica died during the run
	Outcome    model.RunOutcome // empty while running, or when the replica died
}

// Ticks lists the claimed ticks of job for tenant (those kept: see
// TickRetention), oldest first.
func (s *Store) Ticks(ctx context.Context, job model.Job, tenant string) ([]TickRecord, error) {
	rows, err := s.r.QueryContext(ctx, s.r.Rebind(`SELECT tick_at, replica, claimed_at, finished_at, COALESCE(outcome, '')
		FROM ticks WHERE job = ? AND tenant = ? ORDER BY tick_at`), string(job), tenant)
	if err != nil {
		return nil, fmt.Errorf("read ticks: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []TickRecord
	for rows.Next() {
		r := TickRecord{Job: job, Tenant: tenant}
		var at, claimed, finished dbTime
		var outcome string
		if err := rows.Scan(&at, &r.Replica, &claimed, &finished, &outcome); err != nil {
			return nil, fmt.Errorf("read ticks: %w", err)
		}
		r.At, r.ClaimedAt, r.FinishedAt, r.Outcome = at.UTC(), claimed.Time, finished.Time, model.RunOutcome(outcome)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read ticks: %w", err)
	}
	return out, nil
}

// Abandon gives the tick back unrun: it deletes the tick's row and releases
// its lock, so that another replica may still claim it (a stopping daemon
// that won a claim as it was told to stop).
func (t *Tick) Abandon(ctx context.Context) error {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unlockTimeout)
	defer cancel()
	err := t.s.inTx(wctx, "abandon tick", func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(wctx, tx.Rebind(`DELETE FROM ticks WHERE job = ? AND tenant = ? AND tick_at = ?`),
			string(t.job), t.tenant, t.at); err != nil {
			return fmt.Errorf("delete tick: %w", err)
		}
		return nil
	})
	if rerr := t.release(); rerr != nil && err == nil {
		err = rerr
	}
	return err
}
