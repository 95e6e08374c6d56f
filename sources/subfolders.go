package sources

import (
	"errors"
	"io/fs"
)

// ErrSubfolder matches (errors.Is) a *SubfolderError.
var ErrSubfolder = errors.New("a sub-folder of the drop folder cannot be used")

// ErrLinkEntry marks the problem of an entry of a drop folder that is a
// symbolic link: never followed, it goes to failed/ with its report, and
// its run ends in attention (nothing a retry could change), not failed.
var ErrLinkEntry = errors.New("a symbolic link in the drop folder")

// Subfolders returns the sub-folders a drop folder keeps (processed/,
// failed/, approve/); every one is checked with CheckSubfolder before
// hrsync reads from or writes into it.
func Subfolders() []string { return []string{ProcessedDir, FailedDir, ApproveDir} }

// SubfolderError refuses a sub-folder of a drop folder that is a symbolic
// link (on a local or SFTP folder), or something other than a folder:
// hrsync never reads from or writes through a link out of the drop
// folder (invariant 8). It names the folder relative to the drop folder,
// never a path of the machine.
type SubfolderError struct {
	// Folder is the sub-folder's name ("processed").
	Folder string
	// Link is set when it is a symbolic link; else it is not a folder.
	Link bool
}

// Error says what is wrong and what to do, in words an HR admin reads.
func (e *SubfolderError) Error() string {
	if e.Link {
		return "the drop folder's " + e.Folder + "/ is a symbolic link: hrsync never reads or writes through a link " +
			"(replace it with a real folder named " + e.Folder + " inside the drop folder)"
	}
	return "the drop folder's " + e.Folder + "/ is not a folder " +
		"(move that file away, so that hrsync can create the folder " + e.Folder + ")"
}

// Is makes errors.Is(err, ErrSubfolder) hold.
func (e *SubfolderError) Is(target error) bool { return target == ErrSubfolder }

// CheckSubfolder checks the mode that Lstat (never Stat: a link is not
// followed) gave for the sub-folder name of a drop folder: a
// *SubfolderError when it is a link or not a folder.
func CheckSubfolder(name string, mode fs.FileMode) error {
	switch {
	case mode&fs.ModeSymlink != 0:
		return &SubfolderError{Folder: name, Link: true}
	case !mode.IsDir():
		return &SubfolderError{Folder: name}
	}
	return nil
}
