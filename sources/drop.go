package sources

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

// ErrUnusable marks an error of Export.Read that makes the export unusable
// as a whole, so that no later run can read it either: a file that cannot
// be read, an empty file, a link. Such an export goes to failed/ with its
// report.
var ErrUnusable = errors.New("export unusable")

// Export is one export to process: a file of a drop folder, or the result
// of a query.
type Export interface {
	Source
	// SHA256 is the hex content hash of a file; "" for a query.
	SHA256() string
	// Size is the file's size in bytes; 0 for a query.
	Size() int64
	// Archive moves a file to processed/ (processed) or failed/ with the
	// reports render makes beside it (each named as the archived file
	// followed by its ReportFile.Suffix, of mode
	// DropFolderOptions.ReportFileMode where the backend has modes), and
	// returns where it put it, relative to its folder
	// ("failed/employees.csv", the name escaped as DisplayName does); render
	// is given that place before anything is written. Call it only once
	// the outcome is committed. A file that changed since it was read
	// stays in place, without reports: the error wraps ErrChanged. A query
	// has nothing to archive and returns "".
	Archive(processed bool, render RenderReports) (string, error)
}

// DropFolder is a tenant's drop folder, whatever holds it (a local folder,
// an SFTP server, an S3 bucket). Every backend keeps the same protocol:
// a file is taken once it is stable (its size and modification time, or
// its ETag, unchanged over StableFor) or has its "<file>.done" marker; it
// comes with the SHA-256 of its content, the key that makes each export
// processed once; it is archived to processed/ or failed/ with its reports
// only after its outcome is committed, and never when it changed since it
// was read.
type DropFolder interface {
	// Ready lists the complete exports, oldest first.
	Ready(ctx context.Context) ([]Export, error)
	// Archived returns the export dropped as name (a display name, as the
	// store records it) whose content has the hash sha256, from
	// processed/: the last good export that personalize reads again.
	Archived(ctx context.Context, name, sha256 string) (Source, error)
	// Count counts the files waiting (those matching the pattern, at
	// once: without waiting for them to be stable) and the exports
	// archived in processed/ and failed/, reports left out.
	Count(ctx context.Context) (DropCounts, error)
	// Waiting lists the modification times of the files waiting (those
	// Count counts as waiting), at once, none of them read.
	Waiting(ctx context.Context) ([]time.Time, error)
	// FailedExport checks that rel ("failed/NAME", the form of a
	// report's archivedAs) names an export archived in failed/; every
	// refusal wraps ErrNotFailedExport and says which rule rel breaks.
	FailedExport(ctx context.Context, rel string) error
	// Restore takes that export back from failed/ into the folder (under
	// a suffixed name if its own is taken; with its marker when the folder
	// uses markers) for one run that processes it again, and returns it
	// as Ready would. The report of the run that failed it stays.
	Restore(ctx context.Context, rel string) (Export, error)
}

// ErrNotFailedExport matches (errors.Is) the refusals of
// DropFolder.FailedExport and Restore.
var ErrNotFailedExport = errors.New("not an export in failed/")

// DropCounts counts a drop folder's files (DropFolder.Count).
type DropCounts struct {
	Waiting, Processed, Failed int
}

// DropConfig is what a backend needs to open a drop folder.
type DropConfig struct {
	// Folder holds the folder's options (type, location, stability).
	Folder DropFolderOptions
	// CSV says how its files are read.
	CSV CSVOptions
	// Warn logs a choice of the configuration that weakens security (a
	// host key not checked). Nil logs nothing.
	Warn func(msg string)
}

// DropFolderFactory opens a drop folder of one backend.
type DropFolderFactory func(ctx context.Context, cfg DropConfig) (DropFolder, error)

// dropFolders holds the backends that registered themselves (see
// RegisterDropFolder). Like database/sql's drivers, it is written only by
// the init functions of backend packages.
var dropFolders = struct { //nolint:gochecknoglobals // the backends register themselves from init (as database/sql drivers do); written nowhere else
	sync.RWMutex
	byType map[string]DropFolderFactory
}{byType: map[string]DropFolderFactory{}}

// RegisterDropFolder makes a backend available under its type ("local",
// "sftp", "s3"). A backend package calls it from its init function; a
// program imports the packages of the backends it offers. Registering a
// type twice panics.
func RegisterDropFolder(typ string, factory DropFolderFactory) {
	dropFolders.Lock()
	defer dropFolders.Unlock()
	if _, dup := dropFolders.byType[typ]; dup || factory == nil {
		panic("sources: drop folder backend " + typ + " registered twice or nil")
	}
	dropFolders.byType[typ] = factory
}

// OpenDropFolder opens the drop folder cfg configures with the backend
// registered for its type.
func OpenDropFolder(ctx context.Context, cfg DropConfig) (DropFolder, error) {
	cfg.Folder = cfg.Folder.WithDefaults()
	if errs := cfg.Folder.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("drop folder options: %w", errors.Join(errs...))
	}
	dropFolders.RLock()
	factory, ok := dropFolders.byType[cfg.Folder.Type]
	dropFolders.RUnlock()
	if !ok {
		return nil, fmt.Errorf("drop folder type %q: no such backend in this program (have %v)", cfg.Folder.Type, DropFolderTypes())
	}
	return factory(ctx, cfg)
}

// DropFolderTypes lists the registered backends, sorted.
func DropFolderTypes() []string {
	dropFolders.RLock()
	defer dropFolders.RUnlock()
	types := make([]string, 0, len(dropFolders.byType))
	for t := range dropFolders.byType {
		types = append(types, t)
	}
	sort.Strings(types)
	return types
}
