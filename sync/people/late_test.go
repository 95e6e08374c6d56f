package people

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"strings"
	"syscall"
	"testing"
)

// TestArchiveTrouble: the cause of a failed archive is named in plain
// words from the error, whatever wraps it, and never quotes the error.
func TestArchiveTrouble(t *testing.T) {
	lost := "the connection to the drop folder's server was lost"
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("move employees.csv: %w", fs.ErrPermission), "permission denied"},
		{fmt.Errorf("rename: %w", syscall.EACCES), "permission denied"},
		{fmt.Errorf("write report: %w", syscall.ENOSPC), "disk was full"},
		{fmt.Errorf("write report: %w", syscall.EDQUOT), "disk was full"},
		{fmt.Errorf("connect: %w", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}), lost},
		{fmt.Errorf("sftp: %w", io.EOF), lost},
		{errors.New("ssh: handshake failed: EOF"), lost},
		{errors.New("connection lost"), lost},
		{errors.New("the server said no"), "refused to move it"},
	} {
		cause, next := archiveTrouble(c.err)
		if !strings.Contains(cause, c.want) || next == "" || strings.Contains(cause, c.err.Error()) {
			t.Errorf("archiveTrouble(%v) = %q, %q; want a cause with %q and a next step", c.err, cause, next, c.want)
		}
	}
}
