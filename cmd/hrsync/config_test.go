package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runConfigCmd runs `hrsync <args>` in process and returns its output and
// exit code.
func runConfigCmd(t *testing.T, args ...string) (string, int) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	if err != nil {
		out.WriteString(err.Error())
	}
	return out.String(), exitCode(err)
}

func TestConfigCommand(t *testing.T) {
	dir := t.TempDir()
	const token = "tok-cmd-s3cr3t"
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte(`api:
  tokenFile: token
tenants:
  - name: acme
    companyId: 10000000-0000-4000-8000-000000000001
    collectionId: 20000000-0000-4000-8000-000000000002
    source: {csv: {dir: drop}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "drop"), 0o700); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(`api:
  timout: 3s
tenants:
  - name: acme
    safeguards: {minRowsRatio: 2}
    source: {csv: {dir: absent}}
`), 0o600); err != nil {
		t.Fatal(err)
	}

	t.Run("check a valid file", func(t *testing.T) {
		out, code := runConfigCmd(t, "config", "check", "--config", good)
		if code != exitOK {
			t.Fatalf("exit %d, output:\n%s", code, out)
		}
		for _, want := range []string{
			"is valid: 1 tenant(s): acme (csv)",
			"\n  state: SQLite file " + filepath.Join(dir, "hrsync.db") + " (not created yet: the first run or hrsync migrate creates it)\n",
			"\n  tenant acme: drop folder " + filepath.Join(dir, "drop") + " (readable and writable; processed/, failed/, approve/ created by the first run)\n",
			"api token: set",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "hrsync.db")); err == nil {
			t.Errorf("config check created the state")
		}
	})
	t.Run("check names a PostgreSQL store's schema, without its password", func(t *testing.T) {
		t.Setenv("HRSYNC_STORE_URL", "postgres://hrsync:pg-s3cr3t@db.internal:5432/hr")
		out, code := runConfigCmd(t, "config", "check", "--config", good)
		if code != exitOK || !strings.Contains(out, "\n  state: PostgreSQL postgres://hrsync:xxxxx@db.internal:5432/hr, schema hrsync\n") || strings.Contains(out, "pg-s3cr3t") {
			t.Errorf("exit %d, output:\n%s", code, out)
		}
	})
	t.Run("check lists every problem and exits 2", func(t *testing.T) {
		out, code := runConfigCmd(t, "config", "check", "--config", bad)
		if code != exitUsage {
			t.Errorf("exit %d, want %d", code, exitUsage)
		}
		for _, want := range []string{
			`api.timout: unknown key "timout"; did you mean "timeout"? (line 2, column 3)`,
			"tenants[0].companyId: is required",
			"tenants[0].safeguards.minRowsRatio: must be between 0 and 1 (line 5)",
			"tenants[0].source.csv.dir: folder " + filepath.Join(dir, "absent") + " does not exist (line 6)",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("show prints the effective configuration without the token", func(t *testing.T) {
		out, code := runConfigCmd(t, "config", "show", "--config", good)
		if code != exitOK {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		if strings.Contains(out, token) {
			t.Errorf("show prints the token")
		}
		for _, want := range []string{"# api token: set", "maxDepartedRatio: 0.2", "windowBefore: 30d", "dir: " + filepath.Join(dir, "drop")} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("show of an invalid file exits 2", func(t *testing.T) {
		if _, code := runConfigCmd(t, "config", "show", "--config", bad); code != exitUsage {
			t.Errorf("exit %d, want %d", code, exitUsage)
		}
	})
}
