package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"hrsync/model"
)

// Backlog is what waits in the state for one tenant, as the daemon's
// scrape-time gauges show it.
type Backlog struct {
	// PersonalizationsPending are personalizations the next run asks the
	// platform about (pending) or tries again (retry).
	PersonalizationsPending int
	// PersonalizationsFailed are personalizations hrsync no longer tries
	// while the person's source fields stay the same: calls failed as often
	// as allowed (failed), or the platform found the fields unusable (error).
	PersonalizationsFailed int
	// OrdersNotPolled are orders not final whose status the orders job no
	// longer polls: they grew older than orders.stopPollingAfter.
	OrdersNotPolled int
}

// Backlog counts the tenant's backlog in one query.
func (s *Store) Backlog(ctx context.Context, tenant string) (Backlog, error) {
	var b Backlog
	err := s.r.QueryRowxContext(ctx, s.r.Rebind(`SELECT
		(SELECT COUNT(*) FROM personalizations WHERE tenant = ? AND state IN (?, ?)),
		(SELECT COUNT(*) FROM personalizations WHERE tenant = ? AND state IN (?, ?)),
		(SELECT COUNT(*) FROM orders WHERE tenant = ? AND polling_stopped AND NOT is_final)`),
		tenant, PersonalizationPending, PersonalizationRetry,
		tenant, PersonalizationFailed, PersonalizationError,
		tenant).Scan(&b.PersonalizationsPending, &b.PersonalizationsFailed, &b.OrdersNotPolled)
	if err != nil {
		return Backlog{}, fmt.Errorf("count the backlog of %s: %w", tenant, err)
	}
	return b, nil
}

// JobTenant names one job of one tenant.
type JobTenant struct {
	Job    model.Job
	Tenant string
}

// LastSuccesses returns when the last run of each job and tenant that ended
// ok or attention (not a dry run) finished, in one query; a restarted
// daemon starts its time of the last success from them. A run of a cycle
// another of whose runs did not end ok or attention (Run.Cycle) does not
// count: that cycle was not a success.
func (s *Store) LastSuccesses(ctx context.Context) (map[JobTenant]time.Time, error) {
	out := map[JobTenant]time.Time{}
	err := queryEach(ctx, s.r, `SELECT job, tenant, MAX(finished_at) FROM runs
		WHERE outcome IN (?, ?) AND dry_run = ? AND finished_at IS NOT NULL
		AND (cycle = '' OR cycle NOT IN (SELECT cycle FROM runs WHERE cycle <> '' AND outcome NOT IN (?, ?)))
		GROUP BY job, tenant`,
		[]any{model.OutcomeOK, model.OutcomeAttention, false, model.OutcomeOK, model.OutcomeAttention}, func(r *sql.Rows) error {
			var (
				k  JobTenant
				at dbTime
			)
			if err := r.Scan(&k.Job, &k.Tenant, &at); err != nil {
				return err
			}
			out[k] = at.Time
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("last successful runs: %w", err)
	}
	return out, nil
}

// HeldGrantCounts counts each tenant's grants held for an operator (states
// unknown and pending), in one query; tenants with none are absent.
func (s *Store) HeldGrantCounts(ctx context.Context) (map[string]int, error) {
	out := map[string]int{}
	err := queryEach(ctx, s.r, `SELECT tenant, COUNT(*) FROM grants WHERE state IN (?, ?) GROUP BY tenant`,
		[]any{model.GrantUnknown, model.GrantPending}, func(r *sql.Rows) error {
			var (
				tenant string
				n      int
			)
			if err := r.Scan(&tenant, &n); err != nil {
				return err
			}
			out[tenant] = n
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("count held grants: %w", err)
	}
	return out, nil
}
