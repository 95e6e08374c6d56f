package main_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestDemoRefusesABusyAddress runs examples/demo.sh (what `make demo`
// runs) with DEMO_ADDR taken by a server that answers everything like an
// emulator would: the script must stop with a message naming DEMO_ADDR,
// before it starts anything, and send that server nothing.
func TestDemoRefusesABusyAddress(t *testing.T) {
	script, err := filepath.Abs(filepath.Join("..", "..", "examples", "demo.sh"))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var requests atomic.Int64
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			requests.Add(1)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"companyId":"10000000-0000-4000-8000-000000000001"}`))
		}),
		ReadHeaderTimeout: 5 * time.Second,
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	addr := ln.Addr().String()

	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Dir = dir
	cmd.Env = childEnv("BIN="+binaryPath(), "DEMO_ADDR="+addr)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("demo.sh with DEMO_ADDR %s taken: want a non-zero exit, got %v\nstdout:\n%s\nstderr:\n%s", addr, err, stdout.String(), stderr.String())
	}
	if want := "DEMO_ADDR " + addr + " is taken"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("the server on DEMO_ADDR received %d HTTP requests, want none", n)
	}
	if _, err := os.Stat(filepath.Join(dir, "demo")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("demo/ was created (%v): the script went on past the check", err)
	}
}
