package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// lateReport is what the late archive's test reads of the JSON report
// beside the export.
type lateReport struct {
	RunID   string         `json:"runId"`
	Outcome string         `json:"outcome"`
	Counts  map[string]int `json:"counts"`
	People  struct {
		Added []struct {
			ExternalID string  `json:"externalId"`
			Granted    float64 `json:"granted"`
		} `json:"added"`
	} `json:"people"`
	ArchivedLate *struct {
		Cause string `json:"cause"`
		ByRun string `json:"byRun"`
	} `json:"archivedLate"`
}

// lateBreak is one way an archive fails after the platform calls: fail
// makes it fail, repair undoes it, and cause is the plain words the next
// step names.
type lateBreak struct {
	name    string
	setup   func(t *testing.T, rd *remoteDrop) func(e *env) []string
	fail    func(t *testing.T, e *env, rd *remoteDrop)
	repair  func(t *testing.T, e *env, rd *remoteDrop)
	cause   string
	lastHas string
}

// TestE2ELateArchive: the archive fails after createPeople (locally,
// processed/ refuses writes; over SFTP and S3, the server stops): the run
// exits 4 "could not be archived", naming the cause. The next run sends
// nothing and archives the export with the report of the run that sent it
// (its people, counts and grants), marked archived late, its next step
// naming the cause; the HTML report says so in Chromium.
func TestE2ELateArchive(t *testing.T) {
	t.Parallel()
	server := func(t *testing.T, e *env, rd *remoteDrop) { rd.stop() }
	restart := func(t *testing.T, e *env, rd *remoteDrop) { rd.start(t) }
	lost := "the connection to the drop folder's server was lost"
	for _, c := range []lateBreak{
		{name: "local", fail: immutable("+i"), repair: immutable("-i"),
			cause: "hrsync was not allowed to write into the drop folder's processed/ or failed/ (permission denied)", lastHas: "permission denied"},
		{name: "sftp", setup: sftpDrop, fail: server, repair: restart, cause: lost, lastHas: lost},
		{name: "s3", setup: s3Drop, fail: server, repair: restart, cause: lost, lastHas: lost},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rd := &remoteDrop{}
			opts := configOptions{}
			if c.setup != nil {
				opts.dropFolder = c.setup(t, rd)
			}
			lateArchive(t, newEnv(t, opts), rd, c)
		})
	}
}

// immutable sets or clears the immutable attribute of the local drop
// folder's processed/: even root cannot write into it while it is set.
func immutable(flag string) func(t *testing.T, e *env, rd *remoteDrop) {
	return func(t *testing.T, e *env, _ *remoteDrop) {
		dir := filepath.Join(e.drop, "processed")
		if err := os.MkdirAll(dir, 0o750); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("chattr", flag, dir).CombinedOutput(); err != nil {
			t.Fatalf("chattr %s processed/ (the local case needs e2fsprogs' chattr on a file system that has the attribute): %v %s", flag, err, out)
		}
		if flag == "+i" {
			t.Cleanup(func() { _ = exec.Command("chattr", "-i", dir).Run() })
		}
	}
}

// lateArchive runs the late archive's story on e.
func lateArchive(t *testing.T, e *env, rd *remoteDrop, c lateBreak) {
	rows := genPeople(0, 3)
	if rd.upload != nil {
		rd.put(t, "employees.csv", csvExport(rows))
	} else {
		e.dropFile("employees.csv", csvExport(rows))
		immutable("-i")(t, e, rd) // processed/ exists before the run
	}
	e.emu.addFault(t, fault{Operation: "createPeople", When: "after", Latency: "2s", Count: 1})
	done := make(chan result, 1)
	go func() { done <- e.runNoFatal("run", "people", "-o", "json") }()
	if !waitFor(90*time.Second, func() bool { return len(e.emu.people(t, e.company)) == len(rows) }) {
		t.Fatal("the run never created the people")
	}
	c.fail(t, e, rd)
	first := <-done
	if first.code != 4 {
		t.Fatalf("a run whose archive failed after the calls: want exit 4, got %s", first)
	}
	line := lastLine(t, first).Msg
	if !strings.Contains(line, "could not be archived") || !strings.Contains(line, c.lastHas) {
		t.Errorf("last line %q; want it to say the export could not be archived and why (%q)", line, c.lastHas)
	}
	// The report says, in plain words, why it is not archived and that
	// the next run archives it with this report.
	if want := `"cause": "` + c.cause + `; the next run archives it with this report"`; !strings.Contains(first.stdout, want) {
		t.Errorf("the run's JSON report lacks %s:\n%s", want, first.stdout)
	}
	c.repair(t, e, rd)

	e.emu.clearRequests(t)
	e.mustRun(0, "run", "people")
	if n := countOp(e.emu.requests(t), "createPeople"); n != 0 {
		t.Errorf("the late archive made %d createPeople calls, want none", n)
	}
	checkPeople(t, e, rows)
	if got := e.archived("processed"); !slicesEqual(got, []string{"employees.csv", "employees.csv.report.html", "employees.csv.report.json"}) {
		t.Fatalf("processed/ holds %v", got)
	}
	b, err := os.ReadFile(filepath.Join(e.drop, "processed", "employees.csv.report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r lateReport
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if r.Outcome != "ok" || r.Counts["created"] != 3 || len(r.People.Added) != 3 || r.ArchivedLate == nil ||
		r.ArchivedLate.Cause != c.cause || r.ArchivedLate.ByRun == "" || r.ArchivedLate.ByRun == r.RunID {
		t.Errorf("the archived report is not the sending run's, marked archived late:\n%s", b)
	}
	text := visibleText(t, filepath.Join(e.drop, "processed", "employees.csv.report.html"))
	for _, want := range []string{"3 people added (", "Added (3)", "Archived late: this export was sent to the platform on",
		"but it could not be archived then (" + c.cause + ")",
		"Next step: It was archived late because " + c.cause + "; to keep that from happening again,"} {
		if !strings.Contains(text, want) {
			t.Errorf("the late report lacks %q:\n%s", want, text)
		}
	}
	for _, bad := range []string{"processed before", "already processed", "Nothing to do."} {
		if strings.Contains(text, bad) {
			t.Errorf("the late report says %q:\n%s", bad, text)
		}
	}
	checkPlainWords(t, e, "late", text)
	screenshot(t, filepath.Join(e.drop, "processed", "employees.csv.report.html"), "report-late-"+c.name+".png")
}
