package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// KeepUnarchivedReport keeps, with a finished run, the report of the
// export it applied but could not archive, for the later run that archives
// it (UnarchivedReport, ArchivedLate). A run still running, or unknown, is
// refused (ErrRunState, ErrNotFound).
func (s *Store) KeepUnarchivedReport(ctx context.Context, id string, report []byte) error {
	return s.inTx(ctx, "keep the unarchived report of run "+id, func(tx *sqlx.Tx) error {
		if err := finishedRun(ctx, tx, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, tx.Rebind("UPDATE runs SET unarchived_report = ? WHERE id = ?"), string(report), id); err != nil {
			return fmt.Errorf("update run: %w", err)
		}
		return nil
	})
}

// UnarchivedReport returns the report a run kept for its export's late
// archive; ok is false when none waits (the export was archived, or the
// run is unknown).
func (s *Store) UnarchivedReport(ctx context.Context, id string) (report []byte, ok bool, err error) {
	err = s.inReadTx(ctx, "read the unarchived report of run "+id, func(tx *sqlx.Tx) error {
		var body sql.NullString
		qerr := tx.QueryRowxContext(ctx, tx.Rebind("SELECT unarchived_report FROM runs WHERE id = ?"), id).Scan(&body)
		switch {
		case errors.Is(qerr, sql.ErrNoRows):
			return nil
		case qerr != nil:
			return fmt.Errorf("read run: %w", qerr)
		}
		report, ok = []byte(body.String), body.Valid
		return nil
	})
	return report, ok, err
}

// ArchivedLate records that a later run archived the export of run id with
// its kept report: the reports written beside it are linked from run id's
// record (as SetRunReports does) and the kept report is released.
func (s *Store) ArchivedLate(ctx context.Context, id string, names []string) error {
	if names == nil {
		names = []string{}
	}
	body, err := json.Marshal(names)
	if err != nil {
		return fmt.Errorf("archived late, run %s: %w", id, err)
	}
	return s.inTx(ctx, "archived late, run "+id, func(tx *sqlx.Tx) error {
		if err := finishedRun(ctx, tx, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, tx.Rebind("UPDATE runs SET reports = ?, unarchived_report = NULL WHERE id = ?"), string(body), id); err != nil {
			return fmt.Errorf("update run: %w", err)
		}
		return nil
	})
}
