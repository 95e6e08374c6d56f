package main_test

// Messy exports end to end (issue 11, items 2, 3 and 7): a stray quote, a
// 10 MB field, a CR-only file and an invisible character in an externalId,
// through the real binary against the emulator.

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkNoPersonalData fails when text holds an e-mail address or a birth
// date of the people of the export.
func checkNoPersonalData(t *testing.T, what, text string, people []person) {
	t.Helper()
	for _, p := range people {
		if strings.Contains(text, p.email) || strings.Contains(text, p.birth) {
			t.Errorf("%s holds the e-mail or birth date of %s", what, p.id)
			return
		}
	}
}

// TestE2EStrayQuoteRefusesTheExport: after a 40-person import, a 300-row
// export with a stray quote on its first data row is a file error: no
// call, nobody departed, the export in failed/ with its report, and no
// message copying the rows.
func TestE2EStrayQuoteRefusesTheExport(t *testing.T) {
	t.Parallel()
	e := newEnv(t, configOptions{})
	e.dropFile("first.csv", csvExport(genPeople(0, 40)))
	e.mustRun(0, "run", "people")
	e.emu.clearRequests(t)

	everyone := genPeople(0, 300)
	export := csvExport(everyone)
	p := everyone[0]
	export = bytes.Replace(export, []byte(p.email+","+p.first), []byte(p.email+",\""+p.first), 1)
	e.dropFile("employees.csv", export)
	res := e.mustRun(1, "run", "people")
	last := lastLine(t, res)
	if want := "employees.csv:2: a quoted field opened on line 2 runs over 20 lines"; !strings.Contains(last.Msg, want) || last.ExitCode != 1 {
		t.Errorf("last line %+v, want exit 1 and %q", last, want)
	}
	if got := countOp(e.emu.requests(t), "createPeople"); got != 0 {
		t.Errorf("%d createPeople calls, want 0", got)
	}
	if n := e.count("SELECT COUNT(*) FROM people WHERE departed_at IS NOT NULL"); n != 0 {
		t.Errorf("%d people departed, want 0", n)
	}
	if outcome, errText := e.lastRun(); outcome != "failed" || !strings.Contains(errText, "line 2") {
		t.Errorf("run record: %q %q, want failed naming line 2", outcome, errText)
	}
	r := e.report("failed", "employees.csv")
	if r.Outcome != "failed" || !strings.Contains(r.Error, "stray quote") {
		t.Errorf("report: outcome %q, error %q", r.Outcome, r.Error)
	}
	checkNoPersonalData(t, "stderr", res.stderr, everyone)
	b, err := os.ReadFile(filepath.Join(e.drop, "failed", "employees.csv.report.json"))
	if err != nil {
		t.Fatal(err)
	}
	checkNoPersonalData(t, "the report", string(b), everyone)
}

// TestE2ETenMegabyteField: a 10 MB value rejects its row only, by its line
// and column, with messages that stay short, and the other people are
// created; a value over maxValueLength rejects its row only.
func TestE2ETenMegabyteField(t *testing.T) {
	t.Parallel()
	e := newEnv(t, configOptions{})
	people := genPeople(0, 5)
	people[2].dept = strings.Repeat("D", 10<<20)
	e.dropFile("huge.csv", csvExport(people))
	res := e.mustRun(4, "run", "people")
	if len(res.stderr) > 16<<10 || len(res.stdout) > 16<<10 {
		t.Errorf("output of %d+%d bytes for a 10 MB field", len(res.stderr), len(res.stdout))
	}
	if _, errText := e.lastRun(); len(errText) > 1000 {
		t.Errorf("run record error of %d bytes", len(errText))
	}
	if n := len(e.emu.people(t, e.company)); n != 4 {
		t.Errorf("%d people at the emulator, want the 4 others", n)
	}
	if r := e.report("processed", "huge.csv"); r.Outcome != "attention" || len(r.Rejections) != 1 ||
		r.Rejections[0].Line != 4 || r.Rejections[0].Field != "department" ||
		r.Rejections[0].Reason != "value is longer than 1000 characters (maxValueLength)" {
		t.Errorf("report %s, rejections %+v", r.Outcome, r.Rejections)
	}

	people[2].dept = strings.Repeat("D", 1500)
	e.dropFile("long.csv", csvExport(people))
	e.mustRun(4, "run", "people")
	r := e.report("processed", "long.csv")
	if len(r.Rejections) != 1 || r.Rejections[0].Line != 4 || r.Rejections[0].Field != "department" ||
		r.Rejections[0].Reason != "value is longer than 1000 characters (maxValueLength)" {
		t.Errorf("rejections %+v", r.Rejections)
	}
	if n := len(e.emu.people(t, e.company)); n != 4 {
		t.Errorf("%d people at the emulator, want 4", n)
	}
}

// TestE2ECROnlyExport: Excel for Mac's "CSV (Macintosh)" ends lines with a
// lone CR; its people are created.
func TestE2ECROnlyExport(t *testing.T) {
	t.Parallel()
	e := newEnv(t, configOptions{})
	export := bytes.ReplaceAll(csvExport(genPeople(0, 12)), []byte("\n"), []byte("\r"))
	e.dropFile("mac.csv", export)
	e.mustRun(0, "run", "people")
	if n := len(e.emu.people(t, e.company)); n != 12 {
		t.Errorf("%d people at the emulator, want 12", n)
	}
	if r := e.report("processed", "mac.csv"); r.Counts["rows"] != 12 || r.Counts["created"] != 12 {
		t.Errorf("report counts %v, want 12 rows created", r.Counts)
	}
}

// TestE2EZeroWidthExternalID: an externalId holding a zero-width space is
// rejected with its reason; the others are created.
func TestE2EZeroWidthExternalID(t *testing.T) {
	t.Parallel()
	e := newEnv(t, configOptions{})
	people := genPeople(0, 6)
	people[3].id = "P00\u200b003"
	e.dropFile("zw.csv", csvExport(people))
	res := e.mustRun(4, "run", "people")
	r := e.report("processed", "zw.csv")
	want := "externalId holds an invisible, format or control character (U+200B) at character 4"
	if len(r.Rejections) != 1 || r.Rejections[0].Line != 5 || r.Rejections[0].Field != "externalId" || r.Rejections[0].Reason != want {
		t.Errorf("rejections %+v, want line 5: %s", r.Rejections, want)
	}
	if n := len(e.emu.people(t, e.company)); n != 5 {
		t.Errorf("%d people at the emulator, want 5", n)
	}
	checkNoPersonalData(t, "stderr", res.stderr, people)
}
