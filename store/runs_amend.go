package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"hrsync/model"

	"github.com/jmoiron/sqlx"
)

// AmendRun changes the outcome and error text of a finished run, for what
// happened after FinishRun committed it: its export could not be archived
// (it changed after it was read, or the move failed), so the run needs
// attention after all. A run still running, or unknown, is refused
// (ErrRunState, ErrNotFound); the rest of the record is kept.
func (s *Store) AmendRun(ctx context.Context, id string, outcome model.RunOutcome, errText string) error {
	if outcome == "" || outcome == model.OutcomeRunning {
		return fmt.Errorf("amend run %s: a final outcome is required", id)
	}
	return s.inTx(ctx, "amend run "+id, func(tx *sqlx.Tx) error {
		if err := finishedRun(ctx, tx, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, tx.Rebind("UPDATE runs SET outcome = ?, error = ? WHERE id = ?"), outcome, errText, id); err != nil {
			return fmt.Errorf("update run: %w", err)
		}
		return nil
	})
}

// SetRunReports links the reports written beside a finished run's archived
// export from its record: their names relative to the drop folder. A run
// still running, or unknown, is refused (ErrRunState, ErrNotFound).
func (s *Store) SetRunReports(ctx context.Context, id string, names []string) error {
	if names == nil {
		names = []string{}
	}
	body, err := json.Marshal(names)
	if err != nil {
		return fmt.Errorf("set reports of run %s: %w", id, err)
	}
	return s.inTx(ctx, "set reports of run "+id, func(tx *sqlx.Tx) error {
		if err := finishedRun(ctx, tx, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, tx.Rebind("UPDATE runs SET reports = ? WHERE id = ?"), string(body), id); err != nil {
			return fmt.Errorf("update run: %w", err)
		}
		return nil
	})
}

// finishedRun checks, in tx, that the run id exists and is finished
// (ErrNotFound, ErrRunState).
func finishedRun(ctx context.Context, tx *sqlx.Tx, id string) error {
	var current model.RunOutcome
	err := tx.QueryRowxContext(ctx, tx.Rebind("SELECT outcome FROM runs WHERE id = ?"), id).Scan(&current)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("run: %w", ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("read run: %w", err)
	}
	if current == model.OutcomeRunning {
		return fmt.Errorf("%w: still running", ErrRunState)
	}
	return nil
}
