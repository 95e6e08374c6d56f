package sources

import "testing"

// TestReportNames: the reports beside an archived export are neither
// exports waiting (Ignored) nor archived exports (ArchivedAs, CountExports),
// but a rejects CSV dropped again alone is an export of corrections.
func TestReportNames(t *testing.T) {
	for name, want := range map[string]bool{
		"employees.csv": false, "employees.csv.rejects.csv": false,
		"employees.csv.report.json": true, "employees.csv.report.html": true, "EMPLOYEES.CSV.REPORT.HTML": true,
	} {
		if got := Ignored(name); got != want {
			t.Errorf("Ignored(%q) = %v, want %v", name, got, want)
		}
	}
	for n, want := range map[string]bool{
		"employees.csv": true, "employees.20250601T120000Z-1a2b3c4d.csv": true,
		"employees.csv.rejects.csv": false, "employees.csv.report.html": false, "employees.csv.report.json": false,
	} {
		if got := ArchivedAs(n, "employees.csv"); got != want {
			t.Errorf("ArchivedAs(%q, employees.csv) = %v, want %v", n, got, want)
		}
	}
	if !ArchivedAs("employees.csv.rejects.csv", "employees.csv.rejects.csv") {
		t.Errorf("the corrections, archived under their own name, are not found")
	}
	names := []string{
		"a.csv", "a.csv.report.json", "a.csv.report.html", "a.csv.rejects.csv",
		"fixed.rejects.csv", "fixed.rejects.csv.report.json",
	}
	if got := CountExports(names); got != 2 {
		t.Errorf("CountExports(%q) = %d, want 2 (a.csv and the corrections fixed.rejects.csv)", names, got)
	}
}
