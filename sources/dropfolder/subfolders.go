package dropfolder

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"hrsync/sources"
)

// subfolder checks the sub-folder name of the drop folder with Lstat (a
// link is refused, never followed: sources.CheckSubfolder) and returns
// its path; exists is false when it is not there yet.
func (f *Folder) subfolder(name string) (dir string, exists bool, err error) {
	dir = filepath.Join(f.opts.Dir, name)
	st, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return dir, false, nil
	case err != nil:
		return dir, false, fmt.Errorf("look at %s/: %w", name, errors.Unwrap(err))
	}
	if err := sources.CheckSubfolder(name, st.Mode()); err != nil {
		return dir, true, err
	}
	return dir, true, nil
}

// makeSubfolder returns the path of the sub-folder name, created (one
// level, mode dirMode) when it is not there; a link or a file in its
// place is refused (sources.CheckSubfolder), and so is one that appears
// as a link meanwhile.
func (f *Folder) makeSubfolder(name string) (string, error) {
	dir, exists, err := f.subfolder(name)
	if err != nil || exists {
		return dir, err
	}
	if err := os.Mkdir(dir, f.dirMode()); err != nil && !errors.Is(err, fs.ErrExist) {
		return dir, fmt.Errorf("create %s folder: %w", name, errors.Unwrap(err))
	}
	dir, _, err = f.subfolder(name)
	return dir, err
}

// checkSubfolders checks every sub-folder of the drop folder
// (sources.Subfolders) that exists: Ready refuses the whole folder while
// one is a link, before any export is read, so that nothing is applied
// whose archive would be written through it.
func (f *Folder) checkSubfolders() error {
	for _, name := range sources.Subfolders() {
		if _, _, err := f.subfolder(name); err != nil {
			return err
		}
	}
	return nil
}
