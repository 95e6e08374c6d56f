package dropkind

import (
	"context"

	"hrsync/sources"
	"hrsync/sources/registry"
)

// Opener opens a drop folder.
type Opener func() (sources.DropFolder, error)

// Source makes a drop folder a registry.Source: its feed is the folder's
// ready exports, its last good export the one the store records, from
// processed/, and its restore takes an export back from failed/. The folder
// is opened by each call, once. check, when not nil, runs before each
// listing, before the folder is opened (the local folder checks that it
// can still be read and written).
func Source(open Opener, check func() error) registry.Source {
	return &source{open: open, check: check}
}

type source struct {
	open   Opener
	check  func() error
	folder sources.DropFolder
}

// Folder opens the drop folder, once.
func (s *source) Folder() (sources.DropFolder, error) {
	if s.folder != nil {
		return s.folder, nil
	}
	f, err := s.open()
	if err != nil {
		return nil, err
	}
	s.folder = f
	return f, nil
}

// Feed lists the folder's complete exports, oldest first.
func (s *source) Feed(ctx context.Context) ([]sources.Export, error) {
	if s.check != nil {
		if err := s.check(); err != nil {
			return nil, err
		}
	}
	f, err := s.Folder()
	if err != nil {
		return nil, err
	}
	return f.Ready(ctx)
}

// LastExport finds the export last records in processed/.
func (s *source) LastExport(ctx context.Context, last registry.LastRecord) (sources.Source, bool, error) {
	name, sum, ok, err := last(ctx)
	if err != nil || !ok {
		return nil, false, err
	}
	f, err := s.Folder()
	if err != nil {
		return nil, false, err
	}
	src, err := f.Archived(ctx, name, sum)
	if err != nil {
		return nil, false, err
	}
	return src, true, nil
}

// CheckRestore checks that rel names an export in failed/.
func (s *source) CheckRestore(ctx context.Context, rel string) error {
	f, err := s.Folder()
	if err != nil {
		return err
	}
	return f.FailedExport(ctx, rel)
}

// Restore takes the export rel names back from failed/.
func (s *source) Restore(ctx context.Context, rel string) (sources.Export, error) {
	f, err := s.Folder()
	if err != nil {
		return nil, err
	}
	return f.Restore(ctx, rel)
}
