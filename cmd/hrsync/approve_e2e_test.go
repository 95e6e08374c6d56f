package main_test

// Issue 20, item 2 through the real binary: after a safeguard stop, an HR
// admin moves the export from failed/ into approve/, and the next run takes
// it past the safeguards once, on a local, an SFTP and an S3 drop folder;
// a file no safeguard stopped is refused; approve/ as a link is refused;
// the setting off leaves approve/ alone. Item 4 for approve/.

import (
	"encoding/json"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// approvalReport is the part of an approved export's report these tests
// read.
type approvalReport struct {
	Outcome  string         `json:"outcome"`
	Cause    string         `json:"cause"`
	Next     string         `json:"next"`
	Counts   map[string]int `json:"counts"`
	Approval *struct {
		At         string   `json:"approvedAt"`
		By         string   `json:"approvedBy"`
		StoppedRun string   `json:"stoppedRun"`
		Stops      []string `json:"safeguards"`
	} `json:"approval"`
}

// approvalOf reads the report beside name in the sub-folder dir.
func (e *env) approvalOf(dir, name string) approvalReport {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.drop, dir, name+".report.json"))
	if err != nil {
		e.t.Fatalf("report of %s in %s/: %v", name, dir, err)
	}
	var r approvalReport
	if err := json.Unmarshal(b, &r); err != nil {
		e.t.Fatalf("decode report: %v", err)
	}
	return r
}

// dropBackend is one kind of drop folder under test: how a file is placed
// in it (a name relative to the folder, "approve/x.csv" too), and who the
// backend says placed a file in approve/ ("" when it cannot tell).
type dropBackend struct {
	name string
	put  func(t *testing.T, e *env, name string, content []byte)
	by   func(e *env) string
}

// eachDropBackend runs test, in parallel, on a local, an SFTP and an S3
// drop folder.
func eachDropBackend(t *testing.T, test func(t *testing.T, e *env, b dropBackend)) {
	t.Parallel()
	t.Run("local", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, configOptions{})
		me, err := user.Current()
		if err != nil {
			t.Fatal(err)
		}
		test(t, e, dropBackend{name: "local",
			put: func(t *testing.T, e *env, name string, content []byte) { e.in(t).dropFile(name, content) },
			by:  func(*env) string { return me.Username }})
	})
	for _, rb := range remoteBackends {
		t.Run(rb.name, func(t *testing.T) {
			t.Parallel()
			rd := &remoteDrop{}
			var by string
			setup := rb.setup(t, rd)
			e := newEnv(t, configOptions{dropFolder: func(e *env) []string {
				keys := setup(e)
				for _, k := range keys {
					if u, ok := strings.CutPrefix(k, "  user: "); ok {
						by = u // SFTP: the user hrsync logs in as
					}
					if f, ok := strings.CutPrefix(k, "  accessKeyFile: "); ok {
						key, err := os.ReadFile(f)
						if err != nil {
							t.Fatal(err)
						}
						by = strings.TrimSpace(string(key)) // S3: the object's owner, versitygw's account
					}
				}
				return keys
			}})
			test(t, e, dropBackend{name: rb.name,
				put: func(t *testing.T, _ *env, name string, content []byte) { rd.put(t, name, content) },
				by:  func(*env) string { return by }})
		})
	}
}

// TestE2EApproveFromDropFolder: a safeguard stop's report tells the HR
// admin to move the export into approve/; moved there, the next run creates
// its new people once, past the safeguards, records who approved it and
// archives it to processed/; a file placed in approve/ that no safeguard
// stopped goes to failed/ unread, with a report saying why; the same
// export placed in approve/ again is a duplicate, archived without a call.
func TestE2EApproveFromDropFolder(t *testing.T) {
	eachDropBackend(t, func(t *testing.T, e *env, b dropBackend) {
		hook := newReceiver(t, http.StatusOK)
		e.withNotify("    notify:\n      webhooks:\n        - {urlFile: "+e.secretFile("hook-url", hook.srv.URL+"/hook")+"}\n", "")
		staff := genPeople(0, 100)
		b.put(t, e, "staff.csv", csvExport(staff))
		e.mustRun(0, "run", "people")
		// Half the staff and five new hires: too many departures.
		march := csvExport(append(slices.Clone(staff[:50]), genPeople(300, 305)...))
		b.put(t, e, "march.csv", march)

		step(t, "the stop tells the admin to move the export into approve/", func(t *testing.T) {
			e := e.in(t)
			res := e.mustRun(3, "run", "people")
			if got := lastLine(t, res).Msg; !strings.Contains(got, "move it from the drop folder's failed/ into approve/") {
				t.Errorf("last line %q does not name the move into approve/", got)
			}
			html, err := os.ReadFile(filepath.Join(e.drop, "failed", "march.csv.report.html"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(html), "move it from the failed folder into the approve folder") ||
				strings.Contains(string(html), "--override-safeguards") {
				t.Errorf("the HTML report's next step is not the move in plain words:\n%s", html)
			}
			if b.name != "s3" { // an object store has no folders to create
				if fi, err := os.Lstat(filepath.Join(e.drop, "approve")); err != nil || !fi.IsDir() {
					t.Errorf("approve/ beside processed/ and failed/: %v", err)
				}
			}
		})

		step(t, "moved into approve/, the next run creates the people once and says it was approved", func(t *testing.T) {
			e := e.in(t)
			b.put(t, e, "approve/march.csv", march)
			if err := os.Remove(filepath.Join(e.drop, "failed", "march.csv")); err != nil {
				t.Fatal(err)
			}
			if st := e.mustRun(0, "status"); !regexp.MustCompile(`(?m)^` + tenantName + ` +1, for the next run$`).MatchString(st.stdout) {
				t.Errorf("status does not count the file in approve/:\n%s", st.stdout)
			}
			e.emu.clearRequests(t)
			res := e.mustRun(0, "run", "people")
			if got := lastLine(t, res).Msg; !strings.Contains(got, "march.csv: approved by ") {
				t.Errorf("last line %q does not say the export was approved", got)
			}
			checkPeople(t, e, append(slices.Clone(staff), genPeople(300, 305)...))
			if n := countOp(e.emu.requests(t), "createPeople"); n != 1 {
				t.Errorf("%d createPeople calls, want 1 (the five new hires)", n)
			}
			r := e.approvalOf("processed", "march.csv")
			if r.Outcome != "ok" || r.Counts["created"] != 5 || r.Counts["departed"] != 50 || r.Approval == nil {
				t.Fatalf("report: %+v; want ok, 5 created, 50 departed, approved", r)
			}
			if r.Approval.By != b.by(e) || r.Approval.StoppedRun == "" || r.Approval.At == "" || len(r.Approval.Stops) == 0 {
				t.Errorf("approval %+v, want by %q, the stopped run and its stops", *r.Approval, b.by(e))
			}
			if left := e.archived("approve"); len(left) != 0 {
				t.Errorf("approve/ still holds %v", left)
			}
			html, err := os.ReadFile(filepath.Join(e.drop, "processed", "march.csv.report.html"))
			if err != nil || !strings.Contains(string(html), "A safeguard had stopped this export; it was approved by "+b.by(e)) {
				t.Errorf("the HTML report does not say the export was approved (%v)", err)
			}
			if n := e.count("SELECT COUNT(*) FROM safeguard_stops WHERE approved_run IS NOT NULL"); n != 1 {
				t.Errorf("%d approvals recorded, want 1", n)
			}
			// Told about problems only, the tenant hears of the approval all the same.
			var told bool
			for _, body := range hook.got() {
				var ev struct{ Outcome, Cause string }
				if json.Unmarshal(body, &ev) == nil && ev.Outcome == "ok" && strings.Contains(ev.Cause, "march.csv: approved by "+b.by(e)) {
					told = true
				}
			}
			if !told {
				t.Errorf("no notification says the export was approved: %d messages", len(hook.got()))
			}
		})

		step(t, "a file no safeguard stopped goes from approve/ to failed/ unread", func(t *testing.T) {
			e := e.in(t)
			other := csvExport(append(slices.Clone(staff[:50]), genPeople(600, 603)...))
			b.put(t, e, "approve/other.csv", other)
			e.emu.clearRequests(t)
			res := e.mustRun(4, "run", "people")
			if got := lastLine(t, res).Msg; !strings.Contains(got, "no safeguard stopped it") {
				t.Errorf("last line %q does not say why", got)
			}
			if n := countOp(e.emu.requests(t), "createPeople"); n != 0 {
				t.Errorf("%d createPeople calls from a file no safeguard stopped", n)
			}
			r := e.approvalOf("failed", "other.csv")
			if r.Outcome != "attention" || !strings.Contains(r.Cause, "no safeguard stopped it") || r.Approval != nil {
				t.Errorf("report %+v", r)
			}
			html, err := os.ReadFile(filepath.Join(e.drop, "failed", "other.csv.report.html"))
			if err != nil || !strings.Contains(string(html), "no safeguard stopped it") {
				t.Errorf("the HTML report does not say why (%v)", err)
			}
			if left := e.archived("approve"); len(left) != 0 {
				t.Errorf("approve/ still holds %v", left)
			}
		})

		step(t, "an approval is used once: the same export in approve/ again is a duplicate", func(t *testing.T) {
			e := e.in(t)
			b.put(t, e, "approve/march.csv", march)
			e.emu.clearRequests(t)
			e.mustRun(0, "run", "people")
			if n := countOp(e.emu.requests(t), "createPeople"); n != 0 {
				t.Errorf("%d createPeople calls from an approval used before", n)
			}
			checkPeople(t, e, append(slices.Clone(staff), genPeople(300, 305)...))
			var dup []string
			for _, n := range e.archived("processed") {
				if strings.HasPrefix(n, "march.") && strings.HasSuffix(n, ".csv") && n != "march.csv" {
					dup = append(dup, n)
				}
			}
			if len(dup) != 1 {
				t.Fatalf("processed/ holds %v, want the second copy under a suffixed name", e.archived("processed"))
			}
			if r := e.report("processed", dup[0]); !r.Duplicate {
				t.Errorf("the second copy's report is not a duplicate's: %+v", r)
			}
		})
	})
}

// TestE2EApproveFolderLinkRefused: an approve/ that is a symbolic link to a
// folder outside the drop folder, on a local and an SFTP folder, stops the
// run before any call with a cause naming approve/; nothing is read from or
// written where it points, and the export waits. (An S3 prefix has no
// links: a key is a name, never resolved elsewhere.)
func TestE2EApproveFolderLinkRefused(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, e *env, put func(name string, content []byte)) {
		outside := t.TempDir()
		bait := csvExport(genPeople(700, 703))
		if err := os.WriteFile(filepath.Join(outside, "bait.csv"), bait, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(e.drop, "approve")); err != nil {
			t.Fatal(err)
		}
		put("employees.csv", csvExport(genPeople(0, 3)))
		res := e.runNoFatal("run", "people")
		if res.code == 0 {
			t.Fatalf("exit 0 with approve/ a link:\n%s", res)
		}
		if got := lastLine(t, res).Msg; !strings.Contains(got, "the drop folder's approve/ is a symbolic link") || strings.Contains(got, outside) {
			t.Errorf("last line %q does not name approve/ alone", got)
		}
		if n := countOp(e.emu.requests(t), "createPeople"); n != 0 {
			t.Errorf("%d createPeople calls", n)
		}
		left, _ := os.ReadDir(outside)
		if len(left) != 1 || left[0].Name() != "bait.csv" {
			t.Errorf("written through the link: %v", left)
		}
		if b, err := os.ReadFile(filepath.Join(outside, "bait.csv")); err != nil || string(b) != string(bait) {
			t.Errorf("the file where the link points changed: %v", err)
		}
		if _, err := os.Stat(filepath.Join(e.drop, "employees.csv")); err != nil {
			t.Errorf("the export: %v", err)
		}
		// Fixed, the next run processes the export, and approve/ is a folder.
		if err := os.Remove(filepath.Join(e.drop, "approve")); err != nil {
			t.Fatal(err)
		}
		e.mustRun(0, "run", "people")
		if fi, err := os.Lstat(filepath.Join(e.drop, "approve")); err != nil || !fi.IsDir() {
			t.Errorf("approve/ after the fix: %v", err)
		}
	}
	t.Run("local", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, configOptions{})
		check(t, e, func(name string, content []byte) { e.dropFile(name, content) })
	})
	t.Run("sftp", func(t *testing.T) {
		t.Parallel()
		rd := &remoteDrop{}
		e := newEnv(t, configOptions{dropFolder: sftpDrop(t, rd)})
		check(t, e, func(name string, content []byte) { rd.put(t, name, content) })
	})
}

// TestE2EApproveFromDropFolderOff: with safeguards.approveFromDropFolder
// false, a stop's next step says approval from the drop folder is off and
// gives the operator's way; approve/ is not created, and a file placed
// there is left alone.
func TestE2EApproveFromDropFolderOff(t *testing.T) {
	t.Parallel()
	e := newEnv(t, configOptions{})
	f, err := os.OpenFile(e.config, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("    safeguards:\n      approveFromDropFolder: false\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	staff := genPeople(0, 100)
	e.dropFile("staff.csv", csvExport(staff))
	e.mustRun(0, "run", "people")
	march := csvExport(append(slices.Clone(staff[:50]), genPeople(300, 305)...))
	e.dropFile("march.csv", march)
	res := e.mustRun(3, "run", "people")
	if got := lastLine(t, res).Msg; !strings.Contains(got, "approval from the drop folder is off") || !strings.Contains(got, "--override-safeguards") {
		t.Errorf("last line %q does not say approval from the drop folder is off", got)
	}
	html, err := os.ReadFile(filepath.Join(e.drop, "failed", "march.csv.report.html"))
	if err != nil || !strings.Contains(string(html), "Approval from the drop folder is turned off") {
		t.Errorf("the HTML report does not say approval is off (%v)", err)
	}
	if _, err := os.Lstat(filepath.Join(e.drop, "approve")); !os.IsNotExist(err) {
		t.Errorf("approve/ created with approval off: %v", err)
	}
	if err := os.Mkdir(filepath.Join(e.drop, "approve"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(e.drop, "failed", "march.csv"), filepath.Join(e.drop, "approve", "march.csv")); err != nil {
		t.Fatal(err)
	}
	e.emu.clearRequests(t)
	e.mustRun(0, "run", "people")
	if n := countOp(e.emu.requests(t), "createPeople"); n != 0 {
		t.Errorf("%d createPeople calls with approval off", n)
	}
	if got := e.archived("approve"); !slicesEqual(got, []string{"march.csv"}) {
		t.Errorf("approve/ holds %v, want march.csv left alone", got)
	}
	if st := e.mustRun(0, "status"); !strings.Contains(st.stdout, "1, left alone: approval from the drop folder is off") {
		t.Errorf("status does not say approval is off:\n%s", st.stdout)
	}
}
