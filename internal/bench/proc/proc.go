// Package proc runs a benchmark's child process and measures it: the wall
// time from start to exit and the peak resident set size the kernel
// reports for it (getrusage's ru_maxrss, through os.ProcessState).
//
// Measuring a child rather than a function of the harness keeps the figures
// honest: the child's peak memory is its own, not the harness's heap, and
// its wall time includes start-up, as an operator would see it. Children
// are started through a small launcher process (see Run) so that the
// harness's own memory never leaks into a child's peak. Peak memory is
// read on Linux (KiB) and macOS (bytes).
package proc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
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
	Stdout []byte `json:"-"`
}

// MiB is a mebibyte in bytes.
const MiB = 1 << 20

// PeakMiB is PeakRSS in MiB.
func (m Measurement) PeakMiB() float64 { return float64(m.PeakRSS) / MiB }

// stderrTail bounds how much of a failing child's standard error an error
// quotes.
const stderrTail = 2048

// LauncherArg is the first argument that makes a program the launcher: main
// calls Launch with the arguments that follow.
const LauncherArg = "__proc_launch"

// Run runs name with args through launcher and measures it. launcher is a
// program (typically this one, os.Executable) whose main calls Launch when
// its first argument is LauncherArg.
//
// The launcher is there because Linux counts a process's resident memory
// before execve in its ru_maxrss: a child started straight from a harness
// that holds hundreds of MiB would report the harness's peak. The
// launcher is a fresh, small process, so the grandchild it starts reports
// its own peak (or the launcher's few MiB, whichever is larger).
//
// env, when not nil, is the environment of the launcher and of the child.
// The child's standard output is kept in the measurement; its standard
// error is quoted (its end only) in the error of a failed run. When ctx
// ends, the launcher is interrupted and stops the child.
func Run(ctx context.Context, launcher string, env []string, name string, args ...string) (Measurement, error) {
	res, err := os.CreateTemp("", "proc-measure-*.json")
	if err != nil {
		return Measurement{}, fmt.Errorf("measurement file: %w", err)
	}
	resPath := res.Name()
	_ = res.Close()
	defer os.Remove(resPath)

	cmd := exec.CommandContext(ctx, launcher, append([]string{LauncherArg, resPath, name}, args...)...)
	cmd.Env = env
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	runErr := cmd.Run()

	var m Measurement
	data, err := os.ReadFile(resPath)
	if err == nil && len(data) > 0 {
		err = json.Unmarshal(data, &m)
	}
	if err != nil || len(data) == 0 {
		err = errors.Join(runErr, err)
		return Measurement{}, fmt.Errorf("run %s: no measurement: %w: %s", name, err, tail(errOut.String()))
	}
	m.Stdout = out.Bytes()
	if runErr != nil {
		return m, fmt.Errorf("run %s: %w: %s", name, runErr, tail(errOut.String()))
	}
	if m.PeakRSS == 0 {
		return m, errors.New("run " + name + ": the system reported no peak memory")
	}
	return m, nil
}

func tail(s string) string {
	if len(s) > stderrTail {
		s = "..." + s[len(s)-stderrTail:]
	}
	return strings.TrimSpace(s)
}

// Launch is the launcher's body: args are the measurement file, the
// program and its arguments. It runs the program with the launcher's
// standard streams and environment, writes the measurement (as JSON) to
// the file, and returns the exit code to end with: the program's own, or
// 1 when it could not run. ctx ending stops the program.
func Launch(ctx context.Context, args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "launch: usage: MEASUREMENT-FILE PROGRAM [ARG...]")
		return 2
	}
	cmd := exec.CommandContext(ctx, args[1], args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	m := Measurement{Wall: time.Since(start)}
	code := 0
	if err != nil {
		fmt.Fprintln(os.Stderr, "launch:", err)
		code = 1
	}
	if ps := cmd.ProcessState; ps != nil {
		m.User, m.System = ps.UserTime(), ps.SystemTime()
		m.PeakRSS = maxRSS(ps)
		if ps.ExitCode() > 0 {
			code = ps.ExitCode()
		}
	}
	data, jerr := json.Marshal(m)
	if jerr == nil {
		jerr = os.WriteFile(args[0], data, 0o600)
	}
	if jerr != nil {
		fmt.Fprintln(os.Stderr, "launch: write measurement:", jerr)
		return 1
	}
	return code
}

// maxRSS reads ru_maxrss in bytes: Linux reports KiB, macOS bytes.
func maxRSS(ps interface{ SysUsage() any }) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return ru.Maxrss
	}
	return ru.Maxrss * 1024
}
