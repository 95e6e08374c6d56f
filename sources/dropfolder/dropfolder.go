// Package dropfolder finds complete HR exports in a folder and archives them
// once their outcome is committed.
//
// The protocol with the caller keeps invariant 2 of the design (nothing is
// lost, each file processed once):
//
//  1. Ready lists the files that match the pattern and are complete: their
//     size and modification time did not change over StableFor, or a
//     "<file>.done" marker exists when DoneMarker is set. Each comes with
//     the SHA-256 of its content.
//  2. The caller asks its store whether that hash was seen, reads and
//     processes the file, and commits the outcome.
//  3. Only then does the caller call Archive, which writes the reports
//     (mode ReportMode: reports.mode, 0640 by default, so that an HR group
//     can read them) into processed/ or failed/ and moves the file beside
//     them, never overwriting an earlier file of the same name.
//
// A crash before step 3 leaves the file in place; the next run finds its
// hash already committed and only archives it.
//
// After a safeguard stop, an HR admin approves the export by moving it from
// failed/ into approve/: Approvals lists the files there, and the people
// job takes one a safeguard stopped past the safeguards once, archiving it
// from approve/ like any export. An operator's way is Restore, which takes
// an export back from failed/ for one run that processes it again (`hrsync
// run people --override-safeguards --file failed/NAME`); the report of the
// stopped run stays in failed/, and the export goes through the same
// protocol from step 2.
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
	"slices"
	"time"

	"hrsync/sources"
)

// Names of the archive subfolders and of marker and report suffixes.
const (
	ProcessedDir = sources.ProcessedDir
	FailedDir    = sources.FailedDir
	ApproveDir   = sources.ApproveDir
	MarkerSuffix = sources.MarkerSuffix
	ReportSuffix = sources.ReportSuffix
)

// Outcome says where Archive puts a file.
type Outcome string

// The outcomes of a file.
const (
	Processed Outcome = ProcessedDir // the export was applied (rows may have been rejected)
	Failed    Outcome = FailedDir    // the export as a whole was refused
)

// File is an export found by Ready.
type File struct {
	Path    string    // full path in the drop folder
	Name    string    // base name as on disk; print it as DisplayName(Name)
	Size    int64     // bytes
	ModTime time.Time // modification time when found
	SHA256  string    // hex SHA-256 of the content: the once-only key; "" when Problem is set
	// Problem, when not nil, is why the file cannot be processed at all
	// (a *ProblemError: unreadable, empty, a link, not a regular file).
	// Such a file goes to failed/ with its report, like an export missing
	// a column.
	Problem error
	// Sub is the sub-folder the file is in: "" for the drop folder itself,
	// ApproveDir for a file an HR admin approved (Approvals).
	Sub string
	// info is what Lstat said of the file when it was found: it tells the
	// file found from another put in its place since.
	info fs.FileInfo
	// vouched is the file's change time when that time vouches for the
	// content hashed (vouchFor): Archive then trusts an unchanged change
	// time instead of hashing the file again. Zero: hash again.
	vouched time.Time
}

// rel is the file's name relative to the drop folder.
func (file File) rel() string { return filepath.Join(file.Sub, file.Name) }

// Display is the file's name as every output prints it (DisplayName).
func (file File) Display() string { return DisplayName(file.Name) }

// Folder is one drop folder. Its methods may be called from one goroutine
// at a time.
type Folder struct {
	opts sources.DropFolderOptions
	// now and wait are the clock; tests replace them.
	now  func() time.Time
	wait func(ctx context.Context, d time.Duration) error
	// open opens a file of the folder for reading through root, so that
	// no link is followed out of the folder; tests replace it to make a
	// file unreadable (they run as root, whom a mode 000 does not stop).
	open func(root *os.Root, name string) (*os.File, error)
}

// New returns the drop folder configured by opts (defaults applied). The
// folder must exist.
func New(opts sources.DropFolderOptions) (*Folder, error) {
	opts = opts.WithDefaults()
	if errs := opts.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("drop folder options: %w", errors.Join(errs...))
	}
	st, err := os.Stat(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("drop folder: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("drop folder %s: not a directory", DisplayName(filepath.Base(opts.Dir)))
	}
	return &Folder{opts: opts, now: time.Now, wait: sources.Sleep, open: openInRoot}, nil
}

// openInRoot opens name for reading within root: a link that leads out of
// root is refused.
func openInRoot(root *os.Root, name string) (*os.File, error) { return root.Open(name) }

// Ignored reports whether a name is never an export (sources.Ignored).
func Ignored(name string) bool { return sources.Ignored(name) }

// DisplayName is a file name as every output prints it (sources.DisplayName).
func DisplayName(name string) string { return sources.DisplayName(name) }

// RawName is the file name a DisplayName stands for (sources.RawName).
func RawName(display string) string { return sources.RawName(display) }

// Waiting lists the files that match the pattern, oldest first, at once:
// without waiting for them to be stable and without hashing them (for
// status displays; use Ready to process them).
func (f *Folder) Waiting() ([]File, error) {
	found, names, err := f.candidates()
	out := make([]File, 0, len(names))
	for _, n := range names {
		out = append(out, found[n])
	}
	return out, err
}

// Ready returns the complete exports in the folder, oldest first, each with
// its content hash. Without DoneMarker it takes two looks StableFor apart
// and keeps the files whose size and modification time did not change;
// with DoneMarker it keeps the files whose marker exists, without waiting.
// Whether a file was processed before is for the caller to decide from
// File.SHA256.
//
// A file that cannot be processed at all comes with its Problem (see
// ProblemError) instead of a hash, and never stops the other files. Ready
// fails as a whole only when the folder cannot be listed, one of its
// sub-folders is a link (sources.SubfolderError), the context ends, or
// the system is short of resources.
func (f *Folder) Ready(ctx context.Context) ([]File, error) {
	if err := f.checkSubfolders(); err != nil {
		return nil, err
	}
	return f.readyIn(ctx, "", f.opts.Pattern, f.opts.DoneMarker)
}

// readyIn is Ready over the sub-folder sub ("" for the folder itself), for
// the names pattern matches ("" for every name), with or without markers.
func (f *Folder) readyIn(ctx context.Context, sub, pattern string, markers bool) ([]File, error) {
	before, names, err := f.candidatesIn(sub, pattern)
	if err != nil || len(names) == 0 {
		return nil, err
	}
	ready, err := f.settled(ctx, sub, pattern, markers, before, names)
	if err != nil || len(ready) == 0 {
		return nil, err
	}
	root, err := os.OpenRoot(f.opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("open drop folder: %w", err)
	}
	defer root.Close()
	out := ready[:0]
	for _, file := range ready {
		if file.Problem == nil {
			ok, err := f.inspect(ctx, root, &file)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
		}
		out = append(out, file)
	}
	return out, nil
}

// settled keeps the candidates of sub that are complete: with markers,
// those whose marker exists; else those whose size and modification time
// did not change over StableFor.
func (f *Folder) settled(ctx context.Context, sub, pattern string, markers bool, before map[string]File, names []string) ([]File, error) {
	var ready []File
	if markers {
		for _, name := range names {
			st, err := os.Stat(before[name].Path + MarkerSuffix)
			if err == nil && st.Mode().IsRegular() {
				ready = append(ready, before[name])
			}
		}
		return ready, nil
	}
	if err := f.wait(ctx, f.opts.StableFor); err != nil {
		return nil, err
	}
	after, _, err := f.candidatesIn(sub, pattern)
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		a, ok := after[name]
		b := before[name]
		if ok && a.Size == b.Size && a.ModTime.Equal(b.ModTime) {
			ready = append(ready, b)
		}
	}
	return ready, nil
}

// inspect hashes a settled file. It reports false when the file is not
// ready after all (gone, or written to while hashed); a file that cannot be
// read, or is empty, is ready with its Problem. Only a context end or a
// shortage of the system (transient) is an error.
func (f *Folder) inspect(ctx context.Context, root *os.Root, file *File) (bool, error) {
	fh, err := f.open(root, file.rel())
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil // gone since it was listed
	case err != nil && transient(err):
		return false, fmt.Errorf("open %s: %w", file.Display(), err)
	case err != nil:
		file.Problem = unreadable(file.Name, err)
		return true, nil
	}
	defer fh.Close()
	hashStart := f.now()
	sum, st, err := hashOpen(ctx, fh)
	same := err == nil && sameVersion(st, *file)
	switch {
	case ctx.Err() != nil:
		return false, fmt.Errorf("hash %s: %w", file.Display(), ctx.Err())
	case err != nil && transient(err):
		return false, fmt.Errorf("hash %s: %w", file.Display(), err)
	case err != nil:
		file.Problem = unreadable(file.Name, err)
		return true, nil
	case !same:
		return false, nil // written to while hashed: not complete after all
	case file.Size == 0:
		file.Problem = problem(file.Name, "is empty (0 bytes): it holds no export, not even a header", nil)
		return true, nil
	}
	file.SHA256 = sum
	file.vouched = vouchFor(st, hashStart)
	return true, nil
}

// hashOpen returns the hex SHA-256 of the open file fh, and what fh.Stat
// said of it afterwards.
func hashOpen(ctx context.Context, fh *os.File) (string, fs.FileInfo, error) {
	h := sha256.New()
	if _, err := io.Copy(h, sources.ContextReader(ctx, fh)); err != nil {
		return "", nil, err
	}
	st, err := fh.Stat()
	if err != nil {
		return "", nil, err
	}
	return hex.EncodeToString(h.Sum(nil)), st, nil
}

// sameVersion tells whether st describes the version of file that was
// found: the same file (when known), size and modification time.
func sameVersion(st fs.FileInfo, file File) bool {
	if st.Size() != file.Size || !st.ModTime().Equal(file.ModTime) {
		return false
	}
	return file.info == nil || os.SameFile(st, file.info)
}

// changed is the error of a file that is no longer the version found.
func changed(file File) error {
	return fmt.Errorf("%s: %w", file.Display(), sources.ErrChanged)
}

// Open opens a file Ready returned for reading, within the folder (no link
// is followed out of it). A file that is no longer the version Ready found
// (replaced, written to) is refused with an error wrapping
// sources.ErrChanged; one that cannot be opened any more with its
// *ProblemError (or, when the system is short of resources or the file is
// gone, the system's error). A file with a Problem returns it.
func (f *Folder) Open(file File) (*os.File, error) {
	if file.Problem != nil {
		return nil, file.Problem
	}
	root, err := os.OpenRoot(f.opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("open drop folder: %w", err)
	}
	defer root.Close()
	fh, err := f.open(root, file.rel())
	switch {
	case err != nil && (transient(err) || errors.Is(err, fs.ErrNotExist)):
		return nil, fmt.Errorf("open %s: %w", file.Display(), err)
	case err != nil:
		return nil, unreadable(file.Name, err)
	}
	if err := f.Unchanged(fh, file); err != nil {
		_ = fh.Close()
		return nil, err
	}
	return fh, nil
}

// Unchanged checks that fh, opened by Open, and the name in the folder are
// still the version of file that Ready found (same file, size and
// modification time), without reading it: an error wrapping
// sources.ErrChanged if not.
func (f *Folder) Unchanged(fh *os.File, file File) error {
	st, err := fh.Stat()
	if err != nil {
		return fmt.Errorf("stat %s: %w", file.Display(), err)
	}
	lst, err := os.Lstat(file.Path)
	if err != nil || !sameVersion(st, file) || !sameVersion(lst, file) {
		return changed(file)
	}
	return nil
}

// current checks, before Archive moves it, that file is still in the
// folder as the version read: same file, size and modification time, and,
// for a file with a hash, the same content: vouched for by a change time
// that has not moved since well before the hash (vouchFor), else hashed
// again. An error wraps
// sources.ErrChanged when it changed, fs.ErrNotExist when it is gone.
func (f *Folder) current(ctx context.Context, file File) error {
	st, err := os.Lstat(file.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s is no longer in the drop folder: %w", file.Display(), fs.ErrNotExist)
	case err != nil:
		return fmt.Errorf("stat %s: %w", file.Display(), errors.Unwrap(err))
	case !sameVersion(st, file):
		return changed(file)
	case file.SHA256 == "" || vouches(st, file.vouched):
		return nil
	}
	fh, err := f.Open(file)
	if err != nil {
		return err
	}
	defer fh.Close()
	sum, st, err := hashOpen(ctx, fh)
	switch {
	case err != nil:
		return fmt.Errorf("hash %s: %w", file.Display(), err)
	case !sameVersion(st, file) || sum != file.SHA256:
		return changed(file)
	}
	return nil
}

// Archive moves a file Ready returned into processed/ or failed/ with the
// reports render makes beside it ("<name>.report.json", ...; mode
// ReportMode, default 0600), and removes its marker. Call it only once the
// outcome is committed. If a file or report of that name is already
// archived, the new one gets a suffix with the time and the start of its
// hash ("export.20250601T120000Z-1a2b3c4d.csv"); nothing is overwritten.
// A processed/ or failed/ that is a symbolic link is refused (an error
// wrapping sources.ErrSubfolder): nothing is written through it.
// render is given the place the file is about to take, relative to the
// folder. It returns the archived file's path.
//
// A file that is no longer the version read (its size, modification time
// or content changed: a row appended while the run was in flight) is not
// archived: Archive returns an error wrapping sources.ErrChanged, and the
// file stays in place for the next run, which reads it whole again (a new
// hash). A file gone from the folder returns an error wrapping
// fs.ErrNotExist.
func (f *Folder) Archive(ctx context.Context, file File, outcome Outcome, render sources.RenderReports) (string, error) {
	if outcome != Processed && outcome != Failed {
		return "", fmt.Errorf("archive %s: unknown outcome %q", file.Display(), outcome)
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("archive %s: %w", file.Display(), err)
	}
	if err := f.current(ctx, file); err != nil {
		return "", err
	}
	dir, err := f.makeSubfolder(string(outcome))
	if err != nil {
		return "", fmt.Errorf("archive %s: %w", file.Display(), err)
	}
	for attempt := 0; ; attempt++ {
		dest := filepath.Join(dir, f.archiveName(file, attempt))
		reports, err := render(f.DisplayRel(dest))
		if err != nil {
			return "", fmt.Errorf("render the reports of %s: %w", file.Display(), err)
		}
		if exists(dest) || slices.ContainsFunc(reports, func(r sources.ReportFile) bool { return exists(dest + r.Suffix) }) {
			continue
		}
		written, err := f.writeReports(dest, reports)
		if errors.Is(err, fs.ErrExist) {
			continue // taken meanwhile
		}
		if err != nil {
			return "", fmt.Errorf("write reports of %s: %w", file.Display(), err)
		}
		err = moveNew(file.Path, dest)
		if err != nil {
			removeAll(written) // ours: written just above
		}
		switch {
		case errors.Is(err, fs.ErrExist):
			continue
		case errors.Is(err, fs.ErrNotExist):
			return "", fmt.Errorf("%s is no longer in the drop folder: %w", file.Display(), fs.ErrNotExist)
		case err != nil:
			return "", fmt.Errorf("archive %s: %w", file.Display(), err)
		}
		if err := f.keptStill(dest, file, written); err != nil {
			return "", err
		}
		if err := os.Remove(file.Path + MarkerSuffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return dest, fmt.Errorf("remove marker of %s: %w", file.Display(), err)
		}
		syncDir(dir)
		syncDir(f.opts.Dir)
		return dest, nil
	}
}

// writeReports writes each report beside dest, never over a file, and
// returns the paths written; on an error it removes them.
func (f *Folder) writeReports(dest string, reports []sources.ReportFile) ([]string, error) {
	written := make([]string, 0, len(reports))
	for _, r := range reports {
		path := dest + r.Suffix
		if err := writeNew(path, r.Write, f.reportMode()); err != nil {
			removeAll(written)
			return nil, err
		}
		written = append(written, path)
	}
	return written, nil
}

// reportMode is the mode of the reports (DropFolderOptions.ReportFileMode).
func (f *Folder) reportMode() fs.FileMode { return f.opts.ReportFileMode() }

// dirMode is the mode of processed/ and failed/: the owner's, and the
// group's and others' search and read where the reports may be read by them.
func (f *Folder) dirMode() fs.FileMode {
	m := f.reportMode() | 0o700
	if m&0o040 != 0 {
		m |= 0o010
	}
	if m&0o004 != 0 {
		m |= 0o001
	}
	return m &^ 0o022
}

func removeAll(paths []string) {
	for _, p := range paths {
		_ = os.Remove(p)
	}
}

// keptStill checks the file Archive just moved to dest: a writer that still
// had it open may have appended to it between the check and the move. Then
// it goes back into the drop folder (under a new name if its own was taken
// meanwhile), its report is removed, and the error wraps
// sources.ErrChanged.
func (f *Folder) keptStill(dest string, file File, reports []string) error {
	st, err := os.Lstat(dest)
	if err != nil {
		return fmt.Errorf("stat archived %s: %w", file.Display(), errors.Unwrap(err))
	}
	if sameVersion(st, file) {
		return nil
	}
	removeAll(reports)
	for attempt := 0; ; attempt++ {
		back := filepath.Join(filepath.Dir(file.Path), f.archiveName(file, attempt))
		err := moveNew(dest, back)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("%s changed while it was archived, and could not be put back from %s: %w",
				file.Display(), filepath.Base(filepath.Dir(dest)), err)
		}
		return changed(file)
	}
}

// archiveName is the name for the given attempt (sources.ArchiveName).
func (f *Folder) archiveName(file File, attempt int) string {
	return sources.ArchiveName(file.Name, file.SHA256, f.now(), attempt)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// writeNew writes what write writes to a new file at path with the given
// mode, failing with fs.ErrExist if path exists. The content is complete
// on disk before the name appears.
func writeNew(path string, write func(io.Writer) error, mode fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".report-*.tmp") // 0600
	if err != nil {
		return fmt.Errorf("create temporary file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(mode); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("set mode: %w", err)
	}
	if err := write(tmp); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("write: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("sync: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	return moveNew(tmp.Name(), path)
}

// moveNew renames src to dst without overwriting: a hard link fails if dst
// exists. Where hard links are not supported it checks, then renames.
func moveNew(src, dst string) error {
	err := os.Link(src, dst)
	if err == nil {
		if err := os.Remove(src); err != nil {
			return fmt.Errorf("remove original: %w", err)
		}
		return nil
	}
	if errors.Is(err, fs.ErrExist) || errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if exists(dst) {
		return fs.ErrExist
	}
	if err := os.Rename(src, dst); err != nil {
		return fmt.Errorf("rename: %w", err)
	}
	return nil
}

// syncDir makes a rename durable where the platform allows it.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}
