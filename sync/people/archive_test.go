package people_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"hrsync/model"
	"hrsync/sources"
	"hrsync/store"
	"hrsync/sync/people"
)

// stuck is an export whose archive fails with err, as a drop folder's does
// when the file changed after it was read, is gone, or cannot be moved.
type stuck struct {
	*file
	err error
}

func (s *stuck) Archive(bool, sources.RenderReports) (string, error) { return "", s.err }

// unusableFile is an export that can never be read (people.ErrUnusable):
// unreadable, empty.
type unusableFile struct{ *file }

func (u *unusableFile) Read(context.Context, sources.Handler) (sources.Stats, error) {
	return sources.Stats{}, fmt.Errorf("%s cannot be read (permission denied): %w", u.Name(), people.ErrUnusable)
}

// changingFile is an export written to while it was read.
type changingFile struct{ *file }

func (c *changingFile) Read(context.Context, sources.Handler) (sources.Stats, error) {
	return sources.Stats{Rows: 1}, fmt.Errorf("%s: %w", c.Name(), sources.ErrChanged)
}

// lastRun is the newest run record.
func (e *env) lastRun() store.RunRecord {
	e.t.Helper()
	runs, err := e.st.LastRuns(e.t.Context(), 1)
	if err != nil || len(runs) == 0 {
		e.t.Fatalf("last run: %v (%d runs)", err, len(runs))
	}
	return runs[0]
}

// TestChangedAfterRead: an export that changed between its read and its
// archive (a row appended while the run was in flight) stays in place; the
// run needs attention and its record says why; the next run reads the new
// content (a new hash) and creates only the appended person.
func TestChangedAfterRead(t *testing.T) {
	e := newEnv(t)
	rows := genPeople(3)
	first := &stuck{file: e.export("employees.csv", rows), err: fmt.Errorf("employees.csv: %w", sources.ErrChanged)}
	rep, err := e.job(nil).RunOnce(t.Context(), feed2(first), people.RunFlags{})
	if err != nil {
		t.Fatal(err)
	}
	er := rep.Exports[0]
	if er.Outcome != model.OutcomeAttention || er.ArchivedAs != "" || er.Counts["created"] != 3 {
		t.Fatalf("export report %+v, want attention, 3 created, not archived", er)
	}
	if !strings.Contains(er.Cause, "3 people created") || !strings.Contains(er.Cause, "changed after it was read") ||
		!strings.Contains(er.Cause, "next run reads it whole again") {
		t.Errorf("cause %q", er.Cause)
	}
	if er.Next == "" {
		t.Error("no next step")
	}
	outcome, cause, _ := rep.Summary()
	if outcome != model.OutcomeAttention || !strings.HasPrefix(cause, "employees.csv: ") {
		t.Errorf("summary %s %q", outcome, cause)
	}
	if run := e.lastRun(); run.Outcome != model.OutcomeAttention || !strings.Contains(run.Error, "changed after it was read") {
		t.Errorf("run record %s %q, want attention saying the export changed", run.Outcome, run.Error)
	}
	if _, seen, err := e.st.SourceFileByHash(t.Context(), "acme", first.sha); err != nil || !seen {
		t.Errorf("the content read is not recorded as processed: %v %v", seen, err)
	}

	// The file as it is now: the three rows and one appended.
	now := e.export("employees.csv", genPeople(4))
	rep, err = e.job(nil).RunOnce(t.Context(), feed(now), people.RunFlags{})
	if err != nil {
		t.Fatal(err)
	}
	er = rep.Exports[0]
	if er.Outcome != model.OutcomeOK || er.Counts["created"] != 1 || er.Counts["unchanged"] != 3 || er.ArchivedAs != "processed/employees.csv" {
		t.Fatalf("second run %+v, want ok, 1 created, 3 unchanged, archived", er)
	}
	if calls := e.createCalls(); calls != 2 {
		t.Errorf("createPeople calls = %d, want 2 (one for 3 people, one for the appended one)", calls)
	}
	for id, b := range e.balances() {
		if strings.HasPrefix(id, "00000") && b != 10 {
			t.Errorf("balance of %s = %g, want 10 (granted once)", id, b)
		}
	}
}

// TestChangedWhileRead: an export written to during its read is not
// applied (what was read may mix two versions): no call, not archived, not
// recorded; attention, and the next run reads it.
func TestChangedWhileRead(t *testing.T) {
	e := newEnv(t)
	f := &changingFile{file: e.export("employees.csv", genPeople(2))}
	rep, err := e.job(nil).RunOnce(t.Context(), feed2(f), people.RunFlags{})
	if err != nil {
		t.Fatal(err)
	}
	er := rep.Exports[0]
	if er.Outcome != model.OutcomeAttention || len(f.archived) != 0 || e.createCalls() != 0 {
		t.Fatalf("report %+v, archived %v, calls %d: want attention, nothing archived, no call", er, f.archived, e.createCalls())
	}
	if !strings.Contains(er.Cause, "changed while it was read") {
		t.Errorf("cause %q", er.Cause)
	}
	if _, seen, _ := e.st.SourceFileByHash(t.Context(), "acme", f.sha); seen {
		t.Error("a file changed while read is recorded")
	}
	if run := e.lastRun(); run.Outcome != model.OutcomeAttention {
		t.Errorf("run record %s", run.Outcome)
	}
}

// TestUnusableBesideGood: an export that can never be read goes to failed/
// with its report (failed outcome), and the good export of the same run is
// processed.
func TestUnusableBesideGood(t *testing.T) {
	e := newEnv(t)
	bad := &unusableFile{file: e.export("bad.csv", genPeople(1))}
	good := e.export("good.csv", genPeople(2))
	rep, err := e.job(nil).RunOnce(t.Context(), feed2(bad, good), people.RunFlags{})
	if err == nil {
		t.Error("RunOnce returned no error for a failed export")
	}
	if len(rep.Exports) != 2 {
		t.Fatalf("exports %+v", rep.Exports)
	}
	b, g := rep.Exports[0], rep.Exports[1]
	if b.Outcome != model.OutcomeFailed || b.ArchivedAs != "failed/bad.csv" || !strings.Contains(b.Cause, "cannot be read") {
		t.Errorf("bad export %+v, want failed, in failed/, saying why", b)
	}
	if g.Outcome != model.OutcomeOK || g.ArchivedAs != "processed/good.csv" || g.Counts["created"] != 2 {
		t.Errorf("good export %+v, want ok, 2 created, in processed/", g)
	}
	if rep.Outcome() != model.OutcomeFailed {
		t.Errorf("run outcome %s, want failed", rep.Outcome())
	}
}

// TestArchiveGoneOrRefused: an export removed before its archive keeps its
// outcome (its content was applied) and says so; one the folder cannot
// move needs attention, and the next run archives it.
func TestArchiveGoneOrRefused(t *testing.T) {
	for _, tc := range []struct {
		name    string
		err     error
		outcome model.RunOutcome
		says    string
	}{
		{"gone", fmt.Errorf("employees.csv is no longer in the drop folder: %w", fs.ErrNotExist), model.OutcomeOK, "removed from the drop folder"},
		{"refused", errors.New("archive employees.csv: permission denied"), model.OutcomeAttention, "could not be archived"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			f := &stuck{file: e.export("employees.csv", genPeople(2)), err: tc.err}
			rep, err := e.job(nil).RunOnce(t.Context(), feed2(f), people.RunFlags{})
			if err != nil {
				t.Fatal(err)
			}
			er := rep.Exports[0]
			if er.Outcome != tc.outcome || !strings.Contains(er.Cause, tc.says) || er.ArchivedAs != "" {
				t.Errorf("report %+v, want %s saying %q", er, tc.outcome, tc.says)
			}
			if run := e.lastRun(); run.Outcome != tc.outcome || !strings.Contains(run.Error, tc.says) {
				t.Errorf("run record %s %q", run.Outcome, run.Error)
			}
		})
	}
}

// feed2 is feed for any exports.
func feed2(exports ...people.Export) people.Feed {
	return func(context.Context) ([]people.Export, error) { return exports, nil }
}
