package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/pressly/goose/v3"
)

// Driver is one SQL dialect behind the store: it opens connections for the
// DSNs of the schemes it registers (see Register). Each dialect lives in a
// package of its own (hrsync/store/sqlite, hrsync/store/postgres) that owns
// its SQL, migrations, locking, error mapping and capabilities; the store
// holds only what every dialect shares.
type Driver interface {
	// Name is the dialect's name, for display ("sqlite", "postgres").
	Name() string
	// Open connects to the database dsn names. With opts.ReadOnly it
	// creates nothing, and returns a *NoStateError when there is nothing
	// to read.
	Open(ctx context.Context, dsn string, opts Options) (Conn, error)
}

// EmptyOpener is implemented by a Driver that can hold a throwaway state in
// a folder: OpenEmpty uses it.
type EmptyOpener interface {
	// EmptyDSN is the DSN of a new state inside dir.
	EmptyDSN(dir string) string
}

// Capabilities are what a dialect can do that another may not. Callers ask a
// capability, never a dialect's name.
type Capabilities struct {
	// ClaimTicks tells that replicas sharing the state are a fleet: each
	// scheduled tick of a job and tenant is claimed (ClaimTick) by one of
	// them across hosts.
	ClaimTicks bool
	// AdvisoryLocks tells that TryLock's locks are held by the database
	// server (and so exclude processes on other hosts), not by files.
	AdvisoryLocks bool
}

// RowShape names a table a bulk merge writes: the columns it writes, the
// key, and the columns a new listing may change (updated_at moves with
// them).
type RowShape struct {
	Table          string
	Cols, Key, Set []string
}

// ChangedUpsert renders an ON CONFLICT clause that updates the shape's Set
// columns (and updated_at) only when one of them differs, so that an
// unchanged row is not written at all.
func (sh RowShape) ChangedUpsert() string {
	return changedUpsert(sh.Table, sh.Key, sh.Set)
}

// Conn is an open database of one dialect: the pools, and every statement
// or fragment whose text differs by dialect. The store calls it from within
// its own transactions; a Conn never commits or rolls back a transaction it
// is handed.
type Conn interface {
	// Writer is the pool for writes; Reader the pool for reads (it may be
	// the same pool). Their sqlx bind type is the dialect's.
	Writer() *sqlx.DB
	Reader() *sqlx.DB
	// Close releases the pools.
	Close() error

	// Name is the dialect's name, for display.
	Name() string
	// Schema is the schema that holds the tables ("" when the dialect has
	// none).
	Schema() string
	// Where says where the state lives, for messages (a file, a schema).
	Where() string
	// Capabilities tells what the dialect can do.
	Capabilities() Capabilities

	// Migrations are the dialect's embedded goose migrations, its goose
	// dialect, and provider options (a session locker, for example).
	Migrations() (fsys fs.FS, dialect goose.Dialect, opts []goose.ProviderOption, err error)
	// WithMigrateLock runs fn while no other process migrates the same
	// state, where the provider options do not see to it already.
	WithMigrateLock(ctx context.Context, fn func() error) error
	// HasTable tells whether the state holds the named table.
	HasTable(ctx context.Context, name string) (bool, error)

	// WriteTxOptions and ReadTxOptions are the options of the store's
	// write transactions and of its consistent read transactions.
	WriteTxOptions() *sql.TxOptions
	ReadTxOptions() *sql.TxOptions

	// TryLock takes the named lock without waiting (see Store.TryLock).
	TryLock(ctx context.Context, name string) (release func() error, err error)
	// LockPath is the file TryLock locks for name ("" when locks are not
	// files).
	LockPath(name string) string
	// TxLock makes transaction tx wait for, and hold until it ends, the
	// named lock; a dialect whose writers are serialized anyway does
	// nothing.
	TxLock(ctx context.Context, tx *sqlx.Tx, name string) error
	// IsUniqueViolation tells whether err is a unique or primary-key
	// violation.
	IsUniqueViolation(err error) bool

	// ForUpdate and ForKeyShare are the row-lock clauses appended to a
	// SELECT (with a leading space), or "" when the dialect locks no rows.
	ForUpdate() string
	ForKeyShare() string
	// PeopleScan is the FROM source of a scan of the whole people table
	// of a tenant.
	PeopleScan() string
	// PeopleScanParts splits a scan of PeopleScan into at most n parts
	// of about minRows rows or more that together select every row once,
	// read within tx: one condition per part (SQL with no placeholder), in
	// the order a whole scan reads the rows. A small table, or a dialect
	// that does not split a scan, has one part, the empty condition.
	PeopleScanParts(ctx context.Context, tx *sqlx.Tx, n, minRows int) ([]string, error)
	// PreparePeopleScan readies tx, a read transaction, to read a scan
	// of PeopleScan, or one of its parts, in the table's storage order,
	// as the parts are made to be read, where the dialect's planner could
	// pick another way.
	PreparePeopleScan(ctx context.Context, tx *sqlx.Tx) error
	// ForKeys calls fn with a condition on a text column matching keys
	// (for example "= ANY(?)" or "IN (?, ...)"), written with "?"
	// placeholders, and its arguments, once or in chunks.
	ForKeys(keys []string, fn func(cond string, args []any) error) error
	// BulkInsert writes n rows into table's cols within tx; row(i) gives
	// the values of row i in the order of cols. conflict, when not empty,
	// is an "ON CONFLICT ..." clause that makes it an upsert.
	BulkInsert(ctx context.Context, tx *sqlx.Tx, table string, cols []string, conflict string, n int, row func(i int) []any) error
	// UpsertCounted is BulkInsert that reports how many rows were inserted
	// or updated.
	UpsertCounted(ctx context.Context, tx *sqlx.Tx, table string, cols []string, conflict string, n int, row func(i int) []any) (int64, error)
	// MergeRows writes n rows of shape sh whose table may already hold
	// them: missing rows are inserted, stored ones that differ in sh.Set
	// are updated, and it returns how many rows were written.
	MergeRows(ctx context.Context, tx *sqlx.Tx, sh RowShape, n int, row func(i int) []any) (int64, error)
	// SetRemoteIDs records the platform ids (external id → remote id) of a
	// tenant's people, and at as their creation time where none is
	// recorded yet.
	SetRemoteIDs(ctx context.Context, tx *sqlx.Tx, tenant string, ids map[string]string, at time.Time) error
}

// The registry of drivers by DSN scheme. It is written only from the init
// functions of the dialect packages (Register) and read afterwards, like
// database/sql's driver registry; the mutex makes a late Register safe all
// the same.
//
//nolint:gochecknoglobals // the driver registry, written at init (see Register), like database/sql's
var registry = struct {
	sync.RWMutex
	schemes map[string]Driver
	paths   Driver // the driver of bare paths (RegisterPaths)
}{schemes: map[string]Driver{}}

// Register makes d the driver of DSNs "scheme:..." (and "scheme://...") for
// each scheme. A dialect package calls it from its init function, so that a
// program offers the dialects it blank-imports. Registering a scheme twice
// panics, as database/sql does.
func Register(d Driver, schemes ...string) {
	registry.Lock()
	defer registry.Unlock()
	for _, sc := range schemes {
		sc = strings.ToLower(sc)
		if _, dup := registry.schemes[sc]; dup || sc == "" {
			panic("store: Register of scheme " + sc + " twice or empty")
		}
		registry.schemes[sc] = d
	}
}

// RegisterPaths makes d the driver of DSNs with no scheme: bare file paths.
func RegisterPaths(d Driver) {
	registry.Lock()
	defer registry.Unlock()
	if registry.paths != nil {
		panic("store: RegisterPaths called twice")
	}
	registry.paths = d
}

// Drivers lists the registered schemes, sorted.
func Drivers() []string {
	registry.RLock()
	defer registry.RUnlock()
	return schemes()
}

// ErrNoDriver is returned by Open when no registered driver serves the DSN:
// the program did not import the dialect's package.
var ErrNoDriver = errors.New("no store driver")

// driverFor picks the driver of dsn by its scheme.
func driverFor(dsn string) (Driver, error) {
	registry.RLock()
	defer registry.RUnlock()
	sc, ok := scheme(dsn)
	if !ok {
		if registry.paths == nil {
			return nil, fmt.Errorf("open %q: %w for file paths: import a dialect package (hrsync/store/...)", dsn, ErrNoDriver)
		}
		return registry.paths, nil
	}
	d, found := registry.schemes[sc]
	if !found {
		// The scheme is not the DSN's: the scheme alone, never the rest
		// (which may hold a password), goes into the message.
		return nil, fmt.Errorf("open: %w for scheme %q (registered: %s): import its package (hrsync/store/...)",
			ErrNoDriver, sc, strings.Join(schemes(), ", "))
	}
	return d, nil
}

// schemes is Drivers for callers holding the registry's lock.
func schemes() []string {
	out := make([]string, 0, len(registry.schemes))
	for sc := range registry.schemes {
		out = append(out, sc)
	}
	slices.Sort(out)
	return out
}

// scheme returns the lower-cased URL scheme of dsn ("postgres" of
// "postgres://..."), and false for a bare path. One letter is a Windows
// drive, not a scheme.
func scheme(dsn string) (string, bool) {
	i := strings.IndexByte(dsn, ':')
	if i < 2 {
		return "", false
	}
	for j, r := range dsn[:i] {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case j > 0 && (r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.'):
		default:
			return "", false
		}
	}
	return strings.ToLower(dsn[:i]), true
}

// emptyOpener is the registered driver that can keep a state in a folder:
// the driver of bare paths first, else the first by scheme.
func emptyOpener() EmptyOpener {
	registry.RLock()
	defer registry.RUnlock()
	if eo, ok := registry.paths.(EmptyOpener); ok {
		return eo
	}
	for _, sc := range schemes() {
		if eo, ok := registry.schemes[sc].(EmptyOpener); ok {
			return eo
		}
	}
	return nil
}
