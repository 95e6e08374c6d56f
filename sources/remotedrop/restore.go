package remotedrop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"hrsync/sources"
)

// notFailed is the refusal of a name that is not an export in failed/.
func notFailed(rel, reason string) error {
	return fmt.Errorf("%q %s: %w", rel, reason, sources.ErrNotFailedExport)
}

// failedName is the name in failed/ that rel ("failed/NAME", the name as
// printed or as stored) names, checked without asking the server.
func failedName(rel string) (string, error) {
	if strings.TrimSpace(rel) == "" {
		return "", notFailed(rel, "names no file: give "+sources.FailedDir+"/NAME")
	}
	p := path.Clean(strings.TrimPrefix(rel, "./"))
	if path.Dir(p) != sources.FailedDir {
		return "", notFailed(rel, "is not in the drop folder's "+sources.FailedDir+"/ (give it as "+sources.FailedDir+"/NAME, relative to the drop folder)")
	}
	name := sources.RawName(path.Base(p))
	if sources.Ignored(name) {
		return "", notFailed(rel, "is a report, marker or partial upload, not an export")
	}
	return name, nil
}

// FailedExport checks that rel names an export archived in failed/ (see
// sources.DropFolder).
func (f *Folder) FailedExport(ctx context.Context, rel string) error {
	s, err := f.dial(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	_, _, err = f.failedEntry(ctx, s, rel)
	return err
}

// failedEntry finds the export rel names in failed/.
func (f *Folder) failedEntry(ctx context.Context, s Store, rel string) (string, Entry, error) {
	name, err := failedName(rel)
	if err != nil {
		return "", Entry{}, err
	}
	e, err := s.Stat(ctx, path.Join(sources.FailedDir, name))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, rerr := s.Stat(ctx, path.Join(sources.FailedDir, name+sources.ReportSuffix)); rerr == nil {
			return "", Entry{}, notFailed(rel, "is no longer in "+sources.FailedDir+"/ (only the report of its stopped run is): an earlier --file run took it back")
		}
		return "", Entry{}, notFailed(rel, "is not in the drop folder's "+sources.FailedDir+"/: no such file")
	case err != nil:
		return "", Entry{}, fmt.Errorf("stat %q: %w", rel, err)
	}
	return name, e, nil
}

// Restore takes the export rel names back from failed/ into the folder
// (see sources.DropFolder): under its own name, or with the suffix of
// sources.ArchiveName when a file of that name waits; with its marker when
// the folder uses markers.
func (f *Folder) Restore(ctx context.Context, rel string) (sources.Export, error) {
	s, err := f.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	name, e, err := f.failedEntry(ctx, s, rel)
	if err != nil {
		return nil, err
	}
	src := path.Join(sources.FailedDir, name)
	sum, err := hashOf(ctx, s, src, io.Discard)
	if err != nil {
		return nil, fmt.Errorf("hash %q: %w", rel, err)
	}
	for attempt := 0; ; attempt++ {
		target := sources.ArchiveName(name, sum, f.now(), attempt)
		err := s.Archive(ctx, src, target, e)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("take %q back: %w", rel, err)
		}
		if f.opts.DoneMarker {
			if err := s.WriteReport(ctx, target+sources.MarkerSuffix, sources.Empty, 0o600); err != nil && !errors.Is(err, fs.ErrExist) {
				return nil, fmt.Errorf("write marker of %s: %w", sources.DisplayName(target), err)
			}
		}
		now, err := s.Stat(ctx, target)
		if err != nil {
			return nil, fmt.Errorf("stat %s: %w", sources.DisplayName(target), err)
		}
		return &export{folder: f, ctx: ctx, name: target, entry: now, sha: sum}, nil
	}
}
