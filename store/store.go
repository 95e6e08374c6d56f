// Package store keeps hrsync's own state: the people it knows per tenant, the
// ledger of balance grants, the journal of API calls, runs with their
// rejected rows, the source files already processed, and the locks that keep
// two runs of one job and tenant apart.
//
// Two back ends share one API and one test suite: SQLite (a file, the pure-Go
// driver modernc.org/sqlite; the default) and PostgreSQL (lib/pq through
// sqlx, every table in one named schema). The schema of each is created by
// embedded migrations applied with pressly/goose.
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
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/gofrs/flock"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	// The pure-Go SQLite driver, registered as "sqlite".
	_ "modernc.org/sqlite"
)

//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrations embed.FS

// DefaultSchema is the PostgreSQL schema that holds hrsync's tables when
// Options.Schema is empty.
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
	// Schema is the PostgreSQL schema that holds every table; it is created
	// if missing. Empty means DefaultSchema. Ignored on SQLite.
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
}

type dialect int

const (
	dialectSQLite dialect = iota + 1
	dialectPostgres
)

// Store is hrsync's state, on SQLite or PostgreSQL. It is safe for concurrent
// use. Close releases its connections.
type Store struct {
	dialect dialect
	// w is the pool for writes. On SQLite it has one connection (one
	// writer), and transactions begin IMMEDIATE.
	w *sqlx.DB
	// r is the pool for reads. On SQLite it is a separate pool of
	// query-only connections that read a WAL snapshot while the writer
	// works; on PostgreSQL it is the same pool as w.
	r *sqlx.DB
	// schema is the PostgreSQL schema ("" on SQLite).
	schema string
	// path is the SQLite database file ("" on PostgreSQL), next to which
	// lock files are made.
	path string
	now  func() time.Time
	// replica names this process in runs and ticks (Options.Replica).
	replica string
	// tempDir is the folder of an OpenEmpty store, removed by Close.
	tempDir string
	// readOnly is set by Options.ReadOnly on PostgreSQL, whose driver
	// begins explicit transactions READ WRITE unless told otherwise.
	readOnly bool
}

// Open connects to the state database named by dsn:
//
//   - "sqlite:PATH" or a bare file path: an SQLite file (created if missing),
//     in WAL mode with foreign keys on and a busy timeout;
//   - "postgres://..." or "postgresql://...": a PostgreSQL database, with
//     every table in the schema named by opts.Schema (created if missing).
//
// With opts.Migrate, pending migrations are applied before Open returns.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	var (
		s   *Store
		err error
	)
	switch {
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		s, err = openPostgres(ctx, dsn, opts)
	default:
		s, err = openSQLite(ctx, dsn, opts)
	}
	if err != nil {
		return nil, err
	}
	s.now, s.replica = now, opts.Replica
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

func openSQLite(ctx context.Context, dsn string, opts Options) (*Store, error) {
	path := strings.TrimPrefix(dsn, "sqlite:")
	if path != dsn {
		// "sqlite:///abs/file.db" and "sqlite://rel.db" are accepted too.
		path = strings.TrimPrefix(path, "//")
	}
	if path == "" {
		return nil, errors.New("open sqlite: empty path")
	}
	if strings.ContainsAny(path, "?#") || path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("open sqlite: unsupported path %q: give a plain file path", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	if opts.ReadOnly {
		return openSQLiteReadOnly(ctx, abs, opts)
	}
	if err := createPrivate(abs); err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	busy := opts.BusyTimeout
	if busy <= 0 {
		busy = 10 * time.Second
	}
	params := fmt.Sprintf("_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)"+
		"&_pragma=synchronous(NORMAL)&_time_format=sqlite", busy.Milliseconds())

	// sqlx picks its placeholder style from the driver name it is given; it
	// knows modernc's "sqlite" driver under the name "sqlite3".
	wdb, err := sql.Open("sqlite", abs+"?"+params+"&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	wdb.SetMaxOpenConns(1)
	wdb.SetConnMaxIdleTime(0)
	rdb, err := sql.Open("sqlite", abs+"?"+params+"&_pragma=query_only(1)")
	if err != nil {
		_ = wdb.Close()
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	rdb.SetMaxOpenConns(8)
	s := &Store{dialect: dialectSQLite, w: sqlx.NewDb(wdb, "sqlite3"), r: sqlx.NewDb(rdb, "sqlite3"), path: abs}
	// The writer connects first, so that the file exists and is in WAL
	// mode before a query-only reader opens it. Processes opening a new
	// file at once take turns: switching it to WAL needs it alone.
	err = s.withSetupLock(ctx, func() error {
		if err := s.w.PingContext(ctx); err != nil {
			return err
		}
		return s.r.PingContext(ctx)
	})
	if err == nil {
		err = companionModes(abs)
	}
	if err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	return s, nil
}

// createPrivate creates the SQLite state file empty with mode 0600 (only
// its owner may read it: it names people) when it does not exist yet, so
// that SQLite, which gives the -wal and -shm files the mode of the
// database file, creates them 0600 too, whatever the umask. An existing
// file keeps its mode.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create state file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("create state file: %w", err)
	}
	return nil
}

// companionModes gives the -wal and -shm files beside the state file no
// more access than the state file itself: files left by an earlier
// version, made with a wider mode, are narrowed.
func companionModes(path string) error {
	db, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("stat state file: %w", err)
	}
	allowed := db.Mode().Perm()
	for _, suffix := range []string{"-wal", "-shm"} {
		st, err := os.Stat(path + suffix)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("stat state file%s: %w", suffix, err)
		}
		if perm := st.Mode().Perm(); perm&^allowed != 0 {
			if err := os.Chmod(path+suffix, perm&allowed); err != nil {
				return fmt.Errorf("narrow the mode of state file%s: %w", suffix, err)
			}
		}
	}
	return nil
}

// readOnlyParams are the parameters of a read-only SQLite connection. It
// sets no journal mode: the file keeps the one it was made with.
func readOnlyParams(opts Options) string {
	busy := opts.BusyTimeout
	if busy <= 0 {
		busy = 10 * time.Second
	}
	return fmt.Sprintf("_pragma=busy_timeout(%d)&_pragma=foreign_keys(1)&_time_format=sqlite", busy.Milliseconds())
}

// openSQLiteReadOnly opens an existing SQLite file with query-only
// connections, creating nothing: no file, no lock file, no journal mode
// change.
func openSQLiteReadOnly(ctx context.Context, abs string, opts Options) (*Store, error) {
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &NoStateError{Where: abs}
	case err != nil:
		return nil, fmt.Errorf("open sqlite: %w", err)
	case fi.IsDir():
		return nil, fmt.Errorf("open sqlite: %s is a folder", abs)
	}
	db, err := sql.Open("sqlite", abs+"?"+readOnlyParams(opts)+"&_pragma=query_only(1)")
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	db.SetMaxOpenConns(8)
	x := sqlx.NewDb(db, "sqlite3")
	s := &Store{dialect: dialectSQLite, w: x, r: x, path: abs}
	if err := x.PingContext(ctx); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	return s, nil
}

// checkReadable checks that a read-only store holds hrsync's tables at the
// version this binary knows, without creating anything.
func (s *Store) checkReadable(ctx context.Context) error {
	where := s.path
	table := "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = $1"
	if s.dialect == dialectPostgres {
		where = "PostgreSQL schema " + s.schema
		table = "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = $1"
	}
	var n int
	if err := s.r.QueryRowxContext(ctx, s.r.Rebind(table), goose.DefaultTablename).Scan(&n); err != nil {
		return fmt.Errorf("read state version: %w", err)
	}
	if n == 0 {
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

// withSetupLock runs fn holding the SQLite file's setup lock, which
// processes opening or migrating the same file take in turn.
func (s *Store) withSetupLock(ctx context.Context, fn func() error) error {
	fl := flock.New(s.LockPath("migrate"))
	ok, err := fl.TryLockContext(ctx, 20*time.Millisecond)
	if err != nil || !ok {
		return fmt.Errorf("wait for the setup lock: %w", err)
	}
	defer func() { _ = fl.Close() }()
	return fn()
}

func openPostgres(ctx context.Context, dsn string, opts Options) (*Store, error) {
	schema := opts.Schema
	if schema == "" {
		schema = DefaultSchema
	}
	cfg, err := pq.NewConfig(dsn)
	if err != nil {
		// pq's message may quote the DSN, password included: keep it out.
		return nil, errors.New("open postgres: invalid connection URL")
	}
	if cfg.Runtime == nil {
		cfg.Runtime = map[string]string{}
	}
	// Every connection resolves unqualified names in the schema, so the
	// same SQL serves every schema and goose keeps its version table there.
	cfg.Runtime["search_path"] = pq.QuoteIdentifier(schema)
	if opts.ReadOnly {
		cfg.Runtime["default_transaction_read_only"] = "on"
	}
	conn, err := pq.NewConnectorConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	db := sqlx.NewDb(sql.OpenDB(conn), "postgres")
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(4)
	if opts.ReadOnly {
		return &Store{dialect: dialectPostgres, w: db, r: db, schema: schema, readOnly: true}, nil
	}
	if _, err := db.ExecContext(ctx, "CREATE SCHEMA IF NOT EXISTS "+pq.QuoteIdentifier(schema)); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("create schema: %w", err)
	}
	return &Store{dialect: dialectPostgres, w: db, r: db, schema: schema}, nil
}

// OpenEmpty returns a state with hrsync's tables and no rows, in a
// temporary SQLite file that Close removes: what a plan is made against
// before anything has run, without creating the configured state.
func OpenEmpty(ctx context.Context) (*Store, error) {
	dir, err := os.MkdirTemp("", "hrsync-empty-state-")
	if err != nil {
		return nil, fmt.Errorf("open empty state: %w", err)
	}
	s, err := Open(ctx, "sqlite:"+filepath.Join(dir, "empty.db"), Options{Migrate: true})
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
	if s.r != s.w && s.r != nil {
		errs = append(errs, s.r.Close())
	}
	if s.w != nil {
		errs = append(errs, s.w.Close())
	}
	if s.tempDir != "" {
		errs = append(errs, os.RemoveAll(s.tempDir))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close store: %w", err)
	}
	return nil
}

// Dialect names the back end: "sqlite" or "postgres".
func (s *Store) Dialect() string {
	if s.dialect == dialectPostgres {
		return "postgres"
	}
	return "sqlite"
}

// Schema is the PostgreSQL schema the store uses ("" on SQLite).
func (s *Store) Schema() string { return s.schema }

// provider builds a goose provider for the store's dialect over the embedded
// migrations. It uses no goose global state.
func (s *Store) provider() (*goose.Provider, error) {
	var (
		dir  string
		d    goose.Dialect
		opts = []goose.ProviderOption{goose.WithDisableGlobalRegistry(true)}
	)
	switch s.dialect {
	case dialectPostgres:
		dir, d = "migrations/postgres", goose.DialectPostgres
		// Two processes migrating the same schema at once wait for each
		// other; different schemas do not.
		locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(s.lockKey("migrate")))
		if err != nil {
			return nil, fmt.Errorf("migration locker: %w", err)
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	default:
		dir, d = "migrations/sqlite", goose.DialectSQLite3
	}
	fsys, err := fs.Sub(migrations, dir)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	p, err := goose.NewProvider(d, s.w.DB, fsys, opts...)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	return p, nil
}

// Migrate applies every pending migration. Running it again is a no-op.
// Two processes migrating the same database wait for each other: on
// PostgreSQL through goose's session lock, on SQLite through a file lock.
func (s *Store) Migrate(ctx context.Context) error {
	up := func() error {
		p, err := s.provider()
		if err != nil {
			return err
		}
		if _, err := p.Up(ctx); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		return nil
	}
	if s.dialect == dialectPostgres {
		return up()
	}
	return s.withSetupLock(ctx, up)
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

// lockKey maps a lock name to a PostgreSQL advisory lock key, distinct per
// schema so that two hrsync installations sharing a database do not block
// each other.
func (s *Store) lockKey(name string) int64 {
	return int64(xxhash.Sum64String("hrsync\x00" + s.schema + "\x00" + name))
}

// inTx runs fn in one write transaction and commits it, or rolls it back
// when fn fails.
func (s *Store) inTx(ctx context.Context, what string, fn func(tx *sqlx.Tx) error) error {
	var opts *sql.TxOptions
	if s.readOnly {
		opts = &sql.TxOptions{ReadOnly: true}
	}
	tx, err := s.w.BeginTxx(ctx, opts)
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
// snapshot of the database: on PostgreSQL a REPEATABLE READ READ ONLY
// transaction (a read-only one never fails to serialize), on SQLite a read
// transaction of the WAL, whose snapshot starts at its first read.
func (s *Store) inReadTx(ctx context.Context, what string, fn func(tx *sqlx.Tx) error) error {
	opts := &sql.TxOptions{}
	if s.dialect == dialectPostgres {
		opts = &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	}
	tx, err := s.r.BeginTxx(ctx, opts)
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
