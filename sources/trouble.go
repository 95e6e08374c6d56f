package sources

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"syscall"
)

// ErrConnectionLost marks an error of a drop folder on a server whose
// connection was lost (or could not be made) in the middle of an
// operation; a backend wraps its protocol's own "connection lost" with it.
var ErrConnectionLost = errors.New("the connection to the drop folder's server was lost")

// Trouble is why an operation on a drop folder failed, as an operator
// acts on it: a lost connection, a refused permission or a full disk.
type Trouble string

// The kinds of Trouble.
const (
	TroubleConnection Trouble = "connection"
	TroublePermission Trouble = "permission"
	TroubleDiskFull   Trouble = "diskFull"
	TroubleOther      Trouble = "other"
)

// TroubleOf sorts a drop folder's error by its cause, from the standard
// errors it wraps.
func TroubleOf(err error) Trouble {
	var netErr net.Error
	switch {
	case errors.Is(err, fs.ErrPermission):
		return TroublePermission
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return TroubleDiskFull
	case errors.Is(err, ErrConnectionLost), errors.As(err, &netErr), errors.Is(err, net.ErrClosed),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNABORTED),
		errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ETIMEDOUT), errors.Is(err, syscall.EHOSTUNREACH),
		errors.Is(err, syscall.ENETUNREACH):
		return TroubleConnection
	}
	return TroubleOther
}

// ArchiveNext is what an operator does about an export that could not be
// archived because of err; the export stays in the drop folder and the
// next run archives it (or reads it again).
func ArchiveNext(err error) string {
	switch TroubleOf(err) {
	case TroubleConnection:
		return "the connection to the drop folder was lost: check its server and the network; nothing is lost, the next run archives it"
	case TroublePermission:
		return "permission denied: let hrsync write in the drop folder and its processed/ and failed/"
	case TroubleDiskFull:
		return "the disk of the drop folder is full: free space (or raise its quota)"
	}
	return "check the drop folder and its processed/ and failed/ for the error above; the next run tries again"
}
