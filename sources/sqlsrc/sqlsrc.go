// Package sqlsrc reads people from the HR database with a configured query,
// on PostgreSQL (lib/pq, driver "postgres") or MySQL and MariaDB
// (go-sql-driver/mysql, driver "mysql").
//
// Result columns are mapped by the same sources.Mapping as CSV headers,
// matched without regard to case. Dates may be DATE, DATETIME or TIMESTAMP
// values, or text read with the column's configured layout. Rows are
// streamed (rows.Next); the "line" of a rejection is the 1-based row
// number and its source "sql:<name>".
//
// The query runs once, in a read-only transaction: one statement sees one
// snapshot of the data on both databases. Its rows are scanned in order
// and checked in batches on every processor (sources.Run).
package sqlsrc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/lib/pq" // registers the "postgres" driver

	"hrsync/model"
	"hrsync/sources"
)

// Source satisfies sources.Source.
var _ sources.Source = (*Source)(nil)

// Source is a query against the HR database; it satisfies sources.Source.
type Source struct {
	name  string
	db    *sql.DB
	owned bool // db was opened by Open and is closed by Close
	opts  sources.SQLOptions
	now   func() time.Time
}

// New returns a source that runs opts.Query on db; opts.Driver says which
// dialect db speaks, opts.DSN is not used. name names the source in
// rejections as "sql:<name>".
func New(db *sql.DB, name string, opts sources.SQLOptions) (*Source, error) {
	var errs []error
	for _, err := range opts.Validate() {
		var fe *sources.FieldError
		if errors.As(err, &fe) && fe.Path == "dsn" {
			continue
		}
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("sql options: %w", errors.Join(errs...))
	}
	return &Source{name: "sql:" + name, db: db, opts: opts, now: time.Now}, nil
}

// Open connects to the database of opts.DSN, checks the connection and
// returns a source that owns it (Close closes it). Errors never hold the
// DSN or its password.
func Open(ctx context.Context, name string, opts sources.SQLOptions) (*Source, error) {
	if errs := opts.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("sql options: %w", errors.Join(errs...))
	}
	db, err := sql.Open(opts.Driver, opts.DSN)
	if err != nil {
		return nil, fmt.Errorf("open %s database: %w", opts.Driver, redact(err, opts.DSN))
	}
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("connect to %s database: %w", opts.Driver, redact(err, opts.DSN))
	}
	s, err := New(db, name, opts)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	s.owned = true
	return s, nil
}

// Close closes the database if Open opened it.
func (s *Source) Close() error {
	if !s.owned {
		return nil
	}
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close database: %w", err)
	}
	return nil
}

// Name is "sql:<name>", the source of rejections.
func (s *Source) Name() string { return s.name }

// Read runs the query and validates its rows; see sources.Source.
func (s *Source) Read(ctx context.Context, h sources.Handler) (sources.Stats, error) {
	v, err := sources.NewValidator(s.name, s.opts.Mapping, s.now())
	if err != nil {
		return sources.Stats{}, err
	}
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return sources.Stats{}, fmt.Errorf("%s: begin read-only transaction: %w", s.name, err)
	}
	defer tx.Rollback() //nolint:errcheck // read only: nothing to keep
	rows, err := tx.QueryContext(ctx, s.opts.Query)
	if err != nil {
		return sources.Stats{}, fmt.Errorf("%s: run query: %w", s.name, err)
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		return sources.Stats{}, fmt.Errorf("%s: read columns: %w", s.name, err)
	}
	index, err := s.mapColumns(types)
	if err != nil {
		return sources.Stats{}, err
	}
	rd := &resultRows{name: s.name, rows: rows, types: types, index: index,
		vals: make([]any, len(types)), ptrs: make([]any, len(types))}
	for i := range rd.vals {
		rd.ptrs[i] = &rd.vals[i]
	}
	st, err := sources.Run(ctx, v, rd, h)
	if err == nil {
		if err = rows.Err(); err != nil { // Next checks it too; a read that ended early is an error
			err = fmt.Errorf("%s: read rows: %w", s.name, err)
		}
	}
	return st, err
}

// resultRows reads a query's rows for sources.Run.
type resultRows struct {
	name  string
	rows  *sql.Rows
	types []*sql.ColumnType
	index [sources.NumFields]int
	vals  []any
	ptrs  []any
	n     int // rows read
}

// Next scans up to sources.BatchLen rows into b.
func (rr *resultRows) Next(_ context.Context, b *sources.Batch) error {
	b.Rows = b.Rows[:0]
	for len(b.Rows) < sources.BatchLen && rr.rows.Next() {
		rr.n++
		if err := rr.rows.Scan(rr.ptrs...); err != nil {
			return fmt.Errorf("%s: scan row %d: %w", rr.name, rr.n, err)
		}
		r := sources.Row{Line: rr.n, Blank: true}
		for _, v := range rr.vals {
			if text(v) != "" {
				r.Blank = false
				break
			}
		}
		for f := range sources.NumFields {
			i := rr.index[f]
			if i < 0 {
				continue
			}
			if f.IsDate() {
				r.Date[f], r.Text[f] = dateValue(rr.vals[i], rr.types[i].DatabaseTypeName())
			} else {
				r.Text[f] = text(rr.vals[i])
			}
		}
		b.Rows = append(b.Rows, r)
	}
	if err := rr.rows.Err(); err != nil {
		return fmt.Errorf("%s: read rows: %w", rr.name, err)
	}
	if len(b.Rows) == 0 {
		return io.EOF
	}
	return nil
}

// Fill has nothing to do: Next scans whole rows.
func (rr *resultRows) Fill(*sources.Batch) error { return nil }

// mapColumns finds each configured column in the result set.
func (s *Source) mapColumns(types []*sql.ColumnType) ([sources.NumFields]int, error) {
	var index [sources.NumFields]int
	byName := map[string][]int{}
	found := make([]string, len(types))
	for i, t := range types {
		found[i] = t.Name()
		key := sources.NormalizeHeader(t.Name())
		byName[key] = append(byName[key], i)
	}
	var missing, twice []string
	for f := range sources.NumFields {
		index[f] = -1
		col := s.opts.Mapping.Columns[f.String()]
		if strings.TrimSpace(col) == "" {
			continue
		}
		switch at := byName[sources.NormalizeHeader(col)]; len(at) {
		case 0:
			missing = append(missing, col)
		case 1:
			index[f] = at[0]
		default:
			twice = append(twice, col)
		}
	}
	if len(missing) > 0 || len(twice) > 0 {
		return index, &sources.ColumnsError{Source: s.name, Missing: missing, Duplicated: twice, Found: found}
	}
	return index, nil
}

// text renders a scanned value as the text a CSV export would hold.
// NULL is "".
func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case []byte:
		return string(x)
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		return x.Format(model.DateLayout)
	}
	return fmt.Sprint(v)
}

// dateValue returns a native date, or the text to parse with the column's
// layout. A date-typed column scanned as text (MySQL without parseTime)
// is read as the ISO date it starts with.
func dateValue(v any, dbType string) (time.Time, string) {
	if t, ok := v.(time.Time); ok {
		return t, ""
	}
	s := strings.TrimSpace(text(v))
	switch strings.ToUpper(dbType) {
	case "DATE", "DATETIME", "TIMESTAMP", "TIMESTAMPTZ":
		if len(s) >= 10 {
			if t, err := time.Parse(model.DateLayout, s[:10]); err == nil {
				return t, ""
			}
		}
		if strings.HasPrefix(s, "0000-00-00") { // MySQL's zero date: not given
			return time.Time{}, ""
		}
	}
	return time.Time{}, s
}

// redact keeps the DSN and its password out of an error from opening a
// connection: URL parse errors, for one, quote the URL whole.
func redact(err error, dsn string) error {
	msg := err.Error()
	secrets := []string{dsn}
	if u, perr := url.Parse(dsn); perr == nil && u.User != nil {
		if p, ok := u.User.Password(); ok {
			secrets = append(secrets, p)
		}
	}
	if cfg, perr := mysql.ParseDSN(dsn); perr == nil && cfg.Passwd != "" {
		secrets = append(secrets, cfg.Passwd)
	}
	if i := strings.Index(dsn, "password="); i >= 0 { // key=value form of lib/pq
		p := dsn[i+len("password="):]
		if j := strings.IndexAny(p, " \t"); j >= 0 {
			p = p[:j]
		}
		secrets = append(secrets, strings.Trim(p, "'"))
	}
	leaked := false
	for _, s := range secrets {
		if s != "" && strings.Contains(msg, s) {
			msg = strings.ReplaceAll(msg, s, "[redacted]")
			leaked = true
		}
	}
	if !leaked {
		return err
	}
	return errors.New(msg)
}
