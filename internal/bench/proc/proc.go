// Package proc runs a benchmark's child process and measures it: the wall
// time from start to exit and the peak resident set size the kernel
// reports for it (getrusage's ru_maxrss, through os.ProcessState).
//
// Measuring a child rather than a function of the harness keeps the figures
// honest: the child's peak memory is its own, not the harness's heap, and
// its wall time includes start-up, as an operator would see it.
package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// Measurement is what one child run cost.
type Measurement struct {
	// Wall is the time from start to exit.
	Wall time.Duration
	// PeakRSS is the peak resident set size in bytes.
	PeakRSS int64
	// User and System are the CPU times the child used.
	User, System time.Duration
	// Stdout is everything the child wrote on its standard output.
	Stdout []byte
}

// MiB is a mebibyte in bytes.
const MiB = 1 << 20

// PeakMiB is PeakRSS in MiB.
func (m Measurement) PeakMiB() float64 { return float64(m.PeakRSS) / MiB }

// stderrTail bounds how much of a failing child's standard error an error
// quotes.
const stderrTail = 2048

// Run starts name with args and waits for it; ctx kills the child when it
// ends first. The child's standard output is kept in the measurement; its
// standard error is quoted (its end only) in the error of a failed run.
// env, when not nil, replaces the child's environment.
func Run(ctx context.Context, env []string, name string, args ...string) (Measurement, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	m := Measurement{Wall: time.Since(start), Stdout: out.Bytes()}
	if cmd.ProcessState != nil {
		m.User, m.System = cmd.ProcessState.UserTime(), cmd.ProcessState.SystemTime()
		m.PeakRSS = maxRSS(cmd.ProcessState)
	}
	if err != nil {
		tail := errOut.String()
		if len(tail) > stderrTail {
			tail = "..." + tail[len(tail)-stderrTail:]
		}
		return m, fmt.Errorf("run %s: %w: %s", name, err, strings.TrimSpace(tail))
	}
	if m.PeakRSS == 0 {
		return m, errors.New("run " + name + ": the system reported no peak memory")
	}
	return m, nil
}

// maxRSS reads ru_maxrss in bytes: Linux reports KiB, macOS bytes.
func maxRSS(ps interface{ SysUsage() any }) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) * 1024
}
