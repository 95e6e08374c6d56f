package dropfolder

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"hrsync/sources"
	"hrsync/sources/csvsrc"
)

// open opens the local folder as a sources.DropFolder. The folder must
// exist when it is opened, so that a folder gone or unreadable fails the
// run that meets it.
func open(cfg sources.DropConfig) (sources.DropFolder, error) {
	folder, err := New(cfg.Folder)
	if err != nil {
		return nil, err
	}
	return &exports{folder: folder, csv: cfg.CSV}, nil
}

// exports is a local Folder as a sources.DropFolder.
type exports struct {
	folder *Folder
	csv    sources.CSVOptions
}

// Ready returns the folder's complete exports, oldest first.
func (e *exports) Ready(ctx context.Context) ([]sources.Export, error) {
	ready, err := e.folder.Ready(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]sources.Export, 0, len(ready))
	for _, f := range ready {
		out = append(out, e.folder.Export(ctx, f, e.csv))
	}
	return out, nil
}

// Approvals returns the files an HR admin placed in approve/ as
// sources.Approved exports (Folder.Approvals).
func (e *exports) Approvals(ctx context.Context) ([]sources.Export, error) {
	files, err := e.folder.Approvals(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]sources.Export, 0, len(files))
	for _, f := range files {
		out = append(out, approvedExport{fileExport: e.folder.fileExport(ctx, f, e.csv), by: f.Owner()})
	}
	return out, nil
}

// approvedExport is a file of approve/ as a sources.Approved export.
type approvedExport struct {
	*fileExport
	by string
}

// ApprovedBy is the file's owner.
func (a approvedExport) ApprovedBy() string { return a.by }

// Archived finds the archived copy of a processed export: a file of
// processed/ named as it was dropped, or with the suffix Archive adds when
// that name was taken, whose content has the recorded hash.
func (e *exports) Archived(_ context.Context, name, sum string) (sources.Source, error) {
	dir, _, err := e.folder.subfolder(ProcessedDir)
	if err != nil {
		return nil, fmt.Errorf("last good export %s: %w", name, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("last good export %s: %w", name, err)
	}
	raw := RawName(name) // recorded as printed: escaped when it holds control characters
	for _, entry := range entries {
		n := entry.Name()
		if !entry.Type().IsRegular() || !sources.ArchivedAs(n, raw) {
			continue
		}
		got, err := fileSHA256(filepath.Join(dir, n))
		if err != nil {
			return nil, err
		}
		if got == sum {
			return &csvsrc.File{Path: filepath.Join(dir, n), Options: e.csv}, nil
		}
	}
	return nil, fmt.Errorf("last good export %s (sha256 %.12s) is no longer in %s/", name, sum, ProcessedDir)
}

// FailedExport checks that rel names an export in failed/ (see
// Folder.FailedExport).
func (e *exports) FailedExport(_ context.Context, rel string) error {
	_, err := e.folder.FailedExport(rel)
	return err
}

// Restore takes an export back from failed/ (see Folder.Restore).
func (e *exports) Restore(ctx context.Context, rel string) (sources.Export, error) {
	f, err := e.folder.Restore(ctx, rel)
	if err != nil {
		return nil, err
	}
	return e.folder.Export(ctx, f, e.csv), nil
}

// Waiting lists the modification times of the files waiting: listed at
// once, no link followed, no file read.
func (e *exports) Waiting(context.Context) ([]time.Time, error) {
	files, err := e.folder.Waiting()
	if err != nil {
		return nil, err
	}
	times := make([]time.Time, 0, len(files))
	for _, f := range files {
		times = append(times, f.ModTime)
	}
	return times, nil
}

// Count counts the files waiting and those archived (see
// sources.DropFolder).
func (e *exports) Count(context.Context) (sources.DropCounts, error) {
	waiting, err := e.folder.Waiting()
	if err != nil {
		return sources.DropCounts{}, err
	}
	n := sources.DropCounts{Waiting: len(waiting)}
	for _, c := range []struct {
		dir   string
		count *int
	}{{ProcessedDir, &n.Processed}, {FailedDir, &n.Failed}, {ApproveDir, &n.Approve}} {
		dir, _, err := e.folder.subfolder(c.dir)
		if err != nil {
			return n, err
		}
		if *c.count, err = countArchived(dir); err != nil {
			return n, err
		}
	}
	return n, nil
}

// countArchived counts the archived exports of a folder, reports left out.
func countArchived(dir string) (int, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("list %s: %w", filepath.Base(dir), err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	return sources.CountExports(names), nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("hash %s: %w", DisplayName(filepath.Base(path)), err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash %s: %w", DisplayName(filepath.Base(path)), err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Export is a file Ready (or Restore) returned as a sources.Export: read
// within the folder (no link followed out of it), named as every output
// prints it (DisplayName), and archived in the folder's processed/ or
// failed/; Archive answers where, relative to the folder, the name escaped
// ("failed/employees.csv", DisplayRel). A file Ready found unusable
// (unreadable, empty, a link) fails its read with sources.ErrUnusable, so
// that it goes to failed/ with its report; Archive leaves a file changed
// since it was read in place (the run's outcome says so).
func (f *Folder) Export(ctx context.Context, file File, opts sources.CSVOptions) sources.Export {
	return f.fileExport(ctx, file, opts)
}

// fileExport is Export as its own type.
func (f *Folder) fileExport(ctx context.Context, file File, opts sources.CSVOptions) *fileExport {
	return &fileExport{
		name: file.Display(), opts: opts, size: file.Size, sha: file.SHA256,
		open: func() (*os.File, error) {
			fh, err := f.Open(file)
			var problem *ProblemError
			if errors.As(err, &problem) {
				return nil, unusable{err}
			}
			return fh, err
		},
		check: func(fh *os.File) error { return f.Unchanged(fh, file) },
		archive: func(processed bool, render sources.RenderReports) (string, error) {
			outcome := Failed
			if processed {
				outcome = Processed
			}
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			dest, err := f.Archive(actx, file, outcome, render)
			if err != nil {
				return "", err
			}
			return f.DisplayRel(dest), nil
		},
	}
}

// PathExport is a file named on the command line (validate, plan) as a
// sources.Export: read in place, never archived. fi is what Stat said of
// it.
func PathExport(path string, fi os.FileInfo, opts sources.CSVOptions) sources.Export {
	return &fileExport{
		name: DisplayName(filepath.Base(path)), opts: opts, size: fi.Size(),
		open: func() (*os.File, error) { return os.Open(path) },
		check: func(fh *os.File) error {
			before, err := fh.Stat()
			if err != nil {
				return fmt.Errorf("stat export: %w", err)
			}
			after, err := os.Stat(path)
			if err != nil {
				return fmt.Errorf("stat export: %w", err)
			}
			if after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) || !os.SameFile(before, after) {
				return fmt.Errorf("%s: %w", DisplayName(filepath.Base(path)), sources.ErrChanged)
			}
			return nil
		},
	}
}

// unusable marks the error of an export that can never be read
// (sources.ErrUnusable), keeping its message.
type unusable struct{ err error }

func (u unusable) Error() string   { return u.err.Error() }
func (u unusable) Unwrap() []error { return []error{u.err, sources.ErrUnusable} }

// fileExport is a CSV file as a sources.Export, read through open: its
// name is the escaped one every output prints.
type fileExport struct {
	name string
	opts sources.CSVOptions
	size int64
	sha  string
	// open opens the file for one read; check, after the read, tells
	// whether the file is still the version opened (sources.ErrChanged if not).
	open    func() (*os.File, error)
	check   func(fh *os.File) error
	archive func(processed bool, render sources.RenderReports) (string, error)
}

func (f *fileExport) Name() string   { return f.name }
func (f *fileExport) SHA256() string { return f.sha }
func (f *fileExport) Size() int64    { return f.size }

// Read reads the CSV export once; an export that changed while it was read
// fails with sources.ErrChanged: what was read may mix two versions.
func (f *fileExport) Read(ctx context.Context, h sources.Handler) (sources.Stats, error) {
	fh, err := f.open()
	if err != nil {
		return sources.Stats{}, err
	}
	defer fh.Close()
	st, err := csvsrc.Read(ctx, f.name, fh, f.opts, h)
	if err != nil {
		return st, err
	}
	return st, f.check(fh)
}

// Archive moves the file with its reports (see Folder.Export); a file
// given on the command line is never archived.
func (f *fileExport) Archive(processed bool, render sources.RenderReports) (string, error) {
	if f.archive == nil {
		return "", nil
	}
	return f.archive(processed, render)
}

// Rows reads back the records of the file that start on the given lines,
// for the rejects report (people.RowReader).
func (f *fileExport) Rows(ctx context.Context, lines map[int]bool) (csvsrc.Records, error) {
	fh, err := f.open()
	if err != nil {
		return csvsrc.Records{}, err
	}
	defer fh.Close()
	return csvsrc.Rows(ctx, f.name, fh, f.opts, lines)
}
