package testservers

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Tool finds the binary of a server the tests start that `make test-deps`
// builds into bin/tools (versitygw, mailpit): the file the variable env
// names, else bin/tools/NAME of this module, else NAME on PATH. The test
// fails, never skips, when none is there, saying how to get it.
func Tool(t testing.TB, env, name string) string {
	t.Helper()
	if bin := os.Getenv(env); bin != "" {
		if _, err := os.Stat(bin); err != nil { //nolint:gosec // the test environment names the server binary
			t.Fatalf("%s names %s: %v", env, name, err)
		}
		return bin
	}
	if root, err := moduleRoot(); err == nil {
		bin := filepath.Join(root, "bin", "tools", name)
		if _, err := os.Stat(bin); err == nil {
			return bin
		}
	}
	bin, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("the tests need %s: run `make test-deps` (it builds the pinned version into bin/tools), or set %s to its binary", name, env)
	}
	return bin
}

// moduleRoot is the nearest folder at or above the working directory that
// holds a go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
