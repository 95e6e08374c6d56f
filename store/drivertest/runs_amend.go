package drivertest

import (
	"testing"

	"hrsync/model"
	"hrsync/store"
)

func testAmendRun(t *testing.T, d Backend) {
	eachStore(t, d, func(t *testing.T, s *store.Store) {
		must(t, s.StartRun(ctx(t), store.Run{ID: "run-amend", Job: model.JobPeople, Tenant: "acme", StartedAt: at(1, 0)}))
		wantErr(t, s.AmendRun(ctx(t), "run-amend", model.OutcomeAttention, "x"), store.ErrRunState)
		must(t, s.FinishRun(ctx(t), store.RunResult{ID: "run-amend", Outcome: model.OutcomeOK,
			Counts: map[string]int{"created": 2}, FinishedAt: at(1, 30)}))
		must(t, s.AmendRun(ctx(t), "run-amend", model.OutcomeAttention, "it changed after it was read"))
		runs, err := s.LastRuns(ctx(t), 1)
		must(t, err)
		r := runs[0]
		if r.Outcome != model.OutcomeAttention || r.Error != "it changed after it was read" || r.Counts["created"] != 2 ||
			!r.FinishedAt.Equal(at(1, 30)) {
			t.Fatalf("amended run = %+v", r)
		}
		wantErr(t, s.AmendRun(ctx(t), "no-such-run", model.OutcomeAttention, "x"), store.ErrNotFound)
		if err := s.AmendRun(ctx(t), "run-amend", model.OutcomeRunning, ""); err == nil {
			t.Error("amended back to running")
		}
	})
}

func testSetRunReports(t *testing.T, d Backend) {
	eachStore(t, d, func(t *testing.T, s *store.Store) {
		must(t, s.StartRun(ctx(t), store.Run{ID: "run-reports", Job: model.JobPeople, Tenant: "acme", StartedAt: at(1, 0)}))
		wantErr(t, s.SetRunReports(ctx(t), "run-reports", []string{"processed/a.csv.report.html"}), store.ErrRunState)
		must(t, s.FinishRun(ctx(t), store.RunResult{ID: "run-reports", Outcome: model.OutcomeOK, FinishedAt: at(1, 30)}))
		runs, err := s.LastRuns(ctx(t), 1)
		must(t, err)
		if len(runs[0].Reports) != 0 {
			t.Errorf("a run without reports lists %q", runs[0].Reports)
		}
		names := []string{"processed/a.csv.report.html", "processed/a.csv.report.json"}
		must(t, s.SetRunReports(ctx(t), "run-reports", names))
		runs, err = s.LastRuns(ctx(t), 1)
		must(t, err)
		if r := runs[0]; len(r.Reports) != 2 || r.Reports[0] != names[0] || r.Reports[1] != names[1] || r.Outcome != model.OutcomeOK {
			t.Errorf("run = %+v, want its reports %q", r, names)
		}
		wantErr(t, s.SetRunReports(ctx(t), "no-such-run", names), store.ErrNotFound)
	})
}

func testLateArchive(t *testing.T, d Backend) {
	eachStore(t, d, func(t *testing.T, s *store.Store) {
		must(t, s.StartRun(ctx(t), store.Run{ID: "run-late", Job: model.JobPeople, Tenant: "acme", StartedAt: at(1, 0)}))
		report := []byte(`{"runId":"run-late","people":{"added":[{"externalId":"E1"}]}}`)
		wantErr(t, s.KeepUnarchivedReport(ctx(t), "run-late", report), store.ErrRunState)
		must(t, s.FinishRun(ctx(t), store.RunResult{ID: "run-late", Outcome: model.OutcomeOK, FinishedAt: at(1, 30)}))
		if _, ok, err := s.UnarchivedReport(ctx(t), "run-late"); err != nil || ok {
			t.Fatalf("a run that kept nothing: ok %v, err %v", ok, err)
		}
		must(t, s.KeepUnarchivedReport(ctx(t), "run-late", report))
		got, ok, err := s.UnarchivedReport(ctx(t), "run-late")
		must(t, err)
		if !ok || string(got) != string(report) {
			t.Fatalf("kept report = %q (ok %v), want %q", got, ok, report)
		}
		names := []string{"processed/a.csv.report.html", "processed/a.csv.report.json"}
		must(t, s.ArchivedLate(ctx(t), "run-late", names))
		if _, ok, err := s.UnarchivedReport(ctx(t), "run-late"); err != nil || ok {
			t.Fatalf("after the late archive the report is still kept: ok %v, err %v", ok, err)
		}
		runs, err := s.LastRuns(ctx(t), 1)
		must(t, err)
		if r := runs[0]; len(r.Reports) != 2 || r.Reports[0] != names[0] || r.Outcome != model.OutcomeOK {
			t.Errorf("run = %+v, want its reports %q", r, names)
		}
		if _, ok, err := s.UnarchivedReport(ctx(t), "no-such-run"); err != nil || ok {
			t.Errorf("an unknown run: ok %v, err %v", ok, err)
		}
		wantErr(t, s.KeepUnarchivedReport(ctx(t), "no-such-run", report), store.ErrNotFound)
		wantErr(t, s.ArchivedLate(ctx(t), "no-such-run", names), store.ErrNotFound)
	})
}
