package people_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"hrsync/sources/csvsrc"
	"hrsync/sync/people"
)

// TestReportsKeepMaskedValues: the rows' own values go to the rejects CSV
// beside the archived export (which holds them already), and nowhere else:
// the JSON and HTML reports, the run record's rejections and the state
// hold the reasons with the values masked. The run record names the
// reports.
func TestReportsKeepMaskedValues(t *testing.T) {
	e := newEnv(t)
	rows := genPeople(4)
	const badEmail, badDate = "zelda.rejected@@example.test", "1987-13-45"
	rows[1].email = badEmail
	rows[2].start = badDate
	f := e.export("employees.csv", rows)
	rep, err := e.job(nil).RunOnce(t.Context(), feed(f), people.RunFlags{})
	if err != nil {
		t.Fatal(err)
	}
	er := rep.Exports[0]
	if len(er.Rejections) != 2 {
		t.Fatalf("rejections %+v, want 2", er.Rejections)
	}
	raw := [][]byte{[]byte(badEmail), []byte(badDate)}

	t.Run("the rejects CSV holds the rows' own values", func(t *testing.T) {
		csv := f.reports[".rejects.csv"]
		for _, v := range raw {
			if !bytes.Contains(csv, v) {
				t.Errorf("the rejects CSV lacks %s:\n%s", v, csv)
			}
		}
		if !bytes.Contains(csv, []byte(rows[1].id+","+badEmail+","+rows[1].first)) {
			t.Errorf("the rejected row is not whole:\n%s", csv)
		}
	})
	t.Run("the other reports and the run record hold masked values", func(t *testing.T) {
		for _, suffix := range []string{".report.json", ".report.html"} {
			body := f.reports[suffix]
			if len(body) == 0 {
				t.Fatalf("no %s report", suffix)
			}
			for _, v := range raw {
				if bytes.Contains(body, v) {
					t.Errorf("%s holds %s", suffix, v)
				}
			}
		}
		stored, err := e.st.Rejections(t.Context(), er.RunID)
		if err != nil || len(stored) != 2 {
			t.Fatalf("stored rejections %v, %v", stored, err)
		}
		for _, r := range stored {
			for _, v := range raw {
				if strings.Contains(r.Reason, string(v)) {
					t.Errorf("the run record's rejection holds %s: %q", v, r.Reason)
				}
			}
		}
		if !strings.Contains(stored[1].Reason, `"19**-**-**"`) {
			t.Errorf("the date is not quoted masked: %q", stored[1].Reason)
		}
		run := e.lastRun()
		want := []string{"processed/employees.csv.rejects.csv", "processed/employees.csv.report.html", "processed/employees.csv.report.json"}
		if got := slices.Sorted(slices.Values(run.Reports)); !slices.Equal(got, want) {
			t.Errorf("the run record's reports %q, want %q", got, want)
		}
	})
	t.Run("the state's files hold neither value", func(t *testing.T) {
		matches, err := filepath.Glob(filepath.Join(e.dir, "state.db*"))
		if err != nil || len(matches) == 0 {
			t.Fatalf("state files: %v, %v", matches, err)
		}
		for _, m := range matches {
			b, err := os.ReadFile(m)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range raw {
				if bytes.Contains(b, v) {
					t.Errorf("%s holds %s", filepath.Base(m), v)
				}
			}
		}
	})
}

// TestCorrectionsDepartNobody: an export whose header has the rejects
// CSV's line column lists only corrected rows: it creates them, marks
// nobody departed, trips no safeguard, and leaves the last good import's
// size to the full exports.
func TestCorrectionsDepartNobody(t *testing.T) {
	e := newEnv(t)
	rows := genPeople(60)
	if _, err := e.job(nil).RunOnce(t.Context(), feed(e.export("full.csv", rows[:58])), people.RunFlags{}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(e.dir, "fixed.csv")
	body := "\uFEFFhrsync line,hrsync column,hrsync reason,externalId,email,firstName,lastName,department,startDate,addBalance\r\n"
	for _, p := range rows[58:] {
		body += strings.Join([]string{"7", "email", "bad", p.id, p.email, p.first, p.last, p.dept, p.start, p.balance}, ",") + "\r\n"
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(body))
	fixed := &file{File: csvsrc.File{Path: path, Options: csvOptions()}, sha: hex.EncodeToString(sum[:]), size: int64(len(body))}
	rep, err := e.job(nil).RunOnce(t.Context(), feed(fixed), people.RunFlags{})
	if err != nil {
		t.Fatal(err)
	}
	er := rep.Exports[0]
	if er.Outcome != "ok" || er.Counts["new"] != 2 || er.Counts["departed"] != 0 || len(er.Safeguards) != 0 {
		t.Fatalf("corrections: outcome %s counts %v safeguards %v; want ok, 2 new, nobody departed", er.Outcome, er.Counts, er.Safeguards)
	}
	rowsSeen, ok, err := e.st.LastGoodImport(t.Context(), "acme")
	if err != nil || !ok || rowsSeen != 58 {
		t.Errorf("last good import %d, %v, %v; want the full export's 58 rows", rowsSeen, ok, err)
	}
}
