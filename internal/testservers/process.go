package testservers

import (
	"context"
	"os"
	"os/exec"
	"testing"
)

// process is a server binary running for a test.
type process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when it has exited
}

// startProcess starts bin with args and env added to the test's
// environment; its output goes to the test's stderr.
func startProcess(t testing.TB, env []string, bin string, args ...string) *process {
	t.Helper()
	cmd := exec.CommandContext(context.Background(), bin, args...) //nolint:gosec // the test environment names the server binary
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	return p
}

// stop kills the process, and with children its descendants too, unless it
// has exited already.
func (p *process) stop(children bool) {
	if p == nil {
		return
	}
	select {
	case <-p.done:
		return
	default:
	}
	var kids []int
	if children {
		kids = descendants(p.cmd.Process.Pid)
	}
	_ = p.cmd.Process.Kill()
	<-p.done
	for _, pid := range kids {
		if proc, err := os.FindProcess(pid); err == nil {
			_ = proc.Kill()
		}
	}
}
