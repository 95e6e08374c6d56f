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

// SourceOutcome is what became of a source file.
type SourceOutcome string

// The outcomes of a source file.
const (
	SourceProcessed SourceOutcome = "processed" // archived to processed/
	SourceFailed    SourceOutcome = "failed"    // moved to failed/
)

// Run is a run as it starts.
type Run struct {
	ID        string // a UUID made by the caller
	Job       model.Job
	Tenant    string
	DryRun    bool
	StartedAt time.Time // zero means now
	// Cycle ties the runs one cycle of a job recorded (a people cycle
	// records one per export); "" for a cycle of one run.
	Cycle string
}

// SourceFile is the record of one source file whose outcome was committed.
type SourceFile struct {
	Tenant      string
	SHA256      string // hex SHA-256 of the file's bytes
	Name        string
	Size        int64
	Rows        int // data rows read
	Rejected    int // rows rejected
	Outcome     SourceOutcome
	RunID       string    // set by FinishRun
	ProcessedAt time.Time // zero means now
}

// RunResult is how a run ended, committed by FinishRun in one transaction.
type RunResult struct {
	ID      string
	Outcome model.RunOutcome
	Counts  map[string]int
	// Err is why the run failed or needs attention; nil when none.
	Err        error
	Rejections []model.Rejection
	// SourceFile, when not nil, is recorded for the run's tenant.
	SourceFile *SourceFile
	// SourceRows is how many rows the run read from its source (file or
	// SQL query); nil when it read none. When nil and SourceFile is set,
	// SourceFile.Rows is used. LastGoodImport reads it.
	SourceRows *int
	// Corrections says the source listed only rows corrected after an
	// earlier run rejected them: no rows are recorded, so LastGoodImport
	// skips it.
	Corrections bool
	// Stops, for a run a safeguard stopped whose SourceFile is set, are
	// the safeguards that stopped it, in plain words: the stop is recorded
	// (SafeguardStop) so that the export can be approved once.
	Stops []string
	// Approval, when not nil, uses the approval of the safeguard stop of
	// SourceFile's hash: FinishRun refuses with ErrNotApprovable when no
	// stop is recorded for it or its approval was used.
	Approval   *Approval
	FinishedAt time.Time // zero means now
}

// RunRecord is a run as stored.
type RunRecord struct {
	Run
	FinishedAt time.Time // zero while running
	Outcome    model.RunOutcome
	Counts     map[string]int
	Error      string
	SourceRows *int
	// Replica is the process that recorded the run (Options.Replica).
	Replica string
	// Reports names the reports written beside the run's archived export,
	// relative to its drop folder (SetRunReports); empty when none.
	Reports []string
}

// StartRun records a run as running.
func (s *Store) StartRun(ctx context.Context, r Run) error {
	if r.ID == "" || r.Tenant == "" {
		return errors.New("start run: id and tenant are required")
	}
	started := r.StartedAt
	if started.IsZero() {
		started = s.now()
	}
	return s.inTx(ctx, "start run", func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO runs (id, job, tenant, dry_run, started_at, outcome, replica, cycle)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`), r.ID, string(r.Job), r.Tenant, r.DryRun, ts(started), model.OutcomeRunning, s.replica, r.Cycle); err != nil {
			return fmt.Errorf("insert run: %w", err)
		}
		return nil
	})
}

func rejectionCols() []string { return []string{"run_id", "source", "line", "field", "reason"} }

// FinishRun commits a run's outcome, its rejections and its source file's
// record together in one transaction: a drop folder archives the file only
// after FinishRun returns. The run must be running. A source file whose hash
// is already recorded as processed for the tenant is refused with
// ErrFileProcessed (a failed one is replaced by the new record).
func (s *Store) FinishRun(ctx context.Context, res RunResult) error {
	if res.Outcome == "" || res.Outcome == model.OutcomeRunning {
		return fmt.Errorf("finish run %s: outcome required", res.ID)
	}
	counts := res.Counts
	if counts == nil {
		counts = map[string]int{}
	}
	countsJSON, err := json.Marshal(counts)
	if err != nil {
		return fmt.Errorf("finish run %s: counts: %w", res.ID, err)
	}
	errText := ""
	if res.Err != nil {
		errText = res.Err.Error()
	}
	finished := res.FinishedAt
	if finished.IsZero() {
		finished = s.now()
	}
	var sourceRows any
	switch {
	case res.SourceRows != nil:
		sourceRows = *res.SourceRows
	case res.SourceFile != nil:
		sourceRows = res.SourceFile.Rows
	}
	if res.Corrections {
		sourceRows = nil
	}
	return s.inTx(ctx, "finish run "+res.ID, func(tx *sqlx.Tx) error {
		var tenant string
		var outcome model.RunOutcome
		err := tx.QueryRowxContext(ctx, tx.Rebind("SELECT tenant, outcome FROM runs WHERE id = ?"), res.ID).Scan(&tenant, &outcome)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("run: %w", ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("read run: %w", err)
		}
		if outcome != model.OutcomeRunning {
			return fmt.Errorf("%w: outcome %s", ErrRunState, outcome)
		}
		if _, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE runs SET outcome = ?, finished_at = ?, counts = ?,
			error = ?, source_rows = ? WHERE id = ?`),
			res.Outcome, ts(finished), string(countsJSON), errText, sourceRows, res.ID); err != nil {
			return fmt.Errorf("update run: %w", err)
		}
		vals := make([]any, len(rejectionCols()))
		err = s.db.BulkInsert(ctx, tx, "rejections", rejectionCols(), "", len(res.Rejections), func(i int) []any {
			r := res.Rejections[i]
			vals[0], vals[1], vals[2], vals[3], vals[4] = res.ID, r.Source, r.Line, r.Field, r.Reason
			return vals
		})
		if err != nil {
			return err
		}
		if res.SourceFile == nil {
			return nil
		}
		if err := s.recordSourceFile(ctx, tx, tenant, res.ID, *res.SourceFile, finished); err != nil {
			return err
		}
		return s.recordStop(ctx, tx, tenant, res, finished)
	})
}

func (s *Store) recordSourceFile(ctx context.Context, tx *sqlx.Tx, tenant, runID string, f SourceFile, at time.Time) error {
	if f.Tenant == "" {
		f.Tenant = tenant
	}
	if f.SHA256 == "" {
		return errors.New("source file without hash")
	}
	if f.Outcome != SourceProcessed && f.Outcome != SourceFailed {
		return fmt.Errorf("source file outcome %q invalid", f.Outcome)
	}
	if f.ProcessedAt.IsZero() {
		f.ProcessedAt = at
	}
	var prev SourceOutcome
	err := tx.QueryRowxContext(ctx, tx.Rebind("SELECT outcome FROM source_files WHERE tenant = ? AND sha256 = ?"),
		f.Tenant, f.SHA256).Scan(&prev)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return fmt.Errorf("read source file: %w", err)
	case prev == SourceProcessed:
		return fmt.Errorf("source file %s: %w", f.SHA256, ErrFileProcessed)
	}
	if _, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO source_files
		(tenant, sha256, name, size, row_count, rejected_count, outcome, run_id, processed_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (tenant, sha256) DO UPDATE SET name = excluded.name, size = excluded.size,
		row_count = excluded.row_count, rejected_count = excluded.rejected_count, outcome = excluded.outcome,
		run_id = excluded.run_id, processed_at = excluded.processed_at`),
		f.Tenant, f.SHA256, f.Name, f.Size, f.Rows, f.Rejected, f.Outcome, runID, ts(f.ProcessedAt)); err != nil {
		return fmt.Errorf("record source file: %w", err)
	}
	return nil
}

type runRow struct {
	ID         string        `db:"id"`
	Job        string        `db:"job"`
	Tenant     string        `db:"tenant"`
	DryRun     bool          `db:"dry_run"`
	StartedAt  dbTime        `db:"started_at"`
	FinishedAt dbTime        `db:"finished_at"`
	Outcome    string        `db:"outcome"`
	Counts     []byte        `db:"counts"`
	Error      string        `db:"error"`
	SourceRows sql.NullInt64 `db:"source_rows"`
	Replica    string        `db:"replica"`
	Reports    []byte        `db:"reports"`
	Cycle      string        `db:"cycle"`
}

func (r runRow) record() (RunRecord, error) {
	rec := RunRecord{
		Run: Run{ID: r.ID, Job: model.Job(r.Job), Tenant: r.Tenant, DryRun: r.DryRun, StartedAt: r.StartedAt.Time,
			Cycle: r.Cycle},
		FinishedAt: r.FinishedAt.Time, Outcome: model.RunOutcome(r.Outcome), Error: r.Error, Replica: r.Replica,
	}
	if err := json.Unmarshal(r.Counts, &rec.Counts); err != nil {
		return RunRecord{}, fmt.Errorf("run %s counts: %w", r.ID, err)
	}
	if r.SourceRows.Valid {
		n := int(r.SourceRows.Int64)
		rec.SourceRows = &n
	}
	if len(r.Reports) > 0 {
		if err := json.Unmarshal(r.Reports, &rec.Reports); err != nil {
			return RunRecord{}, fmt.Errorf("run %s reports: %w", r.ID, err)
		}
	}
	return rec, nil
}

// LastRuns returns the newest runs of every job and tenant, newest first; at
// most limit of them (0 means 20).
func (s *Store) LastRuns(ctx context.Context, limit int) ([]RunRecord, error) {
	if limit <= 0 {
		limit = 20
	}
	var rows []runRow
	q := fmt.Sprintf(`SELECT id, job, tenant, dry_run, started_at, finished_at, outcome, counts, error, source_rows, replica, reports, cycle
		FROM runs ORDER BY started_at DESC, id DESC LIMIT %d`, limit)
	if err := s.r.SelectContext(ctx, &rows, q); err != nil {
		return nil, fmt.Errorf("last runs: %w", err)
	}
	out := make([]RunRecord, len(rows))
	for i, r := range rows {
		rec, err := r.record()
		if err != nil {
			return nil, fmt.Errorf("last runs: %w", err)
		}
		out[i] = rec
	}
	return out, nil
}

// Rejections returns a run's rejected rows in line order.
func (s *Store) Rejections(ctx context.Context, runID string) ([]model.Rejection, error) {
	rows, err := s.r.QueryContext(ctx, s.r.Rebind(`SELECT source, line, field, reason FROM rejections
		WHERE run_id = ? ORDER BY line, id`), runID)
	if err != nil {
		return nil, fmt.Errorf("read rejections: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []model.Rejection
	for rows.Next() {
		var r model.Rejection
		if err := rows.Scan(&r.Source, &r.Line, &r.Field, &r.Reason); err != nil {
			return nil, fmt.Errorf("read rejections: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read rejections: %w", err)
	}
	return out, nil
}

// SourceFileByHash reads the record of a tenant's source file by content
// hash; ok is false when none is recorded.
func (s *Store) SourceFileByHash(ctx context.Context, tenant, sha256 string) (f SourceFile, ok bool, err error) {
	var (
		at  dbTime
		out string
	)
	err = s.r.QueryRowxContext(ctx, s.r.Rebind(`SELECT tenant, sha256, name, size, row_count, rejected_count,
		outcome, run_id, processed_at FROM source_files WHERE tenant = ? AND sha256 = ?`), tenant, sha256).
		Scan(&f.Tenant, &f.SHA256, &f.Name, &f.Size, &f.Rows, &f.Rejected, &out, &f.RunID, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return SourceFile{}, false, nil
	}
	if err != nil {
		return SourceFile{}, false, fmt.Errorf("read source file: %w", err)
	}
	f.Outcome, f.ProcessedAt = SourceOutcome(out), at.Time
	return f, true, nil
}

// LastGoodImport returns the rows read by the tenant's newest run that read
// a source (file or SQL import), was not a dry run, and ended ok or
// attention; ok is false when there is none. The truncation safeguard
// compares a new source against it.
func (s *Store) LastGoodImport(ctx context.Context, tenant string) (rows int, ok bool, err error) {
	err = s.r.QueryRowxContext(ctx, s.r.Rebind(`SELECT source_rows FROM runs
		WHERE tenant = ? AND source_rows IS NOT NULL AND dry_run = ? AND outcome IN (?, ?)
		ORDER BY finished_at DESC, started_at DESC LIMIT 1`), tenant, false, model.OutcomeOK, model.OutcomeAttention).Scan(&rows)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("last good import: %w", err)
	}
	return rows, true, nil
}
