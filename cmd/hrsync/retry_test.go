package main

import (
	"os/exec"
	"strings"
	"testing"

	"hrsync/store"
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

func TestSafeguardStops(t *testing.T) {
	var none *safeguardStops
	none.add(&people.Report{Tenant: "acme", Exports: []people.ExportReport{{Outcome: store.OutcomeSafeguard}}})
	if got := none.nextStep(); got != "rerun with --override-safeguards" {
		t.Errorf("nil stops: %q", got)
	}
	s := &safeguardStops{configPath: "c.yaml"}
	s.add(&people.Report{Tenant: "acme", Exports: []people.ExportReport{
		{Outcome: store.OutcomeOK, ArchivedAs: "processed/a.csv"},
		{Outcome: store.OutcomeSafeguard, ArchivedAs: "failed/b.csv"},
	}})
	want := "once you have checked it, run it once past the safeguards: hrsync run people --config c.yaml --tenant acme --override-safeguards --file failed/b.csv"
	if got := s.nextStep(); got != want {
		t.Errorf("one stop: %q\nwant %q", got, want)
	}
	s.add(&people.Report{Tenant: "beta", Exports: []people.ExportReport{{Outcome: store.OutcomeSafeguard, ArchivedAs: "failed/c.csv"}}})
	if got := s.nextStep(); !strings.Contains(got, "--file failed/b.csv ; hrsync run people --config c.yaml --tenant beta --override-safeguards --file failed/c.csv") {
		t.Errorf("two stops: %q", got)
	}
}
