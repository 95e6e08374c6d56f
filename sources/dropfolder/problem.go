package dropfolder

import (
	"errors"
	"io/fs"
	"syscall"
)

// ProblemError says why a file of the drop folder cannot be processed at
// all: it cannot be read (no permission, an I/O error), it is empty, it is
// a symbolic link (never followed) or another file that is not a regular
// file (a named pipe, a socket, a device). Ready returns such a file with
// its Problem set; it goes to failed/ with its report, and never stops the
// other files.
type ProblemError struct {
	// Name is the file's name in the folder (raw: print DisplayName).
	Name string
	// Reason completes the sentence that starts with the file's name.
	Reason string
	// Err is the system's error, when there is one.
	Err error
}

// Error names the file (escaped, see DisplayName) and says what is wrong.
func (e *ProblemError) Error() string { return DisplayName(e.Name) + " " + e.Reason }

// Unwrap returns the system's error.
func (e *ProblemError) Unwrap() error { return e.Err }

// problem is a *ProblemError.
func problem(name, reason string, err error) *ProblemError {
	return &ProblemError{Name: name, Reason: reason, Err: err}
}

// unreadable is the problem of a file that open or read refused, saying the
// system's reason without the path (which holds the raw name and the
// machine's folders).
func unreadable(name string, err error) *ProblemError {
	return problem(name, "cannot be read ("+sysReason(err)+")", err)
}

// sysReason is err's message without the operation and path of a
// *fs.PathError.
func sysReason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// transient tells whether an error of open or read says the process or the
// system is short of something (descriptors, memory) or was interrupted:
// nothing about the file, so the run fails and the file stays, rather than
// going to failed/.
func transient(err error) bool {
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOMEM, syscall.EAGAIN, syscall.EINTR} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// kindOf names what a non-regular file is, for its problem.
func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "a device"
	default:
		return "not a regular file"
	}
}
