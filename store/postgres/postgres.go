// Package postgres is hrsync's PostgreSQL store dialect: lib/pq through
// sqlx, every table in one named schema, session advisory locks for
// TryLock, COPY for bulk writes, row locks, and ticks claimed across a
// fleet of replicas. It owns the dialect's SQL, its embedded migrations,
// its locks and its error mapping, and registers itself with hrsync/store
// from init for "postgres://" and "postgresql://" DSNs: a program offers
// PostgreSQL by blank-importing this package.
package postgres

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"

	"github.com/cespare/xxhash/v2"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/lib/pq/pqerror"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"hrsync/store"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Name is the dialect's name, as Store.Dialect reports it.
const Name = "postgres"

func init() {
	store.Register(Driver{}, "postgres", "postgresql")
}

// Driver opens PostgreSQL databases. It is registered for the "postgres"
// and "postgresql" schemes.
type Driver struct{}

// Name is "postgres".
func (Driver) Name() string { return Name }

// Open connects to the database dsn names, with every connection's
// search_path set to the schema opts.Schema names (created if missing,
// unless read-only).
func (Driver) Open(ctx context.Context, dsn string, opts store.Options) (store.Conn, error) {
	schema := opts.Schema
	if schema == "" {
		schema = store.DefaultSchema
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
	// The foreign-key checks and the triggers run statements whose plans
	// the server caches per connection: planned while a tenant's people
	// table was still small (a first import), the check of each grant's
	// person stayed a scan of the whole table, so every batch's intent
	// took longer as the table grew, holding the tenant's people_versions
	// row (see docs/benchmarks.md, item 5). Planning them for their values
	// each time costs microseconds. A DSN that sets plan_cache_mode wins.
	if _, set := cfg.Runtime["plan_cache_mode"]; !set {
		cfg.Runtime["plan_cache_mode"] = "force_custom_plan"
	}
	connector, err := pq.NewConnectorConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	db := sqlx.NewDb(sql.OpenDB(connector), "postgres")
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(4)
	c := &conn{db: db, schema: schema, readOnly: opts.ReadOnly}
	if opts.ReadOnly {
		return c, nil
	}
	if _, err := db.ExecContext(ctx, "CREATE SCHEMA IF NOT EXISTS "+pq.QuoteIdentifier(schema)); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("create schema: %w", err)
	}
	return c, nil
}

// conn is an open PostgreSQL schema.
type conn struct {
	// db serves both reads and writes.
	db     *sqlx.DB
	schema string
	// readOnly is set by Options.ReadOnly: lib/pq begins explicit
	// transactions READ WRITE unless told otherwise.
	readOnly bool
}

func (c *conn) Writer() *sqlx.DB { return c.db }
func (c *conn) Reader() *sqlx.DB { return c.db }
func (c *conn) Close() error     { return c.db.Close() }
func (c *conn) Name() string     { return Name }
func (c *conn) Schema() string   { return c.schema }
func (c *conn) Where() string    { return "PostgreSQL schema " + c.schema }

// Capabilities: replicas sharing a schema are a fleet that claims ticks,
// and locks are the server's advisory locks.
func (c *conn) Capabilities() store.Capabilities {
	return store.Capabilities{ClaimTicks: true, AdvisoryLocks: true}
}

// lockKey maps a lock name to an advisory lock key, distinct per schema so
// that two hrsync installations sharing a database do not block each other.
func (c *conn) lockKey(name string) int64 {
	return int64(xxhash.Sum64String("hrsync\x00" + c.schema + "\x00" + name))
}

// Migrations come with goose's session locker: two processes migrating the
// same schema at once wait for each other; different schemas do not.
func (c *conn) Migrations() (fs.FS, goose.Dialect, []goose.ProviderOption, error) {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return nil, "", nil, fmt.Errorf("migrations: %w", err)
	}
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(c.lockKey("migrate")))
	if err != nil {
		return nil, "", nil, fmt.Errorf("migration locker: %w", err)
	}
	return fsys, goose.DialectPostgres, []goose.ProviderOption{goose.WithSessionLocker(locker)}, nil
}

// WithMigrateLock runs fn: goose's session locker (Migrations) already
// keeps migrations apart.
func (c *conn) WithMigrateLock(_ context.Context, fn func() error) error { return fn() }

func (c *conn) HasTable(ctx context.Context, name string) (bool, error) {
	var n int
	err := c.db.QueryRowxContext(ctx,
		"SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = $1", name).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("read tables: %w", err)
	}
	return n > 0, nil
}

// WriteTxOptions are READ ONLY on a read-only open.
func (c *conn) WriteTxOptions() *sql.TxOptions {
	if c.readOnly {
		return &sql.TxOptions{ReadOnly: true}
	}
	return nil
}

// ReadTxOptions are REPEATABLE READ READ ONLY: one snapshot, and a
// read-only transaction never fails to serialize.
func (c *conn) ReadTxOptions() *sql.TxOptions {
	return &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
}

// IsUniqueViolation tells whether err is SQLSTATE 23505.
func (c *conn) IsUniqueViolation(err error) bool {
	return pq.As(err, pqerror.UniqueViolation) != nil
}

// ForUpdate locks the selected rows until commit.
func (c *conn) ForUpdate() string { return " FOR UPDATE" }

// ForKeyShare locks the selected rows against deletion until commit, as a
// foreign key check would.
func (c *conn) ForKeyShare() string { return " FOR KEY SHARE" }

// PeopleScan is the plain table.
func (c *conn) PeopleScan() string { return "people" }

// ForKeys calls fn once with "= ANY(?)" and the keys as one array.
func (c *conn) ForKeys(keys []string, fn func(cond string, args []any) error) error {
	if len(keys) == 0 {
		return nil
	}
	return fn("= ANY(?)", []any{pq.Array(keys)})
}

// TxLock takes a transaction advisory lock on the name, per schema.
func (c *conn) TxLock(ctx context.Context, tx *sqlx.Tx, name string) error {
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", c.lockKey(name)); err != nil {
		return fmt.Errorf("lock %s: %w", name, err)
	}
	return nil
}
