package registry

import (
	"context"
	"errors"
	"io/fs"

	"hrsync/sources"
	"hrsync/sources/scim/directory"
)

// Options are one kind's decoded options. Their methods take only
// standard types, so that the config package consumes them through its own
// interface (config.SourceOptions) without importing any source package.
type Options interface {
	// Kind names the kind: its type, or its section when it has none.
	Kind() string
	// FillDefaults sets the defaults of the options left empty.
	FillDefaults()
	// ResolvePaths makes the relative paths of the options absolute with
	// abs.
	ResolvePaths(abs func(*string))
	// ResolveSecrets reads the secrets the options name: env reads an
	// environment variable, file a mounted file; each reports its own
	// problem at field (relative to the options) and returns false. The
	// errors are the options' own problems (*sources.FieldError).
	ResolveSecrets(env, file func(field, name string) (string, bool)) []error
	// Validate checks the options; each error is a *sources.FieldError
	// with a path relative to the options.
	Validate() []error
	// BalanceMax is the largest addBalance a row may ask for.
	BalanceMax() float64
	// SetReportMode sets the mode of the reports written beside an
	// archived export, where the kind writes any.
	SetReportMode(mode fs.FileMode)
	// Describe says where the source is, for `config check`; "" to say
	// nothing.
	Describe() string
	// HasFolder says whether the kind reads a drop folder (Source.Folder).
	HasFolder() bool
	// SecretsSet names the secrets the options hold ("sql dsn"), never
	// their values.
	SecretsSet() []string
	// Files lists the given files as exports read in place, never
	// archived (for validate and plan): the lister reads them when called.
	// A kind that reads no files refuses (the error wraps ErrNoFiles).
	Files(files []string) (func(context.Context) ([]sources.Export, error), error)
	// Open opens the source for one use (a listing, a restore).
	Open(ctx context.Context, env Env) (Source, error)
}

// Env is what a kind is given to open a source.
type Env struct {
	// Tenant names the tenant, for the source's name and errors.
	Tenant string
	// Warn logs a choice of the configuration that weakens security (a
	// host key not checked). Nil logs nothing.
	Warn func(msg string)
	// Directory reads the tenants' SCIM directories from hrsync's state
	// (*store.Store is one), for the kinds whose people an identity
	// provider pushes to hrsync (scim) rather than hrsync reading them from
	// the company. Nil where no state is open: such a kind then refuses to
	// read.
	Directory directory.Feed
}

// LastRecord returns the store's record of a tenant's last processed export
// (its display name and content hash); ok is false when there is none.
type LastRecord func(ctx context.Context) (name, sha256 string, ok bool, err error)

// Source is an opened source: what the people job reads, the last good
// export personalize reads again, and the restore of a failed export.
type Source interface {
	// Feed lists the exports ready to process, oldest first: the
	// complete files of a drop folder, or the one result of a query.
	Feed(ctx context.Context) ([]sources.Export, error)
	// LastExport is the last good export: for a drop folder the one last
	// records, from processed/; for a query, the query. ok is false when
	// there is none yet.
	LastExport(ctx context.Context, last LastRecord) (src sources.Source, ok bool, err error)
	// CheckRestore checks that rel ("failed/NAME") names an export Restore
	// can take back. Refusals wrap sources.ErrNotFailedExport, or
	// ErrNoRestore for a kind that keeps no failed exports.
	CheckRestore(ctx context.Context, rel string) error
	// Restore takes that export back for one run and returns it.
	Restore(ctx context.Context, rel string) (sources.Export, error)
	// Folder opens the drop folder of a drop-folder kind (for status and
	// metrics); a kind without one returns an error wrapping ErrNoFolder.
	Folder() (sources.DropFolder, error)
}

// ErrNoRestore matches (errors.Is) the refusal of a kind that keeps no
// failed exports to take one back.
var ErrNoRestore = errors.New("source keeps no failed exports")

// ErrNoFolder matches (errors.Is) the answer of a kind without a drop
// folder to Source.Folder.
var ErrNoFolder = errors.New("source has no drop folder")

// ErrNoFiles matches (errors.Is) the refusal of a kind that reads no files
// to read FILE arguments.
var ErrNoFiles = errors.New("source reads no files")

// Refusal is a kind's refusal of what it cannot do: its message is Reason
// alone, and it matches (errors.Is) Err, one of ErrNoRestore, ErrNoFolder
// and ErrNoFiles.
type Refusal struct {
	Reason string
	Err    error
}

// Error is the reason.
func (r *Refusal) Error() string { return r.Reason }

// Unwrap returns the kind of refusal.
func (r *Refusal) Unwrap() error { return r.Err }
