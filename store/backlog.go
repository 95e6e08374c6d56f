package store

import (
	"context"
	"fmt"
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
