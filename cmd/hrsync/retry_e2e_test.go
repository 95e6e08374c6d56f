package main_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// runShell runs a command line the binary printed, as an operator would
// paste it: through sh, with hrsync on the PATH, in the test's folder,
// with the token in the environment.
func (e *env) runShell(line string) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Env = childEnv("HRSYNC_API_TOKEN="+e2eToken, "PATH="+filepath.Dir(binaryPath())+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.Dir = e.dir
	res := runExec(cmd)
	if res.code < 0 {
		e.t.Fatalf("sh -c %s: %s", line, res)
	}
	return res
}

// TestE2ERetryAfterSafeguard follows the way forward after a safeguard
// stop: the stop prints the exact command that takes the export back from
// failed/ and runs it once past the safeguards; that command creates the
// new people once and leaves every other file of the folder alone; the
// same command again is refused, the file being no longer in failed/.
func TestE2ERetryAfterSafeguard(t *testing.T) {
	e := newEnv(t, configOptions{})
	staff := genPeople(0, 100)
	e.dropFile("staff.csv", csvExport(staff))
	e.mustRun(0, "run", "people")

	// Half the staff and five new hires: too many departures, too short.
	stopped := append(slices.Clone(staff[:50]), genPeople(300, 305)...)
	e.dropFile("staff march.csv", csvExport(stopped))
	want := "hrsync run people --config " + e.config + " --tenant " + tenantName +
		" --override-safeguards --file 'failed/staff march.csv'"
	if strings.ContainsAny(e.config, " '\"$\\") {
		t.Fatalf("the test folder %q needs quoting; the expected command assumes it does not", e.config)
	}
	var stop result
	step(t, "the stop names the exact command", func(t *testing.T) {
		e := e.in(t)
		stop = e.mustRun(3, "run", "people")
		if got := lastLine(t, stop).Msg; !strings.HasSuffix(got, ": "+want) {
			t.Errorf("last line:\n%s\nwant it to end with the command:\n%s", got, want)
		}
		if !strings.Contains(stop.stdout, "run it once past the safeguards: "+want+"\n") {
			t.Errorf("the report does not print the command %s:\n%s", want, stop.stdout)
		}
		if !slices.Contains(e.archived("failed"), "staff march.csv") {
			t.Fatalf("the stopped export is not in failed/: %v", e.archived("failed"))
		}
		// The HTML report beside it, as Chromium shows it, says why and
		// gives the same command.
		text := visibleText(t, filepath.Join(e.drop, "failed", "staff march.csv.report.html"))
		for _, part := range []string{"SAFEGUARD", "Safeguard stops", "would be marked departed",
			"Would have left (50)", "Would have been added (5)", "Next step: Check the export against the HR system"} {
			if !strings.Contains(strings.ToUpper(text), strings.ToUpper(part)) {
				t.Errorf("the HTML report lacks %q:\n%s", part, text)
			}
		}
		// The command is the operator's (the last line): the HR admin's
		// page holds no command line and no path.
		for _, bad := range []string{"--override-safeguards", e.config, "departed 50"} {
			if strings.Contains(text, bad) {
				t.Errorf("the HTML report shows %q:\n%s", bad, text)
			}
		}
	})

	// Files that have nothing to do with the retry: one ready (the export
	// after the retried one: its people and three new hires), one not an export.
	later := csvExport(append(slices.Clone(stopped), genPeople(400, 403)...))
	e.dropFile("later.csv", later)
	e.dropFile("notes.txt", []byte("not an export"))
	e.emu.clearRequests(t)

	step(t, "the command runs the stopped export once past the safeguards, and only it", func(t *testing.T) {
		e := e.in(t)
		res := e.runShell(want)
		if res.code != 0 {
			t.Fatalf("%s: want exit 0, got %s", want, res)
		}
		checkPeople(t, e, append(slices.Clone(staff), genPeople(300, 305)...))
		if n := countOp(e.emu.requests(t), "createPeople"); n != 1 {
			t.Errorf("%d createPeople calls, want 1 (the five new hires)", n)
		}
		if r := e.report("processed", "staff march.csv"); r.Outcome != "ok" || r.Counts["created"] != 5 || r.Counts["departed"] != 50 {
			t.Errorf("report: outcome %s, counts %v; want ok, 5 created, 50 departed", r.Outcome, r.Counts)
		}
		if r := e.report("failed", "staff march.csv"); r.Outcome != "safeguard" {
			t.Errorf("the stopped run's report in failed/ says %s, want safeguard", r.Outcome)
		}
		if slices.Contains(e.archived("failed"), "staff march.csv") {
			t.Errorf("the export is still in failed/: %v", e.archived("failed"))
		}
		for name, content := range map[string][]byte{"later.csv": later, "notes.txt": []byte("not an export")} {
			if b, err := os.ReadFile(filepath.Join(e.drop, name)); err != nil || !bytes.Equal(b, content) {
				t.Errorf("%s was touched by the retry: %v", name, err)
			}
		}
		if n := e.count("SELECT COUNT(*) FROM source_files WHERE name = ? AND outcome = 'processed'", "staff march.csv"); n != 1 {
			t.Errorf("%d processed source_files rows for the export, want 1", n)
		}
	})

	step(t, "the same command again is refused: the file is no longer in failed/", func(t *testing.T) {
		e := e.in(t)
		e.emu.clearRequests(t)
		res := e.runShell(want)
		if res.code != 2 || !strings.Contains(lastLine(t, res).Msg, `"failed/staff march.csv" is no longer in failed/`) {
			t.Errorf("want exit 2 saying the file is no longer in failed/, got %s", res)
		}
		if n := apiCalls(t, e); n != 0 {
			t.Errorf("%d API calls from a refused retry, want none", n)
		}
	})

	step(t, "names that are not an export in failed/ are refused", func(t *testing.T) {
		e := e.in(t)
		for file, says := range map[string]string{
			"failed/../../hrsync.yaml": "is outside the drop folder",
			"later.csv":                "is not in the drop folder's failed/",
			"failed/nobody.csv":        "no such file",
		} {
			res := e.run("run", "people", "--override-safeguards", "--file", file)
			if res.code != 2 || !strings.Contains(res.stderr, says) {
				t.Errorf("--file %s: want exit 2 saying %q, got %s", file, says, res)
			}
		}
		if apiCalls(t, e) != 0 {
			t.Error("a refused --file made API calls")
		}
	})

	step(t, "the next run takes the other files as usual", func(t *testing.T) {
		e := e.in(t)
		e.mustRun(0, "run", "people")
		if r := e.report("processed", "later.csv"); r.Counts["created"] != 3 {
			t.Errorf("later.csv: counts %v, want 3 created", r.Counts)
		}
		checkPeople(t, e, append(append(slices.Clone(staff), genPeople(300, 305)...), genPeople(400, 403)...))
	})
}
