package reports

import (
	"strings"
	"testing"
	"time"
)

// sampleSummary is a safeguard stop with rejected rows and held grants.
func sampleSummary() Summary {
	return Summary{
		Tenant: "acme", Source: "employees.csv", RunID: "6f1c0c8e-0000-4000-8000-000000000001", Outcome: "safeguard",
		Cause:    "a safeguard stopped the run before any call: 30 of 100 active people (30.0%) would be marked departed; the limit is 20.0%",
		Next:     "once you have checked the export, run it once past the safeguards: hrsync run people --config hrsync.yaml --tenant acme --override-safeguards --file failed/employees.csv",
		Override: "hrsync run people --config hrsync.yaml --tenant acme --override-safeguards --file failed/employees.csv",
		Counts:   map[string]int{"new": 3, "rejected": 2, "departed": 30, "unchanged": 67, "created": 0},
		Stops:    []string{"30 of 100 active people (30.0%) would be marked departed; the limit is 20.0%"},
		Rejections: []Rejection{
			{Line: 4, Column: "email", Reason: `invalid email "j***@e***.test": no domain`},
			{Line: 9, Column: "birthDate", Reason: `date "19**-**-**" does not match YYYY-MM-DD`},
		},
		Held:        []string{"P00017", "P00042"},
		RejectsFile: "employees.csv.rejects.csv",
		Generated:   time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC),
	}
}

func TestHTML(t *testing.T) {
	body, err := HTML(sampleSummary())
	if err != nil {
		t.Fatal(err)
	}
	html := string(body)
	for _, want := range []string{
		"<title>hrsync report: employees.csv</title>",
		`<span class="label">safeguard</span>`,
		"Next step:",
		"--override-safeguards --file failed/employees.csv",
		"<td>departed</td><td class=\"num\">30</td>",
		"Rejected rows (2)",
		"<code>employees.csv.rejects.csv</code>",
		"<code>P00042</code>",
		"2026-11-24 06:00 UTC",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(html, "<td>created</td>") {
		t.Error("a count of zero is shown")
	}
	t.Run("no external asset, no script", func(t *testing.T) {
		for _, bad := range []string{"<script", "<link", "src=", "href=", "@import", "url("} {
			if strings.Contains(html, bad) {
				t.Errorf("the report holds %q", bad)
			}
		}
	})
	t.Run("texts are escaped", func(t *testing.T) {
		s := sampleSummary()
		s.Source = `<img src=x onerror=alert(1)>.csv`
		body, err := HTML(s)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(body), "<img") {
			t.Error("a file name reached the page as markup")
		}
	})
}
