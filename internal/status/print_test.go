package status

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"hrsync/internal/textfmt"
)

// TestPrintFitsWidth checks that every line of the text status, details
// included, fits textfmt.Width with long tenant names, causes, rules,
// reports and source problems, and that what is cut in the tables is
// whole in the details.
func TestPrintFitsWidth(t *testing.T) {
	now := time.Date(2026, 11, 25, 22, 0, 0, 0, time.UTC)
	long := "acme-corporation-international-holdings-europe-and-middle-east-division"
	cause := "read export export.csv: export.csv: missing column(s) " + strings.Repeat(`"department", `, 12) + `"addBalance"`
	done := now.Add(-90 * time.Minute)
	last := "2026-11-24"
	rep := &Report{
		Runs: []Run{
			{Job: "people", Tenant: long, RunID: "8ad497b9-900b-41ee-9cbd-8c48d9c00379", Outcome: "failed",
				StartedAt: now.Add(-3 * time.Minute), Error: cause,
				Reports: []string{"failed/" + strings.Repeat("employees-", 12) + ".csv.report.html"}},
			{Job: "personalize", Tenant: long, Outcome: "ok", StartedAt: now.Add(-100 * time.Minute), FinishedAt: &done,
				Counts: map[string]int{"personalized": 123456, "plannedNew": 99999, "retry": 0, "gaveUp": 7, "unusable": 1}},
		},
		Tenants: []Tenant{
			{Name: long, SourceProblems: []string{"source.sql.dsnEnv: environment variable " +
				strings.Repeat("HR_DATABASE_", 8) + "DSN is not set (line 23)"}, GrantRules: []Rule{
				{Rule: strings.Repeat("birthday-of-everyone-", 4), LastDay: &last}}},
			{Name: "globex", Files: &Files{Waiting: 1234567, Processed: 7654321, Failed: 99999},
				Personalizations: map[string]map[string]int{"20000000-0000-4000-8000-000000000001": {"pending": 3, "done": 4}}},
		},
	}
	var b strings.Builder
	if err := Print(&b, rep, PrintOptions{Now: now, Details: true}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for i, line := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(line); n > textfmt.Width {
			t.Errorf("line %d is %d columns wide: %q", i+1, n, line)
		}
	}
	for _, want := range []string{"3m", "failed", "1h", "PROBLEM", "1234567", "LAST DAY PROCESSED"} {
		if !strings.Contains(out, want) {
			t.Errorf("the status does not show %q:\n%s", want, out)
		}
	}
	flat := strings.Join(strings.Fields(out), "")
	for _, whole := range []string{cause, long, rep.Tenants[0].SourceProblems[0], rep.Runs[0].RunID} {
		if !strings.Contains(flat, strings.Join(strings.Fields(whole), "")) {
			t.Errorf("the details lack %q:\n%s", whole, out)
		}
	}
}

// TestAge checks the ages of the runs in their largest unit.
func TestAge(t *testing.T) {
	now := time.Date(2026, 11, 25, 22, 0, 0, 0, time.UTC)
	for d, want := range map[time.Duration]string{0: "0s", 59 * time.Second: "59s", 12 * time.Minute: "12m",
		5 * time.Hour: "5h", 47 * time.Hour: "47h", 72 * time.Hour: "3d", -time.Minute: "0s"} {
		if got := age(now, now.Add(-d)); got != want {
			t.Errorf("age of %v = %q, want %q", d, got, want)
		}
	}
}
