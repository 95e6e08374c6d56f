// Package store keeps hrsync's own state: the people it knows per tenant, the
// ledger of balance grants, the journal of API calls, runs with their
// rejected rows, the source files already processed, the tenants' SCIM
// directories (SCIMDirectory), and the locks that keep two runs of one job
// and tenant apart.
//
// Back ends are drivers (Driver), one package per SQL dialect, that
// register themselves by DSN scheme from their init function: hrsync ships
// hrsync/store/sqlite (a file; the default) and hrsync/store/postgres
// (every table in one named schema), and a program blank-imports the ones
// it offers. Each dialect owns its SQL, its embedded migrations (applied
// with pressly/goose), its locking, error mapping and capabilities; this
// package holds only what every dialect shares, and no dialect's name.
// One shared test suite (hrsync/store/drivertest) runs on every dialect.
//
// Every method takes a context and runs in exactly one transaction (or one
// read), so a crash between two calls never leaves half of an operation
// committed. The grant ledger enforces DESIGN.md's invariant 1: a grant's
// intent is committed before its API call (BeginBatch) and its outcome after
// (FinishBatch); a grant whose outcome is not known is never made pending
// again except by an operator (ReleaseGrant) or by an explicit resend of the
// very same batch (BeginResend). Grants and calls belong to the job that
// made them (Scope): a job's recovery steps never touch another job's.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/pressly/goose/v3"
)

// DefaultSchema is the schema that holds hrsync's tables when
// Options.Schema is empty, on a dialect with schemas.
const DefaultSchema = "hrsync"

// Errors a caller may test for with errors.Is.
var (
	// ErrNotFound is returned when a named row (grant, run, journal entry)
	// does not exist.
	ErrNotFound = errors.New("not found")
	// ErrGrantConflict is returned by BeginBatch when a grant of the batch
	// already exists in a state that forbids sending it again.
	ErrGrantConflict = errors.New("grant already recorded")
	// ErrGrantState is returned when a grant transition is not allowed from
	// the grant's current state.
	ErrGrantState = errors.New("grant transition not allowed")
	// ErrJournalState is returned when a journal entry is not in a state
	// that allows the operation.
	ErrJournalState = errors.New("journal entry in wrong state")
	// ErrRunState is returned when a run is finished twice.
	ErrRunState = errors.New("run already finished")
	// ErrFileProcessed is returned by FinishRun when the source file's hash
	// was already recorded as processed for the tenant.
	ErrFileProcessed = errors.New("source file already processed")
	// ErrNotApprovable is returned by FinishRun with an Approval for an
	// export no safeguard stopped, or whose approval was used already.
	ErrNotApprovable = errors.New("export not stopped by a safeguard, or its approval used")
	// ErrNoState is returned by Open with Options.ReadOnly when there is no
	// state to read: no SQLite file, or no hrsync tables in it or in the
	// PostgreSQL schema. The error is a *NoStateError saying where.
	ErrNoState = errors.New("no state yet")
	// ErrStateOutdated is returned by Open with Options.ReadOnly when the
	// state's tables are older than this binary: `hrsync migrate` (or any
	// run) upgrades them.
	ErrStateOutdated = errors.New("state tables older than this binary")
)

// NoStateError is ErrNoState with the place the state was looked for.
type NoStateError struct {
	// Where is the SQLite file or the PostgreSQL schema.
	Where string
}

// Error says where no state was found.
func (e *NoStateError) Error() string { return "no state yet at " + e.Where }

// Is makes errors.Is(err, ErrNoState) true.
func (e *NoStateError) Is(target error) bool { return target == ErrNoState }

// Options tune Open.
type Options struct {
	// Schema is the schema that holds every table, on a dialect with
	// schemas (PostgreSQL); it is created if missing. Empty means
	// DefaultSchema. Ignored by dialects without schemas.
	Schema string
	// Migrate applies pending migrations during Open.
	Migrate bool
	// ReadOnly opens existing state for reading and creates nothing: no
	// SQLite file, lock file or PostgreSQL schema, and no migration (Migrate
	// is ignored). State that does not exist yet is ErrNoState; tables
	// older than this binary are ErrStateOutdated. Every connection refuses
	// writes.
	ReadOnly bool
	// BusyTimeout is how long a SQLite connection waits for another
	// process's write lock before failing. Zero means 10 seconds.
	BusyTimeout time.Duration
	// Now is the clock used for timestamps the store sets itself
	// (updated_at, finished_at when the caller gives none). Nil means
	// time.Now.
	Now func() time.Time
	// Replica names this process in the runs it records and the ticks it
	// claims (for example host name and process id); empty records none.
	Replica string
	// ScanPartRows is about the fewest people a part of a scan in parts
	// (ScanPeopleKeysParts) reads: a smaller table is read in fewer parts,
	// or one. Zero means DefaultScanPartRows; tests set it lower, to split
	// small tables.
	ScanPartRows int
}

// DefaultScanPartRows is Options.ScanPartRows when it is zero: a part of
// fewer people is not worth its connection.
const DefaultScanPartRows = 50_000

// Store is hrsync's state, on one of the registered dialects. It is safe
// for concurrent use. Close releases its connections.
type Store struct {
	// db is the dialect's open database: every statement that differs by
	// dialect goes through it.
	db Conn
	// w is the pool for writes, r the pool for reads (see Conn).
	w, r *sqlx.DB
	now  func() time.Time
	// replica names this process in runs and ticks (Options.Replica).
	replica string
	// scanPartRows is Options.ScanPartRows, defaulted.
	scanPartRows int
	// tempDir is the folder of an OpenEmpty store, removed by Close.
	tempDir string
}

// Open connects to the state database named by dsn, through the driver
// registered for its scheme (see Register): with the dialects hrsync ships,
//
//   - "sqlite:PATH" or a bare file path: an SQLite file (hrsync/store/sqlite);
//   - "postgres://..." or "postgresql://...": a PostgreSQL database, with
//     every table in the schema named by opts.Schema (hrsync/store/postgres).
//
// A DSN no imported dialect serves is ErrNoDriver. With opts.Migrate,
// pending migrations are applied before Open returns.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	d, err := driverFor(dsn)
	if err != nil {
		return nil, err
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	db, err := d.Open(ctx, dsn, opts)
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, w: db.Writer(), r: db.Reader(), now: now, replica: opts.Replica, scanPartRows: opts.ScanPartRows}
	if s.scanPartRows <= 0 {
		s.scanPartRows = DefaultScanPartRows
	}
	if opts.ReadOnly {
		if err := s.checkReadable(ctx); err != nil {
			_ = s.Close()
			return nil, err
		}
		return s, nil
	}
	if opts.Migrate {
		if err := s.Migrate(ctx); err != nil {
			_ = s.Close()
			return nil, err
		}
	}
	return s, nil
}

// checkReadable checks that a read-only store holds hrsync's tables at the
// version this binary knows, without creating anything.
func (s *Store) checkReadable(ctx context.Context) error {
	where := s.db.Where()
	ok, err := s.db.HasTable(ctx, goose.DefaultTablename)
	if err != nil {
		return fmt.Errorf("read state version: %w", err)
	}
	if !ok {
		return &NoStateError{Where: where}
	}
	var current sql.NullInt64
	q := "SELECT MAX(version_id) FROM " + goose.DefaultTablename + " WHERE is_applied"
	if err := s.r.QueryRowxContext(ctx, q).Scan(&current); err != nil {
		return fmt.Errorf("read state version: %w", err)
	}
	if current.Int64 == 0 {
		return &NoStateError{Where: where}
	}
	latest, err := s.latestMigration()
	if err != nil {
		return err
	}
	if current.Int64 < latest {
		return fmt.Errorf("%s: version %d of %d: %w", where, current.Int64, latest, ErrStateOutdated)
	}
	return nil
}

// latestMigration is the newest migration version this binary has.
func (s *Store) latestMigration() (int64, error) {
	p, err := s.provider()
	if err != nil {
		return 0, err
	}
	srcs := p.ListSources()
	if len(srcs) == 0 {
		return 0, errors.New("migrations: none embedded")
	}
	return srcs[len(srcs)-1].Version, nil
}

// OpenEmpty returns a state with hrsync's tables and no rows, in a
// temporary folder that Close removes: what a plan is made against before
// anything has run, without creating the configured state. It uses the
// registered driver that can hold a state in a folder (EmptyOpener).
func OpenEmpty(ctx context.Context) (*Store, error) {
	eo := emptyOpener()
	if eo == nil {
		return nil, fmt.Errorf("open empty state: %w that keeps a state in a folder", ErrNoDriver)
	}
	dir, err := os.MkdirTemp("", "hrsync-empty-state-")
	if err != nil {
		return nil, fmt.Errorf("open empty state: %w", err)
	}
	s, err := Open(ctx, eo.EmptyDSN(dir), Options{Migrate: true})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("open empty state: %w", err)
	}
	s.tempDir = dir
	return s, nil
}

// Close releases the store's connections. Locks taken with TryLock should be
// released first.
func (s *Store) Close() error {
	var errs []error
	if s.db != nil {
		errs = append(errs, s.db.Close())
	}
	if s.tempDir != "" {
		errs = append(errs, os.RemoveAll(s.tempDir))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close store: %w", err)
	}
	return nil
}

// Dialect is the name its driver gives the back end ("sqlite",
// "postgres"), for display. Behaviour that depends on the back end asks
// Capabilities instead.
func (s *Store) Dialect() string { return s.db.Name() }

// Capabilities tells what the store's back end can do.
func (s *Store) Capabilities() Capabilities { return s.db.Capabilities() }

// Schema is the schema that holds the store's tables ("" when its dialect
// has none, as on SQLite).
func (s *Store) Schema() string { return s.db.Schema() }

// provider builds a goose provider over the dialect's embedded migrations.
// It uses no goose global state.
func (s *Store) provider() (*goose.Provider, error) {
	fsys, d, opts, err := s.db.Migrations()
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	opts = append(opts, goose.WithDisableGlobalRegistry(true))
	p, err := goose.NewProvider(d, s.w.DB, fsys, opts...)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	return p, nil
}

// Migrate applies every pending migration. Running it again is a no-op.
// Two processes migrating the same database wait for each other (how is
// the dialect's: a session lock, a file lock).
func (s *Store) Migrate(ctx context.Context) error {
	return s.db.WithMigrateLock(ctx, func() error {
		p, err := s.provider()
		if err != nil {
			return err
		}
		if _, err := p.Up(ctx); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		return nil
	})
}

// MigrationVersion reports the schema version applied and the newest version
// the binary knows.
func (s *Store) MigrationVersion(ctx context.Context) (current, latest int64, err error) {
	p, err := s.provider()
	if err != nil {
		return 0, 0, err
	}
	current, latest, err = p.GetVersions(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("migration version: %w", err)
	}
	return current, latest, nil
}

// inTx runs fn in one write transaction and commits it, or rolls it back
// when fn fails.
func (s *Store) inTx(ctx context.Context, what string, fn func(tx *sqlx.Tx) error) error {
	tx, err := s.w.BeginTxx(ctx, s.db.WriteTxOptions())
	if err != nil {
		return fmt.Errorf("%s: begin: %w", what, err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: commit: %w", what, err)
	}
	return nil
}

// inReadTx runs fn in one read-only transaction that sees one consistent
// snapshot of the database (the dialect's ReadTxOptions say how).
func (s *Store) inReadTx(ctx context.Context, what string, fn func(tx *sqlx.Tx) error) error {
	tx, err := s.r.BeginTxx(ctx, s.db.ReadTxOptions())
	if err != nil {
		return fmt.Errorf("%s: begin: %w", what, err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := fn(tx); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// stamp is the store's clock, truncated to what both back ends keep.
func (s *Store) stamp() time.Time { return ts(s.now()) }

// ts normalizes a timestamp before it is written: UTC, microseconds (the
// precision of PostgreSQL's timestamptz).
func ts(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// nullTS is ts for a nullable column: the zero time is NULL.
func nullTS(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return ts(t)
}

// nullDate writes a calendar date as "YYYY-MM-DD", the zero time as NULL.
func nullDate(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.Format("2006-01-02")
}

// nullStr writes "" as NULL.
func nullStr(v string) any {
	if v == "" {
		return nil
	}
	return v
}

// dbTime scans a timestamp or date from either back end: a time.Time (lib/pq,
// or modernc for declared DATE/TIMESTAMP columns), a string or bytes in one
// of SQLite's text layouts, or NULL (the zero time).
type dbTime struct{ time.Time }

func timeLayouts() []string {
	return []string{
		"2006-01-02 15:04:05.999999999-07:00",
		"2006-01-02T15:04:05.999999999-07:00",
		time.RFC3339Nano,
		"2006-01-02 15:04:05.999999999",
		"2006-01-02T15:04:05.999999999",
		"2006-01-02",
	}
}

// Scan implements sql.Scanner.
func (d *dbTime) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		d.Time = time.Time{}
		return nil
	case time.Time:
		d.Time = x.UTC()
		return nil
	case []byte:
		return d.parse(string(x))
	case string:
		return d.parse(x)
	default:
		return fmt.Errorf("scan time: unsupported type %T", v)
	}
}

func (d *dbTime) parse(v string) error {
	for _, l := range timeLayouts() {
		if t, err := time.Parse(l, v); err == nil {
			d.Time = t.UTC()
			return nil
		}
	}
	return fmt.Errorf("scan time: unknown layout %q", v)
}

// date is the value as a calendar date: UTC midnight, or zero.
func (d dbTime) date() time.Time {
	if d.IsZero() {
		return time.Time{}
	}
	y, m, dd := d.Date()
	return time.Date(y, m, dd, 0, 0, 0, 0, time.UTC)
}
