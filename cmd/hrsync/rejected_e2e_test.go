package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hrsync/internal/metrics/metricstest"
)

// twoBadRows are two rows with two bad fields each: four problems.
const twoBadRows = "X00001,not-an-email,Bad,Row,Sales,Lisbon,not-a-date,1990-01-01,10\n" +
	"X00002,also-not-an-email,Bad,Row,Sales,Lisbon,2020-01-01,1990-13-45,10\n"

// TestE2EOneRejectedCount: an export with two rows rejected for four bad
// fields says 2 wherever it counts rejected rows (the last line, the JSON
// summary's counts, the report, the HTML report, the metric, validate),
// and lists the four problems, each row's on one line.
func TestE2EOneRejectedCount(t *testing.T) {
	t.Parallel()
	gw := metricstest.Start(t)
	e := newEnv(t, configOptions{})
	e.setPushgateway(gw.URL)
	export := append(csvExport(genPeople(0, 3)), []byte(twoBadRows)...)
	outside := filepath.Join(e.dir, "check.csv")
	if err := os.WriteFile(outside, export, 0o600); err != nil {
		t.Fatal(err)
	}
	e.dropFile("staff.csv", export)

	res := e.mustRun(4, "run", "people", "-o", "json")
	if msg := lastLine(t, res).Msg; !strings.Contains(msg, "; 2 rows rejected") {
		t.Errorf("the last line does not count 2 rejected rows: %q", msg)
	}
	var sum struct {
		Cycles []struct {
			Counts map[string]int `json:"counts"`
			Report struct {
				Exports []struct {
					Rejections []json.RawMessage `json:"rejections"`
				} `json:"exports"`
			} `json:"report"`
		} `json:"cycles"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &sum); err != nil || len(sum.Cycles) != 1 || len(sum.Cycles[0].Report.Exports) != 1 {
		t.Fatalf("run -o json: %v\n%s", err, res.stdout)
	}
	if c := sum.Cycles[0]; c.Counts["rejected"] != 2 || len(c.Report.Exports[0].Rejections) != 4 {
		t.Errorf("run -o json: rejected %d with %d problems, want 2 rows and 4 problems", c.Counts["rejected"], len(c.Report.Exports[0].Rejections))
	}
	if r := e.report("processed", "staff.csv"); r.Counts["rejected"] != 2 || len(r.Rejections) != 4 {
		t.Errorf("report: rejected %d with %d problems, want 2 rows and 4 problems", r.Counts["rejected"], len(r.Rejections))
	}
	html, err := os.ReadFile(filepath.Join(e.drop, "processed", "staff.csv.report.html"))
	if err != nil || !strings.Contains(string(html), "Rejected rows (2)") {
		t.Errorf("the HTML report does not count 2 rejected rows (%v)", err)
	}
	if v, ok := gw.Value(t, "hrsync_rows_rejected_total", gwSeries("people")); !ok || v != 2 {
		t.Errorf("hrsync_rows_rejected_total = %v (present: %v), want 2", v, ok)
	}

	val := e.mustRun(4, "validate", outside)
	if !strings.Contains(val.stdout, "5 rows, 3 accepted, 2 rejected\n") {
		t.Errorf("validate does not count 2 rejected rows:\n%s", val.stdout)
	}
	for _, row := range []string{"check.csv:5: email: ", "check.csv:6: email: "} {
		if n := strings.Count(val.stdout, row); n != 1 {
			t.Errorf("validate lists %q %d times, want once (one line per row):\n%s", row, n, val.stdout)
		}
	}
	if !strings.Contains(val.stdout, "; startDate: ") || !strings.Contains(val.stdout, "; birthDate: ") {
		t.Errorf("validate does not list every problem of the rows:\n%s", val.stdout)
	}
}
