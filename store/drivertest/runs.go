package drivertest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"hrsync/model"
	"hrsync/store"
)

func rejections(n int, source string) []model.Rejection {
	out := make([]model.Rejection, n)
	for i := range out {
		// Lines in reverse order: Rejections must sort them.
		out[i] = model.Rejection{Source: source, Line: n - i + 1, Field: "email", Reason: fmt.Sprintf("reason %d", n-i+1)}
	}
	return out
}

func testRuns(t *testing.T, d Backend) {
	eachStore(t, d, func(t *testing.T, s *store.Store) {
		testRunsFinish(t, s)
		testRunsLaterAndOnce(t, s)
	})
}

func testLastGoodImport(t *testing.T, d Backend) {
	eachStore(t, d, func(t *testing.T, s *store.Store) {
		day := 0
		finish := func(t *testing.T, tenant string, dry bool, out model.RunOutcome, rows *int, file *store.SourceFile) {
			t.Helper()
			day++
			id := fmt.Sprintf("%s-%d", tenant, day)
			must(t, s.StartRun(ctx(t), store.Run{ID: id, Job: model.JobPeople, Tenant: tenant, DryRun: dry, StartedAt: at(day, 0)}))
			must(t, s.FinishRun(ctx(t), store.RunResult{ID: id, Outcome: out, SourceRows: rows, SourceFile: file,
				FinishedAt: at(day, 0).Add(time.Minute)}))
		}
		n := func(v int) *int { return &v }
		t.Run("none before the first good import", func(t *testing.T) {
			finish(t, "lgi", false, model.OutcomeFailed, n(900), nil)
			if _, ok, err := s.LastGoodImport(ctx(t), "lgi"); err != nil || ok {
				t.Fatalf("ok = %v, err = %v", ok, err)
			}
		})
		t.Run("a processed file's rows", func(t *testing.T) {
			finish(t, "lgi", false, model.OutcomeOK, nil,
				&store.SourceFile{SHA256: "f1", Name: "f1.csv", Rows: 1000, Outcome: store.SourceProcessed})
			rows, ok, err := s.LastGoodImport(ctx(t), "lgi")
			must(t, err)
			if !ok || rows != 1000 {
				t.Fatalf("rows = %d, ok = %v", rows, ok)
			}
		})
		t.Run("failed, safeguarded, dry and sourceless runs do not count", func(t *testing.T) {
			finish(t, "lgi", false, model.OutcomeSafeguard, n(10), nil)
			finish(t, "lgi", false, model.OutcomeFailed, n(20), nil)
			finish(t, "lgi", true, model.OutcomeOK, n(30), nil)
			finish(t, "lgi", false, model.OutcomeOK, nil, nil)
			rows, ok, err := s.LastGoodImport(ctx(t), "lgi")
			must(t, err)
			if !ok || rows != 1000 {
				t.Fatalf("rows = %d, ok = %v", rows, ok)
			}
		})
		t.Run("a SQL import that needs attention counts", func(t *testing.T) {
			finish(t, "lgi", false, model.OutcomeAttention, n(1100), nil)
			rows, ok, err := s.LastGoodImport(ctx(t), "lgi")
			must(t, err)
			if !ok || rows != 1100 {
				t.Fatalf("rows = %d, ok = %v", rows, ok)
			}
			if _, ok, err := s.LastGoodImport(ctx(t), "someone-else"); err != nil || ok {
				t.Fatalf("another tenant: ok = %v, err = %v", ok, err)
			}
		})
	})
}

func testRunsLaterAndOnce(t *testing.T, s *store.Store) {
	t.Run("a failed file may be processed later", func(t *testing.T) {
		must(t, s.StartRun(ctx(t), store.Run{ID: "run-c", Job: model.JobPeople, Tenant: "acme", StartedAt: at(3, 0)}))
		must(t, s.FinishRun(ctx(t), store.RunResult{ID: "run-c", Outcome: model.OutcomeFailed, Err: errors.New("boom"),
			SourceFile: &store.SourceFile{SHA256: "sha-c", Name: "c.csv", Rows: 10, Outcome: store.SourceFailed}}))
		must(t, s.StartRun(ctx(t), store.Run{ID: "run-d", Job: model.JobPeople, Tenant: "acme", StartedAt: at(4, 0)}))
		must(t, s.FinishRun(ctx(t), store.RunResult{ID: "run-d", Outcome: model.OutcomeOK,
			SourceFile: &store.SourceFile{SHA256: "sha-c", Name: "c.csv", Rows: 10, Outcome: store.SourceProcessed}}))
		f, ok, err := s.SourceFileByHash(ctx(t), "acme", "sha-c")
		must(t, err)
		if !ok || f.Outcome != store.SourceProcessed || f.RunID != "run-d" {
			t.Fatalf("source file = %+v", f)
		}
	})

	t.Run("a run is finished once, and must exist", func(t *testing.T) {
		wantErr(t, s.FinishRun(ctx(t), store.RunResult{ID: "run-d", Outcome: model.OutcomeOK}), store.ErrRunState)
		wantErr(t, s.FinishRun(ctx(t), store.RunResult{ID: "nope", Outcome: model.OutcomeOK}), store.ErrNotFound)
		if err := s.FinishRun(ctx(t), store.RunResult{ID: "run-d", Outcome: model.OutcomeRunning}); err == nil {
			t.Fatal("outcome running accepted")
		}
		if err := s.StartRun(ctx(t), store.Run{ID: "run-d", Job: model.JobPeople, Tenant: "acme"}); err == nil {
			t.Fatal("duplicate run id accepted")
		}
	})

	t.Run("last runs are newest first and limited", func(t *testing.T) {
		runs, err := s.LastRuns(ctx(t), 2)
		must(t, err)
		if len(runs) != 2 || runs[0].ID != "run-d" || runs[1].ID != "run-c" {
			t.Fatalf("runs = %v", runs)
		}
	})

	t.Run("a run of any registered job's name is recorded, with no migration", func(t *testing.T) {
		must(t, s.StartRun(ctx(t), store.Run{ID: "run-x", Job: "payroll", Tenant: "acme"}))
		must(t, s.FinishRun(ctx(t), store.RunResult{ID: "run-x", Outcome: model.OutcomeOK, Counts: map[string]int{"paid": 3}}))
		runs, err := s.LastRuns(ctx(t), 1)
		must(t, err)
		if len(runs) != 1 || runs[0].ID != "run-x" || runs[0].Job != "payroll" || runs[0].Outcome != model.OutcomeOK || runs[0].Counts["paid"] != 3 {
			t.Fatalf("runs = %v", runs)
		}
	})
}

func testRunsFinish(t *testing.T, s *store.Store) {
	t.Run("start, finish with rejections and a source file, read back", func(t *testing.T) {
		must(t, s.StartRun(ctx(t), store.Run{ID: "run-a", Job: model.JobPeople, Tenant: "acme", StartedAt: at(1, 0)}))
		rows := 1200
		file := &store.SourceFile{SHA256: "sha-a", Name: "people.csv", Size: 4096, Rows: rows, Rejected: 1201,
			Outcome: store.SourceProcessed}
		must(t, s.FinishRun(ctx(t), store.RunResult{
			ID: "run-a", Outcome: model.OutcomeAttention, Counts: map[string]int{"new": 3, "rejected": 1201},
			Err: errors.New("1201 rows rejected"), Rejections: rejections(1201, "people.csv"), SourceFile: file,
			FinishedAt: at(1, 30),
		}))
		checkRunAWritten(t, s, rows)
		checkRunAListed(t, s, rows)
	})

	testRunsFinishAtomic(t, s)
}

func testRunsFinishAtomic(t *testing.T, s *store.Store) {
	t.Run("FinishRun is atomic: a refused source file leaves outcome and rejections unwritten", func(t *testing.T) {
		must(t, s.StartRun(ctx(t), store.Run{ID: "run-b", Job: model.JobPeople, Tenant: "acme", StartedAt: at(2, 0)}))
		err := s.FinishRun(ctx(t), store.RunResult{
			ID: "run-b", Outcome: model.OutcomeOK, Rejections: rejections(3, "again.csv"),
			SourceFile: &store.SourceFile{SHA256: "sha-a", Name: "again.csv", Rows: 5, Outcome: store.SourceProcessed},
		})
		wantErr(t, err, store.ErrFileProcessed)
		rej, err := s.Rejections(ctx(t), "run-b")
		must(t, err)
		if len(rej) != 0 {
			t.Fatalf("%d rejections committed by a failed FinishRun", len(rej))
		}
		runs, err := s.LastRuns(ctx(t), 1)
		must(t, err)
		if runs[0].ID != "run-b" || runs[0].Outcome != model.OutcomeRunning || !runs[0].FinishedAt.IsZero() {
			t.Fatalf("run after a failed FinishRun = %+v", runs[0])
		}
		f, _, err := s.SourceFileByHash(ctx(t), "acme", "sha-a")
		must(t, err)
		if f.RunID != "run-a" || f.Name != "people.csv" {
			t.Fatalf("source file overwritten: %+v", f)
		}
		// The run can still be finished, without the duplicate file.
		must(t, s.FinishRun(ctx(t), store.RunResult{ID: "run-b", Outcome: model.OutcomeOK}))
	})
}

func checkRunAListed(t *testing.T, s *store.Store, rows int) {
	runs, err := s.LastRuns(ctx(t), 5)
	must(t, err)
	if len(runs) != 1 {
		t.Fatalf("runs = %+v", runs)
	}
	r := runs[0]
	if r.ID != "run-a" || r.Job != model.JobPeople || r.Tenant != "acme" || r.Outcome != model.OutcomeAttention ||
		r.Counts["new"] != 3 || r.Error != "1201 rows rejected" || r.SourceRows == nil || *r.SourceRows != rows ||
		!r.StartedAt.Equal(at(1, 0)) || !r.FinishedAt.Equal(at(1, 30)) || r.DryRun {
		t.Fatalf("run = %+v", r)
	}
}

func checkRunAWritten(t *testing.T, s *store.Store, rows int) {
	rej, err := s.Rejections(ctx(t), "run-a")
	must(t, err)
	if len(rej) != 1201 || rej[0].Line != 2 || rej[0].Reason != "reason 2" || rej[1200].Line != 1202 ||
		rej[0].Source != "people.csv" || rej[0].Field != "email" {
		t.Fatalf("rejections: %d, first %+v", len(rej), rej[0])
	}
	f, ok, err := s.SourceFileByHash(ctx(t), "acme", "sha-a")
	must(t, err)
	if !ok || f.Name != "people.csv" || f.Size != 4096 || f.Rows != rows || f.Rejected != 1201 ||
		f.Outcome != store.SourceProcessed || f.RunID != "run-a" || f.Tenant != "acme" || !f.ProcessedAt.Equal(at(1, 30)) {
		t.Fatalf("source file = %+v, %v", f, ok)
	}
	if _, ok, err := s.SourceFileByHash(ctx(t), "other", "sha-a"); err != nil || ok {
		t.Fatalf("hash found for another tenant (%v)", err)
	}
}
