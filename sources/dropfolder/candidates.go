package dropfolder

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"hrsync/sources"
)

// candidates lists the entries of the drop folder itself that match the
// pattern (candidatesIn).
func (f *Folder) candidates() (map[string]File, []string, error) {
	return f.candidatesIn("", f.opts.Pattern)
}

// candidatesIn lists the entries of the sub-folder sub ("" for the drop
// folder itself) that match pattern ("" matches every name) and are not
// ignored, oldest first (then by name), with their size and mtime (of the
// entry itself: a link is not followed). Folders are never exports and are
// left out; a link, a named pipe, a socket or a device, and an entry that
// cannot be examined, comes with its Problem.
func (f *Folder) candidatesIn(sub, pattern string) (map[string]File, []string, error) {
	dir := filepath.Join(f.opts.Dir, sub)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("list %s: %w", folderName(sub), err)
	}
	pattern = strings.ToLower(pattern)
	found := map[string]File{}
	var names []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || Ignored(name) {
			continue
		}
		if ok, _ := filepath.Match(pattern, strings.ToLower(name)); pattern != "" && !ok { // pattern checked in New
			continue
		}
		file, ok := f.candidate(sub, e)
		if !ok {
			continue
		}
		found[name] = file
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

// folderName names the sub-folder sub in an error: "drop folder" for the
// folder itself.
func folderName(sub string) string {
	if sub == "" {
		return "drop folder"
	}
	return sub + "/"
}

// candidate describes one entry of the sub-folder sub; false when it is
// gone.
func (f *Folder) candidate(sub string, e fs.DirEntry) (File, bool) {
	name := e.Name()
	file := File{Path: filepath.Join(f.opts.Dir, sub, name), Name: name, Sub: sub}
	info, err := e.Info()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return file, false // gone since ReadDir
	case err != nil:
		file.Problem = unreadable(name, err)
		return file, true
	}
	file.Size, file.ModTime, file.info = info.Size(), info.ModTime(), info
	switch mode := info.Mode(); {
	case mode&fs.ModeSymlink != 0:
		file.Problem = problem(name, "is a symbolic link: hrsync never follows a link in the drop folder "+
			"(put the export itself into the folder)", sources.ErrLinkEntry)
	case !mode.IsRegular():
		file.Problem = problem(name, "is "+kindOf(mode)+", not a file hrsync can read", nil)
	}
	return file, true
}
