package dropfolder

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"hrsync/sources"
)

// Status is what Check found of a drop folder.
type Status struct {
	// Dir is the folder checked.
	Dir string
	// Problems say what keeps the folder from serving; empty when it does.
	Problems []string
	// Missing lists the sub-folders (processed, failed, approve) that do
	// not exist yet: hrsync creates processed/ and failed/ when it first
	// archives a file, and approve/ at its first run.
	Missing []string
}

// Check checks that a drop folder exists, is a folder and can be listed;
// with write, also that files can be created in it, and that processed/,
// failed/ and approve/ are writable folders or, when missing, can be
// created (the first archive, or run, creates them). Writability is tried by creating and
// removing a hidden file (drop folders ignore hidden files), which also
// catches read-only mounts and access lists.
func Check(dir string, write bool) Status {
	st := Status{Dir: dir}
	if reason := readableDir(dir); reason != "" {
		st.Problems = append(st.Problems, reason)
		return st
	}
	if !write {
		return st
	}
	if reason := writableDir(dir); reason != "" {
		st.Problems = append(st.Problems, reason)
		return st
	}
	for _, sub := range sources.Subfolders() {
		p := filepath.Join(dir, sub)
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			st.Missing = append(st.Missing, sub)
			continue
		}
		if reason := readableDir(p); reason != "" {
			st.Problems = append(st.Problems, sub+"/: "+reason)
		} else if reason := writableDir(p); reason != "" {
			st.Problems = append(st.Problems, sub+"/: "+reason)
		}
	}
	return st
}

// readableDir says why dir is not a folder that can be listed, or "".
func readableDir(dir string) string {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("folder %s does not exist", dir)
	case err != nil:
		return fmt.Sprintf("folder %s cannot be reached: %s", dir, osReason(err))
	case !fi.IsDir():
		return fmt.Sprintf("%s is not a folder", dir)
	}
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Sprintf("folder %s cannot be read: %s", dir, osReason(err))
	}
	defer f.Close()
	if _, err := f.ReadDir(1); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Sprintf("folder %s cannot be listed: %s", dir, osReason(err))
	}
	return ""
}

// writableDir says why no file can be created in dir, or "".
func writableDir(dir string) string {
	f, err := os.CreateTemp(dir, ".hrsync-write-check-*")
	if err != nil {
		return fmt.Sprintf("folder %s is not writable: %s", dir, osReason(err))
	}
	name := f.Name()
	_ = f.Close()
	if err := os.Remove(name); err != nil {
		return fmt.Sprintf("folder %s: a file created there cannot be removed: %s", dir, osReason(err))
	}
	return ""
}

// osReason is the operating system's reason without the path it repeats.
func osReason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if errors.Is(err, fs.ErrPermission) {
		return "permission denied"
	}
	return err.Error()
}
