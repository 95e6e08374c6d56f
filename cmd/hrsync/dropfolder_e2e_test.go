package main_test

// The drop folder at its edges (issue 11), end to end through the binary: a
// row appended while a run is in flight is never archived unread; an
// unreadable or empty file goes to failed/ with its report beside the good
// ones and never blocks later runs; a file name with a newline cannot forge
// a line.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestE2EDropAppendedDuringRun: a row appended to the export while the run
// waits for the platform (a 2 s latency after createPeople is applied) is
// not archived unread: the run ends in attention saying the export stays,
// and the next run creates the appended person, and only them.
func TestE2EDropAppendedDuringRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t, configOptions{})
	rows := genPeople(0, 3)
	path := e.dropFile("employees.csv", csvExport(rows))
	e.emu.addFault(t, fault{Operation: "createPeople", When: "after", Latency: "2s", Count: 1})

	done := make(chan result, 1)
	go func() { done <- e.runNoFatal("run", "people") }()
	// The platform applied the call and holds its answer for 2 s: append.
	if !waitFor(90*time.Second, func() bool { return len(e.emu.people(t, e.company)) == 3 }) {
		t.Fatalf("the run never created the first 3 people")
	}
	appended := genPerson(3)
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimPrefix(string(csvExport([]person{appended})), string(csvExport(nil)))
	if _, err := fh.WriteString(line); err != nil {
		t.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.code != 4 {
		t.Fatalf("first run: want exit 4 (attention), got %s", res)
	}
	last := lastLine(t, res)
	t.Logf("last line of the first run: %s", last.Msg)
	if !strings.Contains(last.Msg, "employees.csv") || !strings.Contains(last.Msg, "changed after it was read") ||
		!strings.Contains(last.Msg, "stays in the drop folder") {
		t.Errorf("last line %q: want it to say employees.csv changed and stays", last.Msg)
	}
	if got := e.archived("processed"); len(got) != 0 {
		t.Fatalf("processed/ holds %v: the appended row was archived unread", got)
	}
	if outcome, msg := e.lastRun(); outcome != "attention" || !strings.Contains(msg, "changed after it was read") {
		t.Errorf("run record %s %q", outcome, msg)
	}

	e.emu.clearRequests(t)
	res = e.mustRun(0, "run", "people")
	if got := countOp(e.emu.requests(t), "createPeople"); got != 1 {
		t.Errorf("second run made %d createPeople calls, want 1 (the appended person)", got)
	}
	people := byExternalID(t, e.emu.people(t, e.company))
	if len(people) != 4 {
		t.Fatalf("people at the platform: %d, want 4", len(people))
	}
	for _, p := range append(rows, appended) {
		got := people[p.id]
		if got.Balance != p.wantBalance() || len(got.Grants) != 1 {
			t.Errorf("%s: balance %g in %d grants, want %g once", p.id, got.Balance, len(got.Grants), p.wantBalance())
		}
	}
	if got := e.archived("processed"); !slices.Contains(got, "employees.csv") {
		t.Errorf("processed/ = %v after the second run, want employees.csv", got)
	}
	if r := e.report("processed", "employees.csv"); r.Counts["created"] != 1 || r.Counts["unchanged"] != 3 {
		t.Errorf("second report counts %v, want 1 created and 3 unchanged", r.Counts)
	}
}

// TestE2EDropUnreadableBesideGood: files that cannot be read go to failed/
// with their report, and the good export beside them is processed. The
// tests run as root, whom a mode 000 does not stop: the unreadable file is
// a named pipe called bad.csv (never opened: opening a pipe blocks), and,
// when the test does not run as root, also a file of mode 000.
func TestE2EDropUnreadableBesideGood(t *testing.T) {
	t.Parallel()
	e := newEnv(t, configOptions{})
	rows := genPeople(0, 2)
	e.dropFile("good.csv", csvExport(rows))
	if err := syscall.Mkfifo(filepath.Join(e.drop, "bad.csv"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := map[string]string{"bad.csv": "is a named pipe"}
	if os.Geteuid() != 0 {
		p := e.dropFile("locked.csv", csvExport(genPeople(10, 11)))
		if err := os.Chmod(p, 0); err != nil {
			t.Fatal(err)
		}
		bad["locked.csv"] = "cannot be read (permission denied)"
	}
	outside := filepath.Join(t.TempDir(), "elsewhere.csv")
	if err := os.WriteFile(outside, csvExport(genPeople(20, 21)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(e.drop, "link.csv")); err != nil {
		t.Fatal(err)
	}
	bad["link.csv"] = "is a symbolic link"

	res := e.mustRun(1, "run", "people")
	if got := len(e.emu.people(t, e.company)); got != len(rows) {
		t.Errorf("people at the platform: %d, want %d (the good export's)", got, len(rows))
	}
	if got := e.archived("processed"); !slices.Contains(got, "good.csv") {
		t.Errorf("processed/ = %v, want good.csv", got)
	}
	for name, says := range bad {
		r := e.report("failed", name)
		want := "failed"
		if name == "link.csv" {
			want = "attention" // a link is never followed: no retry changes that
		}
		if r.Outcome != want || !strings.Contains(r.Error, name+" "+says) {
			t.Errorf("report of %s: %s %q, want %s saying %q", name, r.Outcome, r.Error, want, says)
		}
		if !strings.Contains(res.stderr, says) {
			t.Errorf("stderr does not say %s %s", name, says)
		}
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("the link's target outside the folder: %v", err)
	}
	// The folder is clear: the next run has nothing to do.
	e.mustRun(0, "run", "people")
}

// TestE2EDropEmptyFile: an empty file goes to failed/ with its report, and
// the runs after it are not affected.
func TestE2EDropEmptyFile(t *testing.T) {
	t.Parallel()
	e := newEnv(t, configOptions{})
	e.dropFile("empty.csv", nil)
	res := e.mustRun(1, "run", "people")
	if last := lastLine(t, res); !strings.Contains(last.Msg, "empty.csv is empty (0 bytes)") {
		t.Errorf("last line %q: want it to say empty.csv is empty", last.Msg)
	}
	if r := e.report("failed", "empty.csv"); r.Outcome != "failed" || !strings.Contains(r.Error, "is empty") {
		t.Errorf("report of empty.csv: %+v", r)
	}
	if got := e.archived("failed"); len(got) != 3 { // the file and its JSON and HTML reports
		t.Errorf("failed/ = %v", got)
	}
	rows := genPeople(0, 3)
	e.dropFile("employees.csv", csvExport(rows))
	e.mustRun(0, "run", "people")
	e.mustRun(0, "run", "people")
	if got := len(e.emu.people(t, e.company)); got != 3 {
		t.Errorf("people at the platform: %d, want 3", got)
	}
	// Another empty file of the same name: failed/ again, beside the first.
	e.dropFile("empty.csv", nil)
	e.mustRun(1, "run", "people")
	if got := e.archived("failed"); len(got) != 6 {
		t.Errorf("failed/ = %v, want both empty files and their reports", got)
	}
}

// TestE2EDropNameEscaped: a file name with a newline and an escape
// sequence is printed escaped in every output: the log lines stay one JSON
// document each, the last line and the run record quote it, the report's
// source too; the export is processed and archived under its own name.
func TestE2EDropNameEscaped(t *testing.T) {
	t.Parallel()
	e := newEnv(t, configOptions{})
	name := "march\n{\"level\":\"info\",\"msg\":\"ok\"}\x1b[2K.csv"
	e.dropFile(name, csvExport(genPeople(0, 2)))
	res := e.mustRun(0, "run", "people")
	last := lastLine(t, res) // fails on a line that is not JSON
	t.Logf("last line: %s", last.Msg)
	quoted := fmt.Sprintf("%q", name)
	if !strings.Contains(last.Msg, quoted) {
		t.Errorf("last line %q: want the name as %s", last.Msg, quoted)
	}
	if strings.Contains(res.stdout, name) || strings.Contains(res.stdout, "\x1b") {
		t.Errorf("stdout prints the raw name: %q", res.stdout)
	}
	if got := e.archived("processed"); !slices.Contains(got, name) {
		t.Errorf("processed/ = %q, want the file under its own name", got)
	}
	var source string
	if err := e.stateDB().QueryRowContext(t.Context(), "SELECT name FROM source_files").Scan(&source); err != nil {
		t.Fatal(err)
	}
	if source != quoted {
		t.Errorf("source_files.name = %q, want %s", source, quoted)
	}
}
