package people_test

import (
	"strings"
	"testing"

	"hrsync/emulator"
	"hrsync/model"
	"hrsync/sync/people"
)

// TestPoisonPersonIsIsolated runs an export with one person the emulator
// refuses (a balance above its maximum) through RunOnce: the others are
// created once, the refused one is a rejected row with the platform's
// reason, the export is archived with outcome attention, the same bytes
// dropped again send nothing, and a later export that lists the person
// sends them again (refused again).
func TestPoisonPersonIsIsolated(t *testing.T) {
	e := newEnv(t)
	if _, err := e.emu.SetLimits(emulator.Limits{MaxBalance: 1000}); err != nil {
		t.Fatal(err)
	}
	rows := genPeople(7)
	rows[4].balance = "5000"
	f := e.export("a.csv", rows)

	rep, err := e.job(nil).RunOnce(t.Context(), feed(f), people.RunFlags{})
	if err != nil {
		t.Fatal(err)
	}
	ex := rep.Exports[0]
	if ex.Outcome != model.OutcomeAttention || rep.Outcome() != model.OutcomeAttention {
		t.Fatalf("outcome %s, want attention: %+v", ex.Outcome, ex)
	}
	for _, want := range []string{"6 people created", "1 person refused by the platform (400 invalid_input: addBalance: above the maximum of 1000): 000005"} {
		if !strings.Contains(ex.Cause, want) {
			t.Errorf("cause %q does not say %q", ex.Cause, want)
		}
	}
	if !strings.Contains(ex.Next, "fix the refused people") {
		t.Errorf("next %q", ex.Next)
	}
	if ex.Counts["created"] != 6 || ex.Counts["refused"] != 1 || ex.Counts["notApplied"] != 0 {
		t.Errorf("counts %v", ex.Counts)
	}
	if len(f.archived) != 1 || f.archived[0] != "processed" {
		t.Errorf("archived %v, want [processed]", f.archived)
	}
	want := model.Rejection{Source: "a.csv", Line: 6, Field: "addBalance",
		Reason: "refused by the platform: 400 invalid_input: addBalance: above the maximum of 1000"}
	if len(ex.Rejections) != 1 || ex.Rejections[0] != want {
		t.Errorf("report rejections %+v, want %+v", ex.Rejections, want)
	}
	stored, err := e.st.Rejections(t.Context(), ex.RunID)
	if err != nil || len(stored) != 1 || stored[0].Line != 6 || stored[0].Reason != want.Reason {
		t.Errorf("the run's rejections %+v (%v), want %+v", stored, err, want)
	}
	bal := e.balances()
	for _, p := range rows {
		_, exists := bal[p.id]
		if exists != (p.id != "000005") {
			t.Errorf("%s exists at the platform: %v", p.id, exists)
		}
	}
	if g := e.grants(model.GrantNotApplied); len(g) != 1 || g[0].ExternalID != "000005" {
		t.Errorf("not-applied grants %+v, want 000005's only", g)
	}
	calls := e.createCalls()

	t.Run("the same bytes dropped again send nothing", func(t *testing.T) {
		again := e.export("a-again.csv", rows)
		rep, err := e.job(nil).RunOnce(t.Context(), feed(again), people.RunFlags{})
		if err != nil {
			t.Fatal(err)
		}
		if ex := rep.Exports[0]; !ex.Duplicate || ex.Outcome != model.OutcomeOK || e.createCalls() != calls {
			t.Errorf("re-dropped: %+v; %d new calls", ex, e.createCalls()-calls)
		}
	})

	t.Run("a later export listing them sends them again", func(t *testing.T) {
		later := append(append([]person(nil), rows...), person{id: "000099", email: "n@example.com", first: "N", last: "N", start: "2026-11-01"})
		rep, err := e.job(nil).RunOnce(t.Context(), feed(e.export("b.csv", later)), people.RunFlags{})
		if err != nil {
			t.Fatal(err)
		}
		ex := rep.Exports[0]
		if ex.Outcome != model.OutcomeAttention || ex.Counts["created"] != 1 || ex.Counts["refused"] != 1 {
			t.Errorf("later export: %s %v %q", ex.Outcome, ex.Counts, ex.Cause)
		}
		if g := e.grants(model.GrantNotApplied); len(g) != 1 || g[0].Attempts < 3 {
			t.Errorf("not-applied grants %+v: want 000005's, sent again", g)
		}
	})

	t.Run("once the platform accepts them, they are created once", func(t *testing.T) {
		if _, err := e.emu.SetLimits(emulator.Limits{MaxBalance: 10000}); err != nil {
			t.Fatal(err)
		}
		moved := append([]person(nil), rows...)
		moved[0], moved[6] = moved[6], moved[0]
		rep, err := e.job(nil).RunOnce(t.Context(), feed(e.export("c.csv", moved)), people.RunFlags{})
		if err != nil {
			t.Fatal(err)
		}
		if ex := rep.Exports[0]; ex.Outcome != model.OutcomeOK || ex.Counts["created"] != 1 {
			t.Errorf("c.csv: %s %v %q", ex.Outcome, ex.Counts, ex.Cause)
		}
		if bal := e.balances(); bal["000005"] != 5000 {
			t.Errorf("000005's balance %g, want 5000", bal["000005"])
		}
		if g := e.grants(model.GrantNotApplied); len(g) != 0 {
			t.Errorf("grants still not applied: %+v", g)
		}
	})
}
