package remotedrop

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	"hrsync/sources"
)

// Folder is a drop folder on a server, as a sources.DropFolder. Its
// methods may be called from one goroutine at a time.
type Folder struct {
	dial Dialer
	opts sources.DropFolderOptions
	csv  sources.CSVOptions
	// now and wait are the clock; tests replace them.
	now  func() time.Time
	wait func(ctx context.Context, d time.Duration) error
}

// New returns the folder that dial reaches, configured by cfg (defaults
// applied, validated by the kind that registered it, sources/registry).
func New(dial Dialer, cfg sources.DropConfig) *Folder {
	return &Folder{dial: dial, opts: cfg.Folder.WithDefaults(), csv: cfg.CSV, now: time.Now, wait: sources.Sleep}
}

// Ready returns the complete exports, oldest first, each with the SHA-256
// of its content. Without DoneMarker it takes two looks StableFor apart and
// keeps the files whose size, modification time and ETag did not change;
// with DoneMarker it keeps the files whose marker exists. A file that
// changes while it is hashed is not ready; an empty one, or one the server
// refuses to give, is ready with its problem (it goes to failed/). Ready
// fails as a whole when the server cannot be reached or the session ends.
func (f *Folder) Ready(ctx context.Context) ([]sources.Export, error) {
	s, err := f.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if err := checkSubfolders(ctx, s); err != nil {
		return nil, err
	}
	found, listed, err := f.candidates(ctx, s)
	if err != nil || len(found) == 0 {
		return nil, err
	}
	ready, err := f.settled(ctx, s, found, listed)
	if err != nil {
		return nil, err
	}
	out := make([]sources.Export, 0, len(ready))
	for _, e := range ready {
		x := &export{folder: f, ctx: ctx, name: e.Name, entry: e}
		ok, err := f.inspect(ctx, s, x)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, x)
		}
	}
	return out, nil
}

// FolderChecker is a Store whose server has links (SFTP): CheckFolder
// refuses a sub-folder of the drop folder that is a link, or not a folder
// (sources.CheckSubfolder). An object store has no links, and no
// CheckFolder: a key is a name, never resolved elsewhere.
type FolderChecker interface {
	CheckFolder(ctx context.Context, dir string) error
}

// checkSubfolders checks the drop folder's sub-folders (sources.Subfolders)
// where the store has links: Ready refuses the whole folder while one is a
// link, before any export is read, so that nothing is applied whose
// archive would be written through it.
func checkSubfolders(ctx context.Context, s Store) error {
	fc, ok := s.(FolderChecker)
	if !ok {
		return nil
	}
	for _, dir := range sources.Subfolders() {
		if err := fc.CheckFolder(ctx, dir); err != nil {
			return err
		}
	}
	return nil
}

// candidates lists the files that match the pattern and are not ignored,
// oldest first (then by name), and the names of every file listed (for
// the markers).
func (f *Folder) candidates(ctx context.Context, s Store) ([]Entry, map[string]bool, error) {
	all, err := s.List(ctx, "")
	if err != nil {
		return nil, nil, fmt.Errorf("list drop folder: %w", err)
	}
	pattern := strings.ToLower(f.opts.Pattern)
	var found []Entry
	listed := map[string]bool{}
	for _, e := range all {
		listed[e.Name] = true
		if sources.Ignored(e.Name) {
			continue
		}
		if ok, _ := path.Match(pattern, strings.ToLower(e.Name)); ok { // pattern checked at load
			found = append(found, e)
		}
	}
	sort.Slice(found, func(i, j int) bool {
		if !found[i].ModTime.Equal(found[j].ModTime) {
			return found[i].ModTime.Before(found[j].ModTime)
		}
		return found[i].Name < found[j].Name
	})
	return found, listed, nil
}

// settled keeps the candidates that are complete: with DoneMarker those
// whose marker is listed; else those unchanged over StableFor.
func (f *Folder) settled(ctx context.Context, s Store, found []Entry, listed map[string]bool) ([]Entry, error) {
	if f.opts.DoneMarker {
		var marked []Entry
		for _, e := range found {
			if listed[e.Name+sources.MarkerSuffix] {
				marked = append(marked, e)
			}
		}
		return marked, nil
	}
	if err := f.wait(ctx, f.opts.StableFor); err != nil {
		return nil, err
	}
	after, err := s.List(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("list drop folder: %w", err)
	}
	now := map[string]Entry{}
	for _, e := range after {
		now[e.Name] = e
	}
	var ready []Entry
	for _, e := range found {
		if a, ok := now[e.Name]; ok && sameVersion(a, e) {
			ready = append(ready, e)
		}
	}
	return ready, nil
}

// inspect hashes a settled export. It reports false when the export is not
// ready after all (gone, or changed while hashed); an empty export, or one
// the server refuses to give (no permission), is ready with its problem.
// A session that fails is an error: the export stays for the next run.
func (f *Folder) inspect(ctx context.Context, s Store, x *export) (bool, error) {
	sum, err := hashOf(ctx, s, x.name, io.Discard)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case errors.Is(err, fs.ErrPermission):
		x.problem = fmt.Errorf("%s cannot be read (permission denied): %w", x.Name(), sources.ErrUnusable)
		return true, nil
	case err != nil:
		return false, fmt.Errorf("hash %s: %w", x.Name(), err)
	}
	now, err := s.Stat(ctx, x.name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("stat %s: %w", x.Name(), err)
	case !sameVersion(now, x.entry):
		return false, nil // written to while hashed: not complete after all
	case x.entry.Size == 0:
		x.problem = fmt.Errorf("%s is empty (0 bytes): it holds no export, not even a header: %w", x.Name(), sources.ErrUnusable)
		return true, nil
	}
	x.sha = sum
	return true, nil
}

// hashOf copies the file name to w and returns the hex SHA-256 of what it
// read.
func hashOf(ctx context.Context, s Store, name string, w io.Writer) (string, error) {
	r, err := s.Open(ctx, name)
	if err != nil {
		return "", err
	}
	defer r.Close()
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(h, w), sources.ContextReader(ctx, r)); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Archived returns the export dropped as name (as printed: DisplayName)
// whose content has the hash sum, from processed/.
func (f *Folder) Archived(ctx context.Context, name, sum string) (sources.Source, error) {
	s, err := f.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	entries, err := s.List(ctx, sources.ProcessedDir)
	if err != nil {
		return nil, fmt.Errorf("last good export %s: %w", name, err)
	}
	raw := sources.RawName(name)
	for _, e := range entries {
		if !sources.ArchivedAs(e.Name, raw) {
			continue
		}
		p := path.Join(sources.ProcessedDir, e.Name)
		got, err := hashOf(ctx, s, p, io.Discard)
		if err != nil {
			return nil, fmt.Errorf("hash %s: %w", sources.DisplayName(e.Name), err)
		}
		if got == sum {
			return &export{folder: f, ctx: ctx, name: p, entry: e, sha: sum}, nil
		}
	}
	return nil, fmt.Errorf("last good export %s (sha256 %.12s) is no longer in %s/", name, sum, sources.ProcessedDir)
}

// Count counts the files waiting and those archived (see
// sources.DropFolder), in one session.
func (f *Folder) Count(ctx context.Context) (sources.DropCounts, error) {
	s, err := f.dial(ctx)
	if err != nil {
		return sources.DropCounts{}, err
	}
	defer s.Close()
	waiting, _, err := f.candidates(ctx, s)
	if err != nil {
		return sources.DropCounts{}, err
	}
	n := sources.DropCounts{Waiting: len(waiting)}
	for _, c := range []struct {
		dir   string
		count *int
	}{{sources.ProcessedDir, &n.Processed}, {sources.FailedDir, &n.Failed}, {sources.ApproveDir, &n.Approve}} {
		entries, err := s.List(ctx, c.dir)
		if err != nil {
			return n, fmt.Errorf("list %s/: %w", c.dir, err)
		}
		names := make([]string, 0, len(entries))
		for _, e := range entries {
			names = append(names, e.Name)
		}
		*c.count = sources.CountExports(names)
	}
	return n, nil
}

// Waiting lists the modification times of the files waiting, in one
// session, none of them read.
func (f *Folder) Waiting(ctx context.Context) ([]time.Time, error) {
	s, err := f.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	found, _, err := f.candidates(ctx, s)
	if err != nil {
		return nil, err
	}
	times := make([]time.Time, 0, len(found))
	for _, e := range found {
		times = append(times, e.ModTime)
	}
	return times, nil
}
