package sources

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"syscall"
	"testing"
)

// TestTroubleOf sorts real errors of each cause, wrapped as the backends
// wrap them.
func TestTroubleOf(t *testing.T) {
	_, refused := net.Dial("tcp", "127.0.0.1:1") // nothing listens on port 1
	for _, c := range []struct {
		err  error
		want Trouble
	}{
		{&fs.PathError{Op: "rename", Path: "x", Err: syscall.EACCES}, TroublePermission},
		{fmt.Errorf("write reports of x: %w", os.ErrPermission), TroublePermission},
		{&fs.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}, TroubleDiskFull},
		{fmt.Errorf("archive x: %w", refused), TroubleConnection},
		{fmt.Errorf("archive x: %w: connection lost", ErrConnectionLost), TroubleConnection},
		{fmt.Errorf("write: %w", io.ErrUnexpectedEOF), TroubleConnection},
		{fmt.Errorf("rename: %w", syscall.ECONNRESET), TroubleConnection},
		{context.DeadlineExceeded, TroubleConnection},
		{errors.New("the server said no"), TroubleOther},
	} {
		if got := TroubleOf(c.err); got != c.want {
			t.Errorf("TroubleOf(%v) = %s, want %s", c.err, got, c.want)
		}
	}
	if refused == nil {
		t.Fatal("a dial to port 1 succeeded: the connection case is not tested")
	}
}
