// Package sqlite is hrsync's SQLite store dialect: a state file opened with
// the pure-Go driver modernc.org/sqlite, in WAL mode with one writer
// connection and a pool of query-only readers, locked with file locks
// beside it. It owns the dialect's SQL, its embedded migrations, its locks
// and its error mapping, and registers itself with hrsync/store from init
// for "sqlite:PATH" DSNs and bare file paths: a program offers SQLite by
// blank-importing this package.
package sqlite

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

	"github.com/gofrs/flock"
	"github.com/jmoiron/sqlx"
	"github.com/pressly/goose/v3"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"hrsync/store"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Name is the dialect's name, as Store.Dialect reports it.
const Name = "sqlite"

func init() {
	store.Register(Driver{}, "sqlite")
	store.RegisterPaths(Driver{})
}

// Driver opens SQLite state files. It is registered for the "sqlite"
// scheme and for bare paths.
type Driver struct{}

// Name is "sqlite".
func (Driver) Name() string { return Name }

// EmptyDSN is a state file inside dir (store.OpenEmpty).
func (Driver) EmptyDSN(dir string) string { return "sqlite:" + filepath.Join(dir, "empty.db") }

// Path is the file a DSN of this driver names ("sqlite:PATH",
// "sqlite://PATH" or a bare PATH), made absolute.
func Path(dsn string) (string, error) {
	path := strings.TrimPrefix(dsn, "sqlite:")
	if path != dsn {
		// "sqlite:///abs/file.db" and "sqlite://rel.db" are accepted too.
		path = strings.TrimPrefix(path, "//")
	}
	if path == "" {
		return "", errors.New("open sqlite: empty path")
	}
	if strings.ContainsAny(path, "?#") || path == ":memory:" || strings.HasPrefix(path, "file:") {
		return "", fmt.Errorf("open sqlite: unsupported path %q: give a plain file path", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("open sqlite: %w", err)
	}
	return abs, nil
}

// Open opens (and, unless read-only, creates) the state file dsn names.
func (Driver) Open(ctx context.Context, dsn string, opts store.Options) (store.Conn, error) {
	abs, err := Path(dsn)
	if err != nil {
		return nil, err
	}
	if opts.ReadOnly {
		return openReadOnly(ctx, abs, opts)
	}
	if err := createPrivate(abs); err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	params := fmt.Sprintf("_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)"+
		"&_pragma=synchronous(NORMAL)&_time_format=sqlite", busyTimeout(opts).Milliseconds())

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
	c := &conn{w: sqlx.NewDb(wdb, "sqlite3"), r: sqlx.NewDb(rdb, "sqlite3"), path: abs}
	// The writer connects first, so that the file exists and is in WAL
	// mode before a query-only reader opens it. Processes opening a new
	// file at once take turns: switching it to WAL needs it alone.
	err = c.WithMigrateLock(ctx, func() error {
		if err := c.w.PingContext(ctx); err != nil {
			return err
		}
		return c.r.PingContext(ctx)
	})
	if err == nil {
		err = companionModes(abs)
	}
	if err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	return c, nil
}

func busyTimeout(opts store.Options) time.Duration {
	if opts.BusyTimeout <= 0 {
		return 10 * time.Second
	}
	return opts.BusyTimeout
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

// openReadOnly opens an existing SQLite file with query-only connections,
// creating nothing: no file, no lock file, no journal mode change (the file
// keeps the one it was made with).
func openReadOnly(ctx context.Context, abs string, opts store.Options) (store.Conn, error) {
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &store.NoStateError{Where: abs}
	case err != nil:
		return nil, fmt.Errorf("open sqlite: %w", err)
	case fi.IsDir():
		return nil, fmt.Errorf("open sqlite: %s is a folder", abs)
	}
	params := fmt.Sprintf("_pragma=busy_timeout(%d)&_pragma=foreign_keys(1)&_time_format=sqlite", busyTimeout(opts).Milliseconds())
	db, err := sql.Open("sqlite", abs+"?"+params+"&_pragma=query_only(1)")
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	db.SetMaxOpenConns(8)
	x := sqlx.NewDb(db, "sqlite3")
	c := &conn{w: x, r: x, path: abs}
	if err := x.PingContext(ctx); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	return c, nil
}

// conn is an open SQLite state file.
type conn struct {
	// w has one connection (one writer), whose transactions begin
	// IMMEDIATE; r is a pool of query-only connections that read a WAL
	// snapshot while the writer works (the same pool when read-only).
	w, r *sqlx.DB
	// path is the database file, next to which lock files are made.
	path string
}

func (c *conn) Writer() *sqlx.DB { return c.w }
func (c *conn) Reader() *sqlx.DB { return c.r }
func (c *conn) Name() string     { return Name }
func (c *conn) Schema() string   { return "" }
func (c *conn) Where() string    { return c.path }

// Capabilities: one host's file, locked with file locks; no fleet.
func (c *conn) Capabilities() store.Capabilities { return store.Capabilities{} }

func (c *conn) Close() error {
	var errs []error
	if c.r != c.w && c.r != nil {
		errs = append(errs, c.r.Close())
	}
	if c.w != nil {
		errs = append(errs, c.w.Close())
	}
	return errors.Join(errs...)
}

func (c *conn) Migrations() (fs.FS, goose.Dialect, []goose.ProviderOption, error) {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return nil, "", nil, fmt.Errorf("migrations: %w", err)
	}
	return fsys, goose.DialectSQLite3, nil, nil
}

// WithMigrateLock runs fn holding the file's setup lock, which processes
// opening or migrating the same file take in turn.
func (c *conn) WithMigrateLock(ctx context.Context, fn func() error) error {
	fl := flock.New(c.LockPath("migrate"))
	ok, err := fl.TryLockContext(ctx, 20*time.Millisecond)
	if err != nil || !ok {
		return fmt.Errorf("wait for the setup lock: %w", err)
	}
	defer func() { _ = fl.Close() }()
	return fn()
}

func (c *conn) HasTable(ctx context.Context, name string) (bool, error) {
	var n int
	err := c.r.QueryRowxContext(ctx, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?", name).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("read tables: %w", err)
	}
	return n > 0, nil
}

// WriteTxOptions: the writer's transactions begin IMMEDIATE (set on the
// connection); read-only opens refuse writes on every connection.
func (c *conn) WriteTxOptions() *sql.TxOptions { return nil }

// ReadTxOptions: a read transaction of the WAL, whose snapshot starts at
// its first read.
func (c *conn) ReadTxOptions() *sql.TxOptions { return &sql.TxOptions{} }

// IsUniqueViolation tells whether err is a UNIQUE or PRIMARY KEY
// constraint failure.
func (c *conn) IsUniqueViolation(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		code := se.Code()
		return code == sqlite3.SQLITE_CONSTRAINT_UNIQUE || code == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

// ForUpdate is empty: SQLite has one writer, whose IMMEDIATE transaction
// already excludes every other.
func (c *conn) ForUpdate() string { return "" }

// ForKeyShare is empty, as ForUpdate.
func (c *conn) ForKeyShare() string { return "" }

// PeopleScan reads the people table in page order: through the (tenant,
// external_id) index SQLite would seek the table once per row, in random
// page order; a scan of the table is several times faster on a large state.
func (c *conn) PeopleScan() string { return "people NOT INDEXED" }

// TxLock does nothing: SQLite's one writer serializes write transactions.
func (c *conn) TxLock(context.Context, *sqlx.Tx, string) error { return nil }
