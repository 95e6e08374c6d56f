package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunFileRefusals checks the refusals of `run people --file` that need
// a configuration the end-to-end env does not have: each exits with the
// usage code before the store or the platform is touched.
func TestRunFileRefusals(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"a/failed", "b/failed"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "failed", "x.csv"), []byte("externalId\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HRSYNC_RETRY_TEST_HR_DSN", "postgres://hr@127.0.0.1:1/hr") // never reached
	cfg := filepath.Join(dir, "hrsync.yaml")
	if err := os.WriteFile(cfg, []byte(`store:
  url: sqlite:`+filepath.Join(dir, "state.db")+`
tenants:
  - name: alpha
    companyId: 7b2e4c9d-3f1a-4b5c-9d8e-7f6a5b4c3d2e
    collectionId: 1c8f3a5e-6b7c-4d8e-9f0a-1b2c3d4e5f6a
    source: {csv: {dir: a}}
  - name: beta
    companyId: 7b2e4c9d-3f1a-4b5c-9d8e-7f6a5b4c3d2e
    collectionId: 1c8f3a5e-6b7c-4d8e-9f0a-1b2c3d4e5f6a
    source: {csv: {dir: b}}
  - name: hrdb
    companyId: 7b2e4c9d-3f1a-4b5c-9d8e-7f6a5b4c3d2e
    collectionId: 1c8f3a5e-6b7c-4d8e-9f0a-1b2c3d4e5f6a
    source:
      sql:
        driver: postgres
        dsnEnv: HRSYNC_RETRY_TEST_HR_DSN
        query: SELECT 1
`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		says string
	}{
		{"several tenants without --tenant", []string{"--file", "failed/x.csv"}, "add --tenant (one of alpha, beta, hrdb)"},
		{"a SQL tenant", []string{"--tenant", "hrdb", "--file", "failed/x.csv"}, "tenant hrdb reads a SQL query"},
		{"another tenant's file", []string{"--tenant", "beta", "--file", "failed/x.csv"}, `"failed/x.csv" is not in the drop folder's failed/: no such file`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"run", "people", "--config", cfg, "--override-safeguards"}, tt.args...)
			out, code := runConfigCmd(t, args...)
			if code != exitUsage || !strings.Contains(out, tt.says) {
				t.Errorf("exit %d, want %d saying %q; output:\n%s", code, exitUsage, tt.says, out)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "state.db")); err == nil {
		t.Error("a refused --file opened the store")
	}
	if _, err := os.Stat(filepath.Join(dir, "a", "failed", "x.csv")); err != nil {
		t.Errorf("the export left failed/: %v", err)
	}
}
