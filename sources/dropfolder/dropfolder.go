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
//  3. Only then does the caller call Archive, which writes the report
//     (mode 0600: it holds personal data) into processed/ or failed/ and
//     moves the file beside it, never overwriting an earlier file of the
//     same name.
//
// A crash before step 3 leaves the file in place; the next run finds its
// hash already committed and only archives it.
//
// After a safeguard stop, Restore takes an export back from failed/ for one
// run that processes it again (`hrsync run people --override-safeguards
// --file failed/NAME`); the report of the stopped run stays in failed/, and
// the export goes through the same protocol from step 2.
package dropfolder

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"hrsync/sources"
)

// Names of the archive subfolders and of marker and report suffixes.
const (
	ProcessedDir = "processed"
	FailedDir    = "failed"
	MarkerSuffix = ".done"
	ReportSuffix = ".report.json"
)

// Outcome says where Archive puts a file.
type Outcome string

// The outcomes of a file.
const (
	Processed Outcome = ProcessedDir // the export was applied (rows may have been rejected)
	Failed    Outcome = FailedDir    // the export as a whole was refused
)

// File is a complete export found by Ready.
type File struct {
	Path    string    // full path in the drop folder
	Name    string    // base name, used in reports and rejections
	Size    int64     // bytes
	ModTime time.Time // modification time when found
	SHA256  string    // hex SHA-256 of the content: the once-only key
}

// Folder is one drop folder. Its methods may be called from one goroutine
// at a time.
type Folder struct {
	opts sources.DropFolderOptions
	// now and wait are the clock; tests replace them.
	now  func() time.Time
	wait func(ctx context.Context, d time.Duration) error
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
		return nil, fmt.Errorf("drop folder %s: not a directory", filepath.Base(opts.Dir))
	}
	return &Folder{opts: opts, now: time.Now, wait: sleep}, nil
}

// sleep waits for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("wait for files to settle: %w", ctx.Err())
	case <-t.C:
		return nil
	}
}

// Ignored reports whether a name is never an export: hidden files, partial
// uploads (*.tmp, *.part, Office's ~$ lock files), markers and reports.
func Ignored(name string) bool {
	lower := strings.ToLower(name)
	if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "~$") {
		return true
	}
	for _, suffix := range []string{".tmp", ".part", MarkerSuffix, ReportSuffix} {
		if strings.HasSuffix(lower, suffix) {
			return true
		}
	}
	return false
}

// candidates lists the regular files that match the pattern and are not
// ignored, oldest first (then by name), with their size and mtime.
func (f *Folder) candidates() (map[string]File, []string, error) {
	entries, err := os.ReadDir(f.opts.Dir)
	if err != nil {
		return nil, nil, fmt.Errorf("list drop folder: %w", err)
	}
	pattern := strings.ToLower(f.opts.Pattern)
	found := map[string]File{}
	var names []string
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || Ignored(name) {
			continue
		}
		if ok, _ := filepath.Match(pattern, strings.ToLower(name)); !ok { // pattern checked in New
			continue
		}
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // gone since ReadDir
		}
		if err != nil {
			return nil, nil, fmt.Errorf("stat %s: %w", name, err)
		}
		found[name] = File{Path: filepath.Join(f.opts.Dir, name), Name: name, Size: info.Size(), ModTime: info.ModTime()}
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := found[names[i]], found[names[j]]
		if !a.ModTime.Equal(b.ModTime) {
			return a.ModTime.Before(b.ModTime)
		}
		return a.Name < b.Name
	})
	return found, names, nil
}

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
func (f *Folder) Ready(ctx context.Context) ([]File, error) {
	before, names, err := f.candidates()
	if err != nil || len(names) == 0 {
		return nil, err
	}
	var ready []File
	if f.opts.DoneMarker {
		for _, name := range names {
			st, err := os.Stat(before[name].Path + MarkerSuffix)
			if err == nil && st.Mode().IsRegular() {
				ready = append(ready, before[name])
			}
		}
	} else {
		if err := f.wait(ctx, f.opts.StableFor); err != nil {
			return nil, err
		}
		after, _, err := f.candidates()
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
	}
	out := ready[:0]
	for _, file := range ready {
		sum, same, err := hashFile(ctx, file)
		if err != nil {
			return nil, err
		}
		if !same {
			continue // written to while hashed: not complete after all
		}
		file.SHA256 = sum
		out = append(out, file)
	}
	return out, nil
}

// hashFile returns the hex SHA-256 of the file, and whether its size and
// mtime are still those of file afterwards.
func hashFile(ctx context.Context, file File) (string, bool, error) {
	fh, err := os.Open(file.Path)
	if err != nil {
		return "", false, fmt.Errorf("open %s: %w", file.Name, err)
	}
	defer fh.Close() //nolint:errcheck // read only
	h := sha256.New()
	if _, err := io.Copy(h, ctxReader{ctx: ctx, r: fh}); err != nil {
		return "", false, fmt.Errorf("hash %s: %w", file.Name, err)
	}
	st, err := fh.Stat()
	if err != nil {
		return "", false, fmt.Errorf("stat %s: %w", file.Name, err)
	}
	same := st.Size() == file.Size && st.ModTime().Equal(file.ModTime)
	return hex.EncodeToString(h.Sum(nil)), same, nil
}

// ctxReader stops a long copy when its context is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// Archive moves a file Ready returned into processed/ or failed/ with its
// report beside it as "<name>.report.json" (JSON, mode 0600), and removes
// its marker. Call it only once the outcome is committed. If a file or
// report of that name is already archived, the new one gets a suffix with
// the time and the start of its hash ("export.20250601T120000Z-1a2b3c4d.csv");
// nothing is overwritten. It returns the archived file's path.
func (f *Folder) Archive(ctx context.Context, file File, outcome Outcome, report any) (string, error) {
	if outcome != Processed && outcome != Failed {
		return "", fmt.Errorf("archive %s: unknown outcome %q", file.Name, outcome)
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("archive %s: %w", file.Name, err)
	}
	body, err := json.MarshalIndent(report, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encode report of %s: %w", file.Name, err)
	}
	dir := filepath.Join(f.opts.Dir, string(outcome))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create %s folder: %w", outcome, err)
	}
	for attempt := 0; ; attempt++ {
		name := f.archiveName(file, attempt)
		dest := filepath.Join(dir, name)
		if exists(dest) || exists(dest+ReportSuffix) {
			continue
		}
		err := writeNew(dest+ReportSuffix, append(body, '\n'))
		if errors.Is(err, fs.ErrExist) {
			continue // taken meanwhile
		}
		if err != nil {
			return "", fmt.Errorf("write report of %s: %w", file.Name, err)
		}
		err = moveNew(file.Path, dest)
		if errors.Is(err, fs.ErrExist) {
			_ = os.Remove(dest + ReportSuffix) // ours: written just above
			continue
		}
		if err != nil {
			return "", fmt.Errorf("archive %s: %w", file.Name, err)
		}
		if err := os.Remove(file.Path + MarkerSuffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return dest, fmt.Errorf("remove marker of %s: %w", file.Name, err)
		}
		syncDir(dir)
		syncDir(f.opts.Dir)
		return dest, nil
	}
}

// archiveName is the name for the given attempt: the file's own name
// first, then with a time and hash suffix, then with a counter as well.
func (f *Folder) archiveName(file File, attempt int) string {
	if attempt == 0 {
		return file.Name
	}
	ext := filepath.Ext(file.Name)
	stem := strings.TrimSuffix(file.Name, ext)
	hash := file.SHA256
	if len(hash) > 8 {
		hash = hash[:8]
	}
	suffix := f.now().UTC().Format("20060102T150405Z")
	if hash != "" {
		suffix += "-" + hash
	}
	if attempt > 1 {
		suffix += "-" + strconv.Itoa(attempt)
	}
	return stem + "." + suffix + ext
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// writeNew writes data to a new file at path with mode 0600, failing with
// fs.ErrExist if path exists. The data is complete on disk before the name
// appears.
func writeNew(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".report-*.tmp") // 0600
	if err != nil {
		return fmt.Errorf("create temporary file: %w", err)
	}
	defer os.Remove(tmp.Name()) //nolint:errcheck // gone after a successful link
	if _, err := tmp.Write(data); err != nil {
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
