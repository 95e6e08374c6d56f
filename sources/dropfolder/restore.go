package dropfolder

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"hrsync/sources"
)

// ErrNotFailedExport matches (errors.Is) the *NotFailedError of
// FailedExport and Restore.
var ErrNotFailedExport = sources.ErrNotFailedExport

// NotFailedError says why the name an operator gave is not an export
// archived in failed/: a path outside failed/ or escaping the folder, a
// report or marker, or a file that is not there (any more).
type NotFailedError struct {
	// Name is the name as given.
	Name string
	// Reason completes the sentence that starts with the quoted name.
	Reason string
}

func (e *NotFailedError) Error() string { return fmt.Sprintf("%q %s", e.Name, e.Reason) }

// Is makes errors.Is(err, ErrNotFailedExport) hold.
func (e *NotFailedError) Is(target error) bool { return target == ErrNotFailedExport }

// notFailed is a *NotFailedError.
func notFailed(name, reason string) error { return &NotFailedError{Name: name, Reason: reason} }

// FailedExport checks that rel, a path relative to the drop folder such as
// "failed/employees.csv" (the form of a report's archivedAs), or an
// absolute path to the same file, names an export archived in failed/: a
// regular file directly in failed/, not a report or marker. It returns the
// file's name in failed/. Every refusal wraps ErrNotFailedExport and says
// which rule rel breaks.
func (f *Folder) FailedExport(rel string) (string, error) {
	name, err := f.failedName(rel)
	if err != nil {
		return "", err
	}
	dir, _, err := f.subfolder(FailedDir)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if exists(path + ReportSuffix) {
			return "", notFailed(rel, "is no longer in "+FailedDir+"/ (only the report of its stopped run is): an earlier --file run took it back, "+
				"and its outcome is in that run's report ("+ProcessedDir+"/ or "+FailedDir+"/, and 'hrsync status')")
		}
		return "", notFailed(rel, "is not in the drop folder's "+FailedDir+"/: no such file")
	case err != nil:
		return "", fmt.Errorf("stat %s: %w", quoteRel(rel), err)
	case !st.Mode().IsRegular():
		return "", notFailed(rel, "is not a regular file")
	}
	return name, nil
}

// failedName is the name in failed/ that rel names, checked without
// touching the disk.
func (f *Folder) failedName(rel string) (string, error) {
	if strings.TrimSpace(rel) == "" {
		return "", notFailed(rel, "names no file: give "+FailedDir+"/NAME")
	}
	p := rel
	if filepath.IsAbs(p) {
		dir, err := filepath.Abs(f.opts.Dir)
		if err != nil {
			return "", fmt.Errorf("drop folder path: %w", err)
		}
		if p, err = filepath.Rel(dir, p); err != nil {
			return "", notFailed(rel, "is outside the drop folder")
		}
	}
	p = filepath.Clean(p)
	if p == ".." || strings.HasPrefix(p, ".."+string(filepath.Separator)) {
		return "", notFailed(rel, "is outside the drop folder")
	}
	// The name as printed (escaped, see DisplayName) or as on disk.
	name := RawName(filepath.Base(p))
	if filepath.Dir(p) != FailedDir {
		return "", notFailed(rel, "is not in the drop folder's "+FailedDir+"/ (give it as "+FailedDir+"/NAME, relative to the drop folder)")
	}
	if Ignored(name) {
		return "", notFailed(rel, "is a report, marker or partial upload, not an export")
	}
	return name, nil
}

// quoteRel quotes a path an operator gave, for an error message.
func quoteRel(rel string) string { return strconv.Quote(rel) }

// Restore takes the export rel names (see FailedExport) back from failed/
// into the drop folder, for a run that processes it again, and returns it
// as Ready would, with its content hash. The report of the run that failed
// it stays in failed/. Nothing is overwritten: when the drop folder holds
// a file of that name (a newer export waiting), the export comes back
// under a name with a time and hash suffix, as Archive names a second file.
// With DoneMarker set it writes the export's marker, so that a later run
// takes it if this one stops before archiving it.
func (f *Folder) Restore(ctx context.Context, rel string) (File, error) {
	name, err := f.FailedExport(rel)
	if err != nil {
		return File{}, err
	}
	dir, _, err := f.subfolder(FailedDir)
	if err != nil {
		return File{}, err
	}
	src := filepath.Join(dir, name)
	st, err := os.Lstat(src)
	if err != nil {
		return File{}, fmt.Errorf("stat %s: %w", quoteRel(rel), err)
	}
	file := File{Path: src, Name: name, Size: st.Size(), ModTime: st.ModTime(), info: st}
	sum, same, err := hashPath(ctx, file)
	if err != nil {
		return File{}, fmt.Errorf("hash %s: %w", quoteRel(rel), err)
	}
	if !same {
		return File{}, fmt.Errorf("%s changed while it was read; try again", quoteRel(rel))
	}
	file.SHA256 = sum
	for attempt := 0; ; attempt++ {
		target := f.archiveName(file, attempt)
		dest := filepath.Join(f.opts.Dir, target)
		if exists(dest) {
			continue
		}
		err := moveNew(src, dest)
		if errors.Is(err, fs.ErrExist) {
			continue // taken meanwhile
		}
		if err != nil {
			return File{}, fmt.Errorf("take %s back: %w", quoteRel(rel), err)
		}
		file.Path, file.Name = dest, target
		if moved, err := os.Lstat(dest); err == nil {
			file.info = moved
		}
		break
	}
	if f.opts.DoneMarker {
		if err := writeNew(file.Path+MarkerSuffix, sources.Empty, 0o600); err != nil && !errors.Is(err, fs.ErrExist) {
			return file, fmt.Errorf("write marker of %s: %w", file.Name, err)
		}
	}
	syncDir(filepath.Join(f.opts.Dir, FailedDir))
	syncDir(f.opts.Dir)
	return file, nil
}

// Rel returns path relative to the drop folder, with slashes, such as
// "failed/employees.csv"; a path outside the folder comes back unchanged.
func (f *Folder) Rel(path string) string {
	dir, err := filepath.Abs(f.opts.Dir)
	if err != nil {
		return path
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	rel, err := filepath.Rel(dir, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return path
	}
	return filepath.ToSlash(rel)
}

// hashPath hashes the file at file.Path (in failed/, which hrsync alone
// writes to), as hashOpen does.
func hashPath(ctx context.Context, file File) (string, bool, error) {
	fh, err := os.Open(file.Path)
	if err != nil {
		return "", false, err
	}
	defer fh.Close()
	sum, st, err := hashOpen(ctx, fh)
	if err != nil {
		return "", false, err
	}
	return sum, sameVersion(st, file), nil
}

// DisplayRel is Rel with the file's name as every output prints it
// (DisplayName): "failed/employees.csv", or `failed/"a\nb.csv"` for a
// name with a control character. FailedExport and Restore take either
// form.
func (f *Folder) DisplayRel(path string) string {
	rel := f.Rel(path)
	dir, base := filepath.Split(filepath.FromSlash(rel))
	return filepath.ToSlash(dir) + DisplayName(base)
}
