package reports

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// sampleSummary is a safeguard stop with rejected rows and held grants.
func sampleSummary() Summary {
	p := &People{AlreadyThereCount: 67, Added: ListOf(Person{ExternalID: "P00101", Email: "j***@e***.test", Granted: 25})}
	for i := range 30 {
		p.Left = append(p.Left, Person{ExternalID: fmt.Sprintf("P%05d", i+1)})
	}
	return Summary{
		Tenant: "acme", Source: "employees.csv", RunID: "6f1c0c8e-0000-4000-8000-000000000001", Outcome: "safeguard",
		Next:   "check the export against the HR system",
		People: p,
		Stops:  []string{"30 of 100 active people (30.0%) would be marked departed; the limit is 20.0%"},
		Rejections: []Rejection{
			{Line: 4, Column: "email", Reason: `invalid email "j***@e***.test": no domain`},
			{Line: 9, Column: "birthDate", Reason: `date "19**-**-**" does not match YYYY-MM-DD`},
		},
		Held:        []string{"P00017", "P00042"},
		RejectsFile: "employees.csv.rejects.csv",
		JSONFile:    "employees.csv.report.json",
		Generated:   time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC),
	}
}

// render renders s or fails the test.
func render(t *testing.T, s Summary) string {
	t.Helper()
	body, err := HTML(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// jargon are words of the run record and the logs that an HR admin's
// report never shows.
var jargon = []string{"hrsync run", "--", "Counts", "calls", "unknown", "accepted", "departed 30", "grants list", "createPeople"}

func TestHTML(t *testing.T) {
	html := render(t, sampleSummary())
	for _, want := range []string{
		"<title>hrsync report: employees.csv</title>",
		`<span class="label">safeguard</span>`,
		"A safeguard stopped this export before anything was changed",
		"Next step:</strong> check the export against the HR system",
		"Would have left (30)", "nobody was marked as left",
		"Would have been added (1)", "<code>P00101</code>",
		"Already there (67)",
		"Rejected rows (2)",
		"Fix them in employees.csv.rejects.csv",
		"Waiting for confirmation (2)", "they may already exist on the platform", "<code>P00042</code>",
		"2026-11-24 06:00 UTC",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	for _, bad := range append(jargon, "<h2 id=\"left\">Left") {
		if strings.Contains(html, bad) {
			t.Errorf("the report says %q", bad)
		}
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
		if strings.Contains(render(t, s), "<img") {
			t.Error("a file name reached the page as markup")
		}
	})
}

// TestHTMLPeople: a report names the people of each kind, the first
// MaxListed of a list and then how many more, leaves out the kinds with
// nobody, and words held grants as waiting for confirmation.
func TestHTMLPeople(t *testing.T) {
	s := Summary{Tenant: "acme", Source: "employees.csv", Outcome: "ok", JSONFile: "employees.csv.report.json",
		People: &People{Granted: 25 * (MaxListed + 2), AlreadyThereCount: 3, AlreadyThere: []Person{{ExternalID: "P09001"}}}}
	s.People.Added = ListFunc(MaxListed+2, func(yield func(Person) bool) {
		for i := range MaxListed + 2 {
			if !yield(Person{ExternalID: fmt.Sprintf("P%05d", i), Email: "p***@e***.test", Granted: 25}) {
				return
			}
		}
	})
	html := render(t, s)
	for _, want := range []string{
		"502 people added (12550.00 granted), 3 people already there.",
		"Added (502)", "<code>P00499</code> <span class=\"muted\">p***@e***.test</span> · 25.00",
		"and 2 more: every one is in the JSON report (employees.csv.report.json) beside this report.",
		"Already there (3)", "Nothing to do.",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	for _, bad := range append(jargon, "<code>P00500</code>", "Rejected rows", "Waiting for confirmation", "Left", "Changed") {
		if strings.Contains(html, bad) {
			t.Errorf("the report says %q", bad)
		}
	}

	t.Run("held grants", func(t *testing.T) {
		html := render(t, Summary{Outcome: "attention", People: &People{}, Held: []string{"P00001", "P00002"}})
		if !strings.Contains(html, "2 people waiting for confirmation.") || strings.Contains(html, "0 people") {
			t.Errorf("the headline of a held run:\n%s", html)
		}
	})
	t.Run("duplicate", func(t *testing.T) {
		html := render(t, Summary{Outcome: "ok", Duplicate: true})
		if !strings.Contains(html, "processed before (the same content): nothing was changed") || strings.Contains(html, "<h2") {
			t.Errorf("a duplicate's report:\n%s", html)
		}
		// Content processed before whose people still waiting were sent.
		html = render(t, Summary{Outcome: "ok", Duplicate: true, People: &People{Added: ListOf(Person{ExternalID: "P1", Granted: 25}), Granted: 25}})
		if !strings.Contains(html, "1 person added (25.00 granted).") || !strings.Contains(html, "Added (1)") {
			t.Errorf("a duplicate that sent the people still waiting:\n%s", html)
		}
	})
	t.Run("approved and archived late", func(t *testing.T) {
		at := time.Date(2026, 11, 25, 7, 30, 0, 0, time.UTC)
		html := render(t, Summary{Outcome: "ok", People: &People{Left: []Person{{ExternalID: "P1"}}},
			Approval: &Approval{At: at, By: "hr-anna"}, Late: &Late{SentAt: at, Cause: "the connection to the drop folder was lost"}})
		for _, want := range []string{
			"A safeguard had stopped this export; it was approved by hr-anna and taken on 2026-11-25 07:30 UTC",
			"Archived late: this export was sent to the platform on 2026-11-25 07:30 UTC, but it could not be archived then (the connection to the drop folder was lost)",
			"Left (1)",
		} {
			if !strings.Contains(html, want) {
				t.Errorf("the report lacks %q", want)
			}
		}
	})
}

// TestHTMLCountsRejectedRows: two rows with four problems are two rejected
// rows in the headline and the list's title, each problem on a line.
func TestHTMLCountsRejectedRows(t *testing.T) {
	s := sampleSummary()
	s.Outcome = "attention"
	s.Rejections = []Rejection{
		{Line: 4, Column: "email", Reason: "no domain"}, {Line: 4, Column: "startDate", Reason: "not a date"},
		{Line: 9, Column: "email", Reason: "no domain"}, {Line: 9, Column: "birthDate", Reason: "not a date"},
	}
	html := render(t, s)
	for _, want := range []string{"2 rows rejected", "Rejected rows (2)", "several problems"} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if n := strings.Count(html, `<td class="num">`); n < 4 {
		t.Errorf("%d problem lines, want the 4 problems listed", n)
	}
	if strings.Contains(html, "4 rows") || strings.Contains(html, "(4)") {
		t.Error("the report counts the problems as rows")
	}
}
