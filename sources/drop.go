package sources

import (
	"context"
	"errors"
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

// Pushed is an export that is a snapshot of the people an identity
// provider pushed to hrsync (a SCIM directory), not a file or a query of
// the company's: there is no drop folder, so a safeguard stop of it is
// lifted only by the operator's run with the override.
type Pushed interface {
	// Directory is true for such an export.
	Directory() bool
}

// IsPushed tells whether x is a Pushed export.
func IsPushed(x Export) bool {
	p, ok := x.(Pushed)
	return ok && p.Directory()
}
