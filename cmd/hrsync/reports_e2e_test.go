package main_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// rejectsExport is an export of five people where the second has a broken
// e-mail address and the fourth an impossible birth date: three are
// created, two rejected.
func rejectsExport() (all []person, bad map[string]person) {
	all = genPeople(1, 6)
	all[1].email = "zelda.rejected@@example.test"
	all[3].birth = "1987-13-45"
	return all, map[string]person{all[1].id: all[1], all[3].id: all[3]}
}

// TestRejectsReportRoundTrip: a run that rejects rows writes, beside the
// archived export, the JSON report, a one-page HTML summary that Chromium
// renders with what happened and what to do (and no e-mail address or
// birth date), and a rejects CSV that opens in Excel; that CSV, its bad
// cells fixed and dropped again, creates exactly the fixed people and
// marks nobody departed.
func TestRejectsReportRoundTrip(t *testing.T) {
	e := newEnv(t, configOptions{})
	all, bad := rejectsExport()
	e.dropFile("employees.csv", csvExport(all))
	e.mustRun(4, "run", "people")

	processed := filepath.Join(e.drop, "processed")
	for _, name := range []string{"employees.csv.report.json", "employees.csv.report.html", "employees.csv.rejects.csv"} {
		fi, err := os.Stat(filepath.Join(processed, name))
		if err != nil {
			t.Fatalf("%s not beside the archived export: %v (processed/: %v)", name, err, e.archived("processed"))
		}
		if fi.Mode().Perm() != 0o640 {
			t.Errorf("%s mode %v, want 0640 (reports.mode)", name, fi.Mode().Perm())
		}
	}
	if got := len(e.emu.people(t, e.company)); got != 3 {
		t.Fatalf("%d people at the platform after the first run, want 3", got)
	}

	t.Run("the run record links the reports", func(t *testing.T) {
		checkStatusReports(t, e.in(t), []string{"employees.csv.rejects.csv", "employees.csv.report.html", "employees.csv.report.json"})
	})

	t.Run("the HTML report reads well in Chromium", func(t *testing.T) {
		page := filepath.Join(processed, "employees.csv.report.html")
		text := visibleText(t, page)
		for _, want := range []string{
			"employees.csv", "Tenant acme", "attention", "3 people added (85.00 granted), 2 rows rejected.",
			"Next step: Fix the rejected rows in employees.csv.rejects.csv (beside this report) and drop that file into the drop folder again",
			"Added (3)", "P00001", "p***@e***.test · 25.00",
			"Rejected rows (2)", "Fix them in employees.csv.rejects.csv",
			"3 email not a valid e-mail address", "5 birthDate date \"19**-**-**\" does not match",
			"Line Column Reason", "3 email", "5 birthDate",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("the rendered report lacks %q:\n%s", want, text)
			}
		}
		// Empty sections are left out, and no counter is shown.
		for _, bad := range []string{"Waiting for confirmation", "Counts", "calls", "accepted", "Left (", "Changed ("} {
			if strings.Contains(text, bad) {
				t.Errorf("the rendered report shows %q:\n%s", bad, text)
			}
		}
		pageBytes, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range all {
			for _, secret := range []string{p.email, p.birth} {
				if strings.Contains(text, secret) || bytes.Contains(pageBytes, []byte(secret)) {
					t.Errorf("the HTML report shows %s of %s", secret, p.id)
				}
			}
		}
		screenshot(t, page, "rejects-report.png")
	})

	// The rejects CSV as Excel opens it: BOM, the line, column and reason,
	// then the export's own columns and the rows' own values.
	raw, err := os.ReadFile(filepath.Join(processed, "employees.csv.rejects.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(raw, []byte("\xEF\xBB\xBF")) {
		t.Fatal("the rejects CSV has no UTF-8 byte order mark")
	}
	recs, err := csv.NewReader(bytes.NewReader(raw[3:])).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	wantHead := []string{"hrsync line", "hrsync column", "hrsync reason", "externalId", "email", "firstName", "lastName",
		"department", "location", "startDate", "birthDate", "addBalance"}
	if len(recs) != 3 || !slices.Equal(recs[0], wantHead) {
		t.Fatalf("rejects CSV:\n%q\nwant the header %q and two rows", recs, wantHead)
	}
	for _, r := range recs[1:] {
		p, ok := bad[r[3]]
		if !ok {
			t.Fatalf("the rejects CSV lists %s, which was not rejected", r[3])
		}
		if want := []string{p.id, p.email, p.first, p.last, p.dept, p.loc, p.start, p.birth, p.balance}; !slices.Equal(r[3:], want) {
			t.Errorf("row of %s = %q, want its own values %q", p.id, r[3:], want)
		}
	}

	// The HR admin fixes the bad cells in Excel and saves it as CSV UTF-8
	// (the byte order mark kept), then drops it again.
	fixed := map[string]person{}
	for _, r := range recs[1:] {
		p := bad[r[3]]
		if strings.Contains(r[1], "email") {
			p.email = "zelda.fixed@example.test"
			r[4] = p.email
		}
		if strings.Contains(r[1], "birthDate") {
			p.birth = "1987-12-15"
			r[10] = p.birth
		}
		fixed[p.id] = p
	}
	var buf bytes.Buffer
	buf.WriteString("\uFEFF")
	w := csv.NewWriter(&buf)
	w.UseCRLF = true
	if err := w.WriteAll(recs); err != nil {
		t.Fatal(err)
	}
	e.dropFile("employees.csv.rejects.csv", buf.Bytes())
	e.mustRun(0, "run", "people")

	got := e.emu.people(t, e.company)
	if len(got) != 5 {
		t.Fatalf("%d people at the platform, want the 3 first and the 2 fixed", len(got))
	}
	for _, ep := range got {
		p, ok := fixed[ep.ExternalID]
		if !ok {
			continue
		}
		if ep.Email != p.email || ep.Balance != p.wantBalance() {
			t.Errorf("%s at the platform: email %q balance %v, want the fixed row's %q %v", p.id, ep.Email, ep.Balance, p.email, p.wantBalance())
		}
		delete(fixed, ep.ExternalID)
	}
	if len(fixed) > 0 {
		t.Errorf("fixed people not created: %v", fixed)
	}
	// Saved under its own name, it is archived beside the report it came
	// from, with a time suffix: nothing is overwritten.
	var again string
	for _, n := range e.archived("processed") {
		if strings.HasPrefix(n, "employees.csv.rejects.") && strings.HasSuffix(n, ".csv") && n != "employees.csv.rejects.csv" {
			again = n
		}
	}
	if again == "" {
		t.Fatalf("the corrections are not archived in processed/: %v", e.archived("processed"))
	}
	r := e.report("processed", again)
	if r.Outcome != "ok" || r.Counts["new"] != 2 || r.Counts["departed"] != 0 || r.Counts["rejected"] != 0 {
		t.Errorf("the corrections run: outcome %s counts %v; want ok, 2 new, nobody departed", r.Outcome, r.Counts)
	}
	t.Run("status counts the exports, not their reports", func(t *testing.T) {
		var st struct {
			Tenants []struct {
				Files struct{ Processed, Waiting int }
			}
		}
		out := e.mustRun(0, "status", "-o", "json")
		if err := json.Unmarshal([]byte(out.stdout), &st); err != nil {
			t.Fatal(err)
		}
		if len(st.Tenants) != 1 || st.Tenants[0].Files.Processed != 2 || st.Tenants[0].Files.Waiting != 0 {
			t.Errorf("status files %+v, want 2 processed (the export and the corrections)", st.Tenants)
		}
	})
	t.Run("the next full export still departs people", func(t *testing.T) {
		// The corrections did not replace the last good import's size:
		// a full export of all five marks nobody departed and trips no
		// truncation safeguard.
		all, _ := rejectsExport()
		all[1].email, all[3].birth = "zelda.fixed@example.test", "1987-12-15"
		e.dropFile("employees-2.csv", csvExport(all[:4]))
		e.mustRun(0, "run", "people")
		if r := e.report("processed", "employees-2.csv"); r.Counts["departed"] != 1 {
			t.Errorf("a full export without one person: counts %v, want 1 departed", r.Counts)
		}
	})
}
