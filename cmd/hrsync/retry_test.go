package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"hrsync/model"
	"hrsync/sync/people"
)

func TestSafeguardNextStep(t *testing.T) {
	tests := []struct {
		name, config, tenant, archived, want string
	}{
		{"plain names", "hrsync.yaml", "acme", "failed/employees.csv",
			"hrsync run people --config hrsync.yaml --tenant acme --override-safeguards --file failed/employees.csv"},
		{"a name with a space", "/etc/hrsync/hrsync.yaml", "acme", "failed/staff march.csv",
			"hrsync run people --config /etc/hrsync/hrsync.yaml --tenant acme --override-safeguards --file 'failed/staff march.csv'"},
		{"a quote and a dollar", "my conf.yaml", "acme", "failed/o'brien $x.csv",
			`hrsync run people --config 'my conf.yaml' --tenant acme --override-safeguards --file 'failed/o'\''brien $x.csv'`},
		{"a SQL tenant has no file", "hrsync.yaml", "hr-db", "",
			"hrsync run people --config hrsync.yaml --tenant hr-db --override-safeguards"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := safeguardNextStep(tt.config, tt.tenant, tt.archived); got != tt.want {
				t.Errorf("safeguardNextStep = %s\nwant                %s", got, tt.want)
			}
		})
	}
}

// TestShellQuoteRoundTrip checks that a POSIX shell reads each quoted word
// back as the string it quotes.
func TestShellQuoteRoundTrip(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatalf("this test needs a POSIX shell: %v", err)
	}
	words := []string{"plain.csv", "failed/staff march.csv", "it's", "$HOME", "a\"b", "semi;colon", "back\\slash", "*.csv", "", "tab\there", "ünïcode.csv"}
	quoted := make([]string, 0, len(words))
	for _, w := range words {
		quoted = append(quoted, shellQuote(w))
	}
	out, err := exec.CommandContext(t.Context(), sh, "-c", `for w in `+strings.Join(quoted, " ")+`; do printf '%s\n' "[$w]"; done`).Output()
	if err != nil {
		t.Fatalf("sh: %v", err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(got) != len(words) {
		t.Fatalf("the shell read %d words, want %d: %q", len(got), len(words), got)
	}
	for i, w := range words {
		if got[i] != "["+w+"]" {
			t.Errorf("%q quoted as %s reads back as %s", w, quoted[i], got[i])
		}
	}
}

func TestSetSafeguardNextSteps(t *testing.T) {
	rep := &people.Report{Tenant: "acme", Exports: []people.ExportReport{
		{Outcome: model.OutcomeOK, ArchivedAs: "processed/a.csv"},
		{Outcome: model.OutcomeSafeguard, ArchivedAs: "failed/b c.csv"},
	}}
	setSafeguardNextSteps(rep, "c.yaml")
	if rep.Exports[0].Next != "" {
		t.Errorf("an ok export got a next step: %q", rep.Exports[0].Next)
	}
	want := "once you have checked the export, run it once past the safeguards: " +
		"hrsync run people --config c.yaml --tenant acme --override-safeguards --file 'failed/b c.csv'"
	if got := rep.Exports[1].Next; got != want {
		t.Errorf("next step %q\nwant %q", got, want)
	}
	if _, _, next := rep.Summary(); next != want {
		t.Errorf("the run's next step %q, want the stopped export's", next)
	}
}

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
