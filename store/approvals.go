package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"hrsync/model"
)

// SafeguardStop is the record of an export a safeguard stopped: what an HR
// admin may approve, once, by moving it into the drop folder's approve/.
type SafeguardStop struct {
	Tenant string
	SHA256 string
	// RunID is the run the safeguards stopped, at StoppedAt; Stops are
	// the safeguards that stopped it, in plain words.
	RunID     string
	StoppedAt time.Time
	Stops     []string
	// Approved is set once a run took the export past the safeguards:
	// ApprovedRun, at ApprovedAt, placed in approve/ by ApprovedBy (empty
	// when the backend does not say).
	Approved    bool
	ApprovedRun string
	ApprovedAt  time.Time
	ApprovedBy  string
}

// Approval is the approval a run uses (RunResult.Approval): who placed
// the export in approve/, where the backend knows; empty when it does not.
type Approval struct {
	By string
}

// recordStop records, in FinishRun's transaction, the safeguard stop of a
// run's source file (a run stopped by a safeguard: a stop recorded again
// for the same content is a new stop, not approved yet), or uses the
// approval the run took its export past the safeguards with.
func (s *Store) recordStop(ctx context.Context, tx *sqlx.Tx, tenant string, res RunResult, at time.Time) error {
	f := res.SourceFile
	if f.Tenant != "" {
		tenant = f.Tenant
	}
	switch {
	case res.Approval != nil:
		r, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE safeguard_stops SET approved_run = ?, approved_at = ?, approved_by = ?
			WHERE tenant = ? AND sha256 = ? AND approved_run IS NULL`), res.ID, ts(at), res.Approval.By, tenant, f.SHA256)
		if err != nil {
			return fmt.Errorf("use approval: %w", err)
		}
		if n, err := r.RowsAffected(); err != nil || n != 1 {
			return fmt.Errorf("source file %s: %w", f.SHA256, ErrNotApprovable)
		}
	case res.Outcome == model.OutcomeSafeguard:
		stops, err := json.Marshal(append([]string{}, res.Stops...))
		if err != nil {
			return fmt.Errorf("record safeguard stop: %w", err)
		}
		if _, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO safeguard_stops (tenant, sha256, run_id, stopped_at, stops)
			VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (tenant, sha256) DO UPDATE SET run_id = excluded.run_id, stopped_at = excluded.stopped_at,
			stops = excluded.stops, approved_run = NULL, approved_at = NULL, approved_by = ''`),
			tenant, f.SHA256, res.ID, ts(at), string(stops)); err != nil {
			return fmt.Errorf("record safeguard stop: %w", err)
		}
	}
	return nil
}

// SafeguardStopByHash reads the record of the safeguard stop of a tenant's
// export by content hash; ok is false when no safeguard stopped it.
func (s *Store) SafeguardStopByHash(ctx context.Context, tenant, sha256 string) (st SafeguardStop, ok bool, err error) {
	var (
		stopped, approvedAt dbTime
		stops               string
		approvedRun         sql.NullString
	)
	err = s.r.QueryRowxContext(ctx, s.r.Rebind(`SELECT tenant, sha256, run_id, stopped_at, stops, approved_run,
		approved_at, approved_by FROM safeguard_stops WHERE tenant = ? AND sha256 = ?`), tenant, sha256).
		Scan(&st.Tenant, &st.SHA256, &st.RunID, &stopped, &stops, &approvedRun, &approvedAt, &st.ApprovedBy)
	if errors.Is(err, sql.ErrNoRows) {
		return SafeguardStop{}, false, nil
	}
	if err != nil {
		return SafeguardStop{}, false, fmt.Errorf("read safeguard stop: %w", err)
	}
	if err := json.Unmarshal([]byte(stops), &st.Stops); err != nil {
		return SafeguardStop{}, false, fmt.Errorf("read safeguard stop: %w", err)
	}
	st.StoppedAt, st.ApprovedAt = stopped.Time, approvedAt.Time
	st.Approved, st.ApprovedRun = approvedRun.Valid, approvedRun.String
	return st, true, nil
}
