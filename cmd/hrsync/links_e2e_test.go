package main_test

// Issue 20, items 4, 5 and 7 through the real binary: links in and around
// the drop folder, the rejects CSV round trip with line breaks inside
// values on local, SFTP and S3 folders.

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"hrsync/internal/reports/reportstest"
)

// TestE2EDropOnlyLinks: a drop folder holding only a symbolic link ends in
// attention (4), not failed: nothing a retry could change; the link goes
// to failed/ with a report saying why, and what it points to is untouched.
func TestE2EDropOnlyLinks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, configOptions{})
	outside := filepath.Join(t.TempDir(), "elsewhere.csv")
	if err := os.WriteFile(outside, csvExport(genPeople(0, 2)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(e.drop, "link.csv")); err != nil {
		t.Fatal(err)
	}
	res := e.mustRun(4, "run", "people")
	if !strings.Contains(res.stderr, "link.csv is a symbolic link") {
		t.Errorf("stderr does not say the link is refused:\n%s", res.stderr)
	}
	if r := e.report("failed", "link.csv"); r.Outcome != "attention" || !strings.Contains(r.Error, "is a symbolic link") {
		t.Errorf("report %s %q", r.Outcome, r.Error)
	}
	if n := len(e.emu.people(t, e.company)); n != 0 {
		t.Errorf("%d people created from a link", n)
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("the link's target: %v", err)
	}
	e.mustRun(0, "run", "people")
}

// TestE2ESubfolderLinkRefused: a processed/ that is a symbolic link to a
// folder outside the drop folder stops the run before any call, with a
// cause naming processed/ and no path of the machine; nothing is written
// where it points, and the export waits for the folder to be fixed.
func TestE2ESubfolderLinkRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, configOptions{})
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(e.drop, "processed")); err != nil {
		t.Fatal(err)
	}
	e.dropFile("employees.csv", csvExport(genPeople(0, 3)))
	res := e.runNoFatal("run", "people")
	if res.code == 0 {
		t.Fatalf("exit 0 with processed/ a link:\n%s", res)
	}
	if !strings.Contains(res.stderr, "the drop folder's processed/ is a symbolic link") {
		t.Errorf("stderr does not name processed/:\n%s", res.stderr)
	}
	if n := countOp(e.emu.requests(t), "createPeople"); n != 0 {
		t.Errorf("%d createPeople calls", n)
	}
	if left, _ := os.ReadDir(outside); len(left) != 0 {
		t.Errorf("written through the link: %v", left)
	}
	if _, err := os.Stat(filepath.Join(e.drop, "employees.csv")); err != nil {
		t.Errorf("the export: %v", err)
	}
	// Fixed, the next run processes the export.
	if err := os.Remove(filepath.Join(e.drop, "processed")); err != nil {
		t.Fatal(err)
	}
	e.mustRun(0, "run", "people")
}

// lineBreakExport is an export whose rows 2 and 3 (lines 2 and 4) have
// values with a lone CR, an LF and CRLFs in quoted fields and an e-mail
// address that rejects them; the last row is good.
const lineBreakExport = "externalId,email,firstName,lastName,department,location,startDate,birthDate,addBalance\n" +
	"P90001,not-an-email,Ada,\"Mid\rdle\",Eng,\"two\nlines\",2020-01-01,1990-01-01,10\n" +
	"P90002,also-not,Bo,\"dos\r\nlines\",\"a\r\n\nb\r\",Lisbon,2020-01-01,1990-01-01,10\n" +
	"P90003,p90003@example.test,Cy,Good,Eng,Lisbon,2020-01-01,1990-01-01,10\n"

// TestE2ERejectsKeepLineBreaks: the rejects CSV written beside the archived
// export holds the rejected rows' values byte for byte (a lone CR, LF and
// CRLF inside quoted values), on a local, an SFTP and an S3 drop folder.
func TestE2ERejectsKeepLineBreaks(t *testing.T) {
	t.Parallel()
	want := [][]string{
		{"2", "email", "", "P90001", "not-an-email", "Ada", "Mid\rdle", "Eng", "two\nlines", "2020-01-01", "1990-01-01", "10"},
		{"4", "email", "", "P90002", "also-not", "Bo", "dos\r\nlines", "a\r\n\nb\r", "Lisbon", "2020-01-01", "1990-01-01", "10"},
	}
	check := func(t *testing.T, e *env, drop func()) {
		drop()
		e.mustRun(4, "run", "people")
		raw, err := os.ReadFile(filepath.Join(e.drop, "processed", "employees.csv.rejects.csv"))
		if err != nil {
			t.Fatal(err)
		}
		recs := reportstest.ReadRejects(t, raw, ',')
		if len(recs) != 3 {
			t.Fatalf("rejects CSV %q: want the header and 2 rows", recs)
		}
		for i, rec := range recs[1:] {
			rec[2] = "" // the reason, checked elsewhere
			if !reflect.DeepEqual(rec, want[i]) {
				t.Errorf("rejected row\n%q\nwant\n%q", rec, want[i])
			}
		}
		if n := len(e.emu.people(t, e.company)); n != 1 {
			t.Errorf("%d people created, want the good row's", n)
		}
	}
	t.Run("local", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, configOptions{})
		check(t, e, func() { e.dropFile("employees.csv", []byte(lineBreakExport)) })
	})
	t.Run("remote", func(t *testing.T) {
		eachRemote(t, func(t *testing.T, e *env, rd *remoteDrop) {
			check(t, e, func() { rd.put(t, "employees.csv", []byte(lineBreakExport)) })
		})
	})
}
