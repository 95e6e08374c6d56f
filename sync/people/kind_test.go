package people

import (
	"encoding/json"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"hrsync/model"
	"hrsync/sync/sender"
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
			if got := OverrideCommand(tt.config, tt.tenant, tt.archived); got != tt.want {
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
		quoted = append(quoted, ShellQuote(w))
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
	rep := &Report{Tenant: "acme", Exports: []ExportReport{
		{Outcome: model.OutcomeOK, ArchivedAs: "processed/a.csv"},
		{Outcome: model.OutcomeSafeguard, ArchivedAs: "failed/b c.csv"},
	}}
	rep.setNextSteps("c.yaml")
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

// TestSetSafeguardNextStepsDirectory: a SCIM tenant's stopped snapshot has
// no file to name: its next step, the run's last line, says to check the
// identity provider's changes and run the override for the tenant.
func TestSetSafeguardNextStepsDirectory(t *testing.T) {
	rep := &Report{Tenant: "acme", Exports: []ExportReport{{Source: "scim:acme@42", Outcome: model.OutcomeSafeguard, Directory: true}}}
	rep.setNextSteps("c.yaml")
	want := "once you have checked the changes the identity provider pushed, apply the directory once past the safeguards: " +
		"hrsync run people --config c.yaml --tenant acme --override-safeguards"
	if _, _, next := rep.Summary(); next != want {
		t.Errorf("the run's next step %q\nwant %q", next, want)
	}
}

// TestResultJSON checks that the report's "result" keeps its shape now
// that its counts are the sender's: the new people confirmed are
// "created", the lists are there, and nothing is named "applied".
func TestResultJSON(t *testing.T) {
	r := Result{RunID: "r1", Result: sender.Result{Applied: 3, Granted: 75, Calls: 1, Errors: []string{}}, Saved: 2, Departed: 1}
	b, err := json.Marshal(&ExportReport{Result: &r})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Result map[string]any `json:"result"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"runId": "r1", "created": 3.0, "granted": 75.0, "notApplied": 0.0, "unknown": 0.0, "resent": 0.0,
		"calls": 1.0, "skipped": 0.0, "refused": 0.0, "saved": 2.0, "departed": 1.0, "errors": []any{}}
	if !reflect.DeepEqual(got.Result, want) {
		t.Errorf("result %v\nwant   %v", got.Result, want)
	}
}
