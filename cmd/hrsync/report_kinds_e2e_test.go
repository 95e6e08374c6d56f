package main_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"hrsync/internal/reports"
)

// reportKind is one kind of HTML report, where it is and what its page
// must say.
type reportKind struct {
	name string
	page string
	want []string
}

// hrJargon matches what an HR admin's page never shows: a command line,
// a flag, an internal counter (k=v or a counter's name).
var hrJargon = regexp.MustCompile(`hrsync (run|grants|plan)|--[a-z]|\b(calls|unknown|accepted|notApplied|departed \d|created \d|new \d)\b|\w=\d`)

// TestReportKindsInChromium renders each kind of HTML report an HR admin
// gets (ok, attention, safeguard, failed, held, duplicate through the
// binary; approved, whose approval another part of hrsync makes, from
// its summary) in headless Chromium: a screenshot of each (in the folder
// HRSYNC_TEST_SCREENSHOTS names, or the test's), and its visible text
// checked: the right words, and no command line, path or internal counter.
func TestReportKindsInChromium(t *testing.T) {
	e := newEnv(t, configOptions{})
	staff := genPeople(0, 20)
	var kinds []reportKind
	page := func(folder, name string) string { return filepath.Join(e.drop, folder, name+reports.HTMLSuffix) }

	e.dropFile("week1.csv", csvExport(staff))
	e.mustRun(0, "run", "people")
	kinds = append(kinds, reportKind{"ok", page("processed", "week1.csv"), []string{
		"ok : 20 people added (500.00 granted).", "Nothing to do.", "Added (20)", "P00000 p***@e***.test · 25.00", "P00019"}})

	e.dropFile("week1-again.csv", csvExport(staff))
	e.mustRun(0, "run", "people")
	kinds = append(kinds, reportKind{"duplicate", page("processed", "week1-again.csv"), []string{
		"ok : This export was processed before (the same content): nothing was changed.", "Nothing to do."}})

	week2 := slices.Clone(staff)
	week2[3].dept = "Legal"
	week2 = append(week2, genPeople(100, 103)...)
	week2[len(week2)-1].email = "zelda@@example.test"
	e.dropFile("week2.csv", csvExport(week2))
	e.mustRun(4, "run", "people")
	kinds = append(kinds, reportKind{"attention", page("processed", "week2.csv"), []string{
		"attention : 2 people added (45.00 granted), 1 person changed, 19 people already there, 1 row rejected.",
		"Next step: Fix the rejected rows in week2.csv.rejects.csv (beside this report) and drop that file into the drop folder again",
		"Added (2)", "Changed (1)", "P00003", "Already there (19)", "Rejected rows (1)", "Line Column Reason", "email"}})

	e.dropFile("week3.csv", csvExport(week2[:8]))
	e.mustRun(3, "run", "people")
	kinds = append(kinds, reportKind{"safeguard", page("failed", "week3.csv"), []string{
		"safeguard : A safeguard stopped this export before anything was changed: nobody was added, changed or marked as left.",
		"Next step: Check the export against the HR system", "Safeguard stops", "would be marked departed",
		"Would have left (14)", "nobody was marked as left", "Already there (8)"}})

	e.dropFile("broken.csv", []byte("externalId,firstName\nP09999,Ada\n"))
	e.mustRun(1, "run", "people")
	kinds = append(kinds, reportKind{"failed", page("failed", "broken.csv"), []string{
		"failed : This export could not be used, so nothing was changed:", "email",
		"Next step: Fix the export and drop it into the drop folder again; this one is kept in failed/"}})

	// The platform applies the call but answers 500, every time: the
	// grants' outcome is unknown, so they wait for confirmation.
	e.emu.addFault(t, fault{Operation: "createPeople", When: "after", Status: 500})
	e.dropFile("week4.csv", csvExport(append(slices.Clone(week2[:22]), genPeople(200, 202)...)))
	e.mustRun(4, "run", "people")
	e.emu.clearFaults(t)
	kinds = append(kinds, reportKind{"held", page("processed", "week4.csv"), []string{
		"attention : 22 people already there, 2 people waiting for confirmation.", "Waiting for confirmation (2)",
		"they may already exist on the platform", "P00200", "P00201",
		"Nothing to do for the people waiting for confirmation: your hrsync operator confirms their grant with the platform"}})

	kinds = append(kinds, reportKind{"approved", approvedPage(t), []string{
		"ok : 5 people added (125.00 granted), 45 people left.",
		"A safeguard had stopped this export; it was approved by hr-anna and taken on 2026-11-25 07:30 UTC, so it ran once past the safeguards.",
		"Safeguard stops", "Left (45)", "Added (5)"}})

	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			text := visibleText(t, k.page)
			for _, want := range k.want {
				if !strings.Contains(text, want) {
					t.Errorf("the %s report lacks %q:\n%s", k.name, want, text)
				}
			}
			checkPlainWords(t, e, k.name, text)
			screenshot(t, k.page, "report-"+k.name+".png")
		})
	}
}

// checkPlainWords fails when the text of a page holds a command line, a
// path of the machine or an internal counter, or an empty section.
func checkPlainWords(t *testing.T, e *env, kind, text string) {
	t.Helper()
	if m := hrJargon.FindString(text); m != "" {
		t.Errorf("the %s report shows %q:\n%s", kind, m, text)
	}
	for _, bad := range []string{e.dir, e.drop, e.config, "(0)", "Counts", "grants list", "hrsync.yaml"} {
		if bad != "" && strings.Contains(text, bad) {
			t.Errorf("the %s report shows %q:\n%s", kind, bad, text)
		}
	}
}

// approvedPage writes the report of an export an HR admin approved after
// a safeguard stop, rendered from its summary (the approval itself is
// made elsewhere), and returns its path.
func approvedPage(t *testing.T) string {
	t.Helper()
	at := time.Date(2026, 11, 25, 7, 30, 0, 0, time.UTC)
	p := &reports.People{Granted: 125}
	for _, n := range genPeople(300, 305) {
		p.Added = append(p.Added, reports.Person{ExternalID: n.id, Email: "p***@e***.test", Granted: 25})
	}
	for _, n := range genPeople(50, 95) {
		p.Left = append(p.Left, reports.Person{ExternalID: n.id})
	}
	body, err := reports.HTML(reports.Summary{Tenant: tenantName, Source: "staff march.csv", RunID: "0b5a7f4e-0000-4000-8000-000000000001",
		Outcome: "ok", People: p, Stops: []string{"45 of 95 active people (47.4%) would be marked departed; the limit is 20.0%"},
		Approval:  &reports.Approval{At: at, By: "hr-anna", StoppedRun: "0b5a7f4e-0000-4000-8000-000000000000"},
		Generated: at, JSONFile: "staff march.csv" + reports.JSONSuffix})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "approved"+reports.HTMLSuffix)
	if err := os.WriteFile(path, body, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
