package runner

import (
	"testing"

	"hrsync/model"
	"hrsync/store"
)

func TestWorstOfCycles(t *testing.T) {
	run := func(id, cycle string, o model.RunOutcome) store.RunRecord {
		return store.RunRecord{Run: store.Run{ID: id, Job: model.JobPeople, Tenant: "acme", Cycle: cycle}, Outcome: o}
	}
	// Newest first: cycle c2 (three exports: ok, failed, failed), a run
	// of no cycle, cycle c1 (attention, ok).
	runs := []store.RunRecord{
		run("c2-3", "c2", model.OutcomeOK),
		run("c2-2", "c2", model.OutcomeFailed),
		run("c2-1", "c2", model.OutcomeFailed),
		run("lone", "", model.OutcomeOK),
		run("c1-2", "c1", model.OutcomeOK),
		run("c1-1", "c1", model.OutcomeAttention),
	}
	var got []string
	for _, r := range WorstOfCycles(runs) {
		got = append(got, r.ID)
	}
	// Each cycle's worst, the first recorded on a tie, where its newest run was.
	want := []string{"c2-1", "lone", "c1-1"}
	if len(got) != len(want) {
		t.Fatalf("kept %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("kept %v, want %v", got, want)
		}
	}
}
