package sqlsrc

import (
	"context"
	"fmt"

	"hrsync/sources"
	"hrsync/sources/registry"
)

// query is the SQL kind's registry.Source: its feed and its last good
// export are both the query, run once per read; it keeps no failed exports
// and has no folder.
type query struct {
	tenant string
	opts   sources.SQLOptions
}

// export connects and returns the query as an export.
func (q *query) export(ctx context.Context) (*Export, error) {
	src, err := Open(ctx, q.tenant, q.opts)
	if err != nil {
		return nil, fmt.Errorf("tenant %s: %w", q.tenant, err)
	}
	return &Export{Source: src}, nil
}

// Feed is the one result of the query.
func (q *query) Feed(ctx context.Context) ([]sources.Export, error) {
	x, err := q.export(ctx)
	if err != nil {
		return nil, err
	}
	return []sources.Export{x}, nil
}

// LastExport is the query itself.
func (q *query) LastExport(ctx context.Context, _ registry.LastRecord) (sources.Source, bool, error) {
	x, err := q.export(ctx)
	if err != nil {
		return nil, false, err
	}
	return x, true, nil
}

// errNoRestore is the refusal of CheckRestore and Restore.
var errNoRestore = &registry.Refusal{Reason: "reads a SQL query, not a drop folder", Err: registry.ErrNoRestore}

// CheckRestore refuses: a query keeps no failed exports.
func (q *query) CheckRestore(context.Context, string) error { return errNoRestore }

// Restore refuses: a query keeps no failed exports.
func (q *query) Restore(context.Context, string) (sources.Export, error) { return nil, errNoRestore }

// Folder refuses: a query has no drop folder.
func (q *query) Folder() (sources.DropFolder, error) {
	return nil, &registry.Refusal{Reason: "reads a SQL query, not a drop folder", Err: registry.ErrNoFolder}
}

// Export is a query's result as a sources.Export: no hash, nothing to
// archive. The query is read once, then the connection closes.
type Export struct {
	*Source
}

// Read reads the query's rows and closes the connection.
func (x *Export) Read(ctx context.Context, h sources.Handler) (sources.Stats, error) {
	st, err := x.Source.Read(ctx, h)
	if cerr := x.Close(); cerr != nil && err == nil {
		err = cerr
	}
	return st, err
}

// SHA256 is "": a query's result has no file to hash.
func (x *Export) SHA256() string { return "" }

// Size is 0: a query's result has no file.
func (x *Export) Size() int64 { return 0 }

// Archive does nothing: a query has nothing to archive.
func (x *Export) Archive(bool, sources.RenderReports) (string, error) { return "", nil }
