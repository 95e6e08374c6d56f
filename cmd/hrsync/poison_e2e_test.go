package main_test

// A person the platform refuses is split out of their batch (DESIGN.md,
// invariant 8), end to end through the binary and the emulator.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestE2EPoisonPersonInABatchOf100 drops 100 new people in one batch, one
// of whom the emulator refuses (a balance above its maximum): the other 99
// are created once, the refused one is reported with the platform's reason
// (report, run record, last line), the run exits 4 and archives the export,
// and neither a rerun nor the same file dropped again sends anything.
func TestE2EPoisonPersonInABatchOf100(t *testing.T) {
	t.Parallel()
	e := newEnv(t, configOptions{batchSize: 100})
	e.emu.do(t, "PUT", "/_emulator/limits", map[string]any{"maxBalance": 100}, nil)
	staff := genPeople(1, 101)
	staff[49].balance = "500" // P00050
	export := csvExport(staff)
	e.dropFile("poison.csv", export)

	res := e.mustRun(4, "run", "people")
	const reason = "refused by the platform: 400 invalid_input: addBalance: above the maximum of 100"
	last := lastLine(t, res)
	for _, want := range []string{"attention: people " + tenantName + ": poison.csv: 99 people created",
		"1 person refused by the platform (400 invalid_input: addBalance: above the maximum of 100): P00050",
		"fix the refused people"} {
		if !strings.Contains(last.Msg, want) {
			t.Errorf("last line %q does not say %q", last.Msg, want)
		}
	}
	if last.ExitCode != 4 || last.Outcome != "attention" {
		t.Errorf("last line %+v, want attention with exit code 4", last)
	}
	if strings.Contains(res.stderr, staff[49].email) || strings.Contains(res.stderr, staff[49].birth) {
		t.Errorf("the refused person's e-mail or birth date reached stderr")
	}

	emu := byExternalID(t, e.emu.people(t, e.company))
	if len(emu) != 99 {
		t.Errorf("%d people at the emulator, want 99", len(emu))
	}
	for i, p := range staff {
		got, ok := emu[p.id]
		switch {
		case i == 49 && ok:
			t.Errorf("the refused person %s exists at the emulator", p.id)
		case i == 49:
		case !ok || len(got.Grants) != 1 || got.Balance != p.wantBalance():
			t.Errorf("%s at the emulator: %+v (found %v), want one grant of %v", p.id, got, ok, p.wantBalance())
		}
	}
	calls := countOp(e.emu.requests(t), "createPeople")
	// 100 → 50 ok + 50 → 25 + 25 → ... down to P00050 alone: two calls per level.
	if calls < 3 || calls > 1+2*7 {
		t.Errorf("%d createPeople calls, want a bisection's (3 to 15)", calls)
	}

	if got := e.archived("processed"); len(got) != 4 { // the file, its JSON and HTML reports, and the rejects CSV of the refused person
		t.Fatalf("processed/ holds %v, want poison.csv and its reports", got)
	}
	rep := e.report("processed", "poison.csv")
	if rep.Outcome != "attention" || rep.Counts["created"] != 99 || rep.Counts["refused"] != 1 ||
		rep.Counts["notApplied"] != 0 || rep.Counts["calls"] != calls {
		t.Errorf("report: outcome %s, counts %v (the emulator saw %d calls)", rep.Outcome, rep.Counts, calls)
	}
	if len(rep.Rejections) != 1 || rep.Rejections[0].Line != 51 || rep.Rejections[0].Field != "addBalance" ||
		rep.Rejections[0].Reason != reason || rep.Rejections[0].Source != "poison.csv" {
		t.Errorf("report rejections %+v, want line 51, addBalance, %q", rep.Rejections, reason)
	}
	raw, err := os.ReadFile(filepath.Join(e.drop, "processed", "poison.csv.report.json"))
	if err != nil || !strings.Contains(string(raw), `"externalId": "P00050"`) {
		t.Errorf("the report does not name the refused person by externalId (%v)", err)
	}
	outcome, errText := e.lastRun()
	if outcome != "attention" || !strings.Contains(errText, "P00050") {
		t.Errorf("run record: %s %q", outcome, errText)
	}
	if n := e.count(`SELECT COUNT(*) FROM rejections WHERE line = 51 AND field = 'addBalance' AND reason = ?`, reason); n != 1 {
		t.Errorf("%d rejections recorded for the refused person, want 1", n)
	}
	if g := e.grants("not_applied"); len(g) != 1 || g[0].ExternalID != "P00050" {
		t.Errorf("not-applied grants %+v, want P00050's only", g)
	}
	if held := e.grants(); len(held) != 0 {
		t.Errorf("%d grants held", len(held))
	}

	e.mustRun(0, "run", "people")
	e.dropFile("poison-again.csv", export)
	e.mustRun(0, "run", "people")
	if got := countOp(e.emu.requests(t), "createPeople"); got != calls {
		t.Errorf("a rerun and the same file again made %d more calls, want none", got-calls)
	}
	if rep := e.report("processed", "poison-again.csv"); !rep.Duplicate {
		t.Errorf("the same bytes again: %+v, want a duplicate", rep)
	}
}
