package main_test

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestE2ERunSIGTERM stops a one-shot `hrsync run people` (SIGTERM) while
// its createPeople calls are answered late: the cycle stops after the call
// in flight and commits it, the run is recorded interrupted (not failed),
// the exit code is 1 and the last line says the run was stopped; the next
// run completes the work.
func TestE2ERunSIGTERM(t *testing.T) {
	e := newEnv(t, configOptions{batchSize: 25, concurrency: 1})
	e.emu.addFault(t, fault{Operation: "createPeople", Latency: "1s"})
	staff := genPeople(0, 100)
	e.dropFile("staff.csv", csvExport(staff))
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := e.command(ctx, "run", "people")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if !waitFor(time.Minute, func() bool { return countOp(e.emu.requests(t), "createPeople") >= 1 }) {
		t.Fatalf("no createPeople call reached the emulator:\n%s", stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1:\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "interrupted: people "+tenantName+": ") {
		t.Errorf("the last line does not say the run was interrupted:\n%s", stderr.String())
	}
	for query, want := range map[string]int{
		"SELECT COUNT(*) FROM runs WHERE outcome = 'interrupted'":           1,
		"SELECT COUNT(*) FROM runs WHERE outcome IN ('failed', 'running')":  0,
		"SELECT COUNT(*) FROM grants WHERE state IN ('pending', 'unknown')": 0,
		"SELECT COUNT(*) FROM api_journal WHERE state = 'sent'":             0,
	} {
		if n := e.count(query); n != want {
			t.Errorf("%s: %d, want %d", query, n, want)
		}
	}
	e.emu.clearFaults(t)
	e.mustRun(0, "run", "people")
	checkPeople(t, e, staff)
}
