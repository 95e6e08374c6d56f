package remotedrop

import (
	"context"
	"fmt"
	"path"
	"sort"

	"hrsync/sources"
)

// FolderMaker is a Store whose server has folders (SFTP): MakeFolder
// creates the sub-folder dir of the drop folder when it is not there, and
// refuses one that is a link or not a folder (sources.CheckSubfolder). An
// object store has none: a key under approve/ needs no folder.
type FolderMaker interface {
	MakeFolder(ctx context.Context, dir string) error
}

// Approvals returns the files an HR admin placed in approve/ (see
// sources.DropFolder), oldest first, each hashed, in one session: every
// file not ignored, whatever the pattern, complete once unchanged over
// StableFor (markers are not used there). approve/ is created where the
// server has folders.
func (f *Folder) Approvals(ctx context.Context) ([]sources.Export, error) {
	s, err := f.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if err := checkSubfolders(ctx, s); err != nil {
		return nil, err
	}
	if fm, ok := s.(FolderMaker); ok {
		if err := fm.MakeFolder(ctx, sources.ApproveDir); err != nil {
			return nil, err
		}
	}
	found, err := f.approveCandidates(ctx, s)
	if err != nil || len(found) == 0 {
		return nil, err
	}
	if err := f.wait(ctx, f.opts.StableFor); err != nil {
		return nil, err
	}
	after, err := f.approveCandidates(ctx, s)
	if err != nil {
		return nil, err
	}
	now := make(map[string]Entry, len(after))
	for _, e := range after {
		now[e.Name] = e
	}
	var out []sources.Export
	for _, e := range found {
		if a, ok := now[e.Name]; !ok || !sameVersion(a, e) {
			continue // still being written
		}
		x := &export{folder: f, ctx: ctx, name: path.Join(sources.ApproveDir, e.Name), entry: e}
		ok, err := f.inspect(ctx, s, x)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, approvedExport{export: x})
		}
	}
	return out, nil
}

// approveCandidates lists the files of approve/ that are not ignored,
// oldest first (then by name).
func (f *Folder) approveCandidates(ctx context.Context, s Store) ([]Entry, error) {
	all, err := s.List(ctx, sources.ApproveDir)
	if err != nil {
		return nil, fmt.Errorf("list %s/: %w", sources.ApproveDir, err)
	}
	found := all[:0]
	for _, e := range all {
		if !sources.Ignored(e.Name) {
			found = append(found, e)
		}
	}
	sort.Slice(found, func(i, j int) bool {
		if !found[i].ModTime.Equal(found[j].ModTime) {
			return found[i].ModTime.Before(found[j].ModTime)
		}
		return found[i].Name < found[j].Name
	})
	return found, nil
}

// approvedExport is a file of approve/ as a sources.Approved export.
type approvedExport struct{ *export }

// ApprovedBy is who placed the file, where the server tells it (Entry.By).
func (a approvedExport) ApprovedBy() string { return a.entry.By }
