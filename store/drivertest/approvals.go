package drivertest

import (
	"errors"
	"testing"

	"hrsync/model"
	"hrsync/store"
)

// testSafeguardStopApprovedOnce: a safeguard stop records its export's hash
// with its stops in FinishRun; an approval is used once, by the run that
// processes the export, and only for a hash a safeguard stopped; a new stop
// of the same content may be approved again.
func testSafeguardStopApprovedOnce(t *testing.T, d Backend) {
	eachStore(t, d, func(t *testing.T, s *store.Store) {
		finish := func(id string, out model.RunOutcome, sha string, file store.SourceOutcome, stops []string, a *store.Approval) error {
			must(t, s.StartRun(ctx(t), store.Run{ID: id, Job: model.JobPeople, Tenant: "acme", StartedAt: at(1, 0)}))
			return s.FinishRun(ctx(t), store.RunResult{ID: id, Outcome: out, Stops: stops, Approval: a, FinishedAt: at(1, 60),
				SourceFile: &store.SourceFile{SHA256: sha, Name: "week2.csv", Rows: 10, Outcome: file}})
		}
		if _, ok, err := s.SafeguardStopByHash(ctx(t), "acme", "sha-a"); err != nil || ok {
			t.Fatalf("stop before any run: ok %v, err %v", ok, err)
		}
		must(t, finish("stop-1", model.OutcomeSafeguard, "sha-a", store.SourceFailed, []string{"3 people would leave"}, nil))
		st, ok, err := s.SafeguardStopByHash(ctx(t), "acme", "sha-a")
		must(t, err)
		if !ok || st.RunID != "stop-1" || st.Approved || len(st.Stops) != 1 || st.Stops[0] != "3 people would leave" ||
			!st.StoppedAt.Equal(at(1, 60)) {
			t.Fatalf("stop = %+v, ok %v", st, ok)
		}
		if _, ok, _ := s.SafeguardStopByHash(ctx(t), "other", "sha-a"); ok {
			t.Fatal("another tenant sees the stop")
		}
		// A file no safeguard stopped cannot be approved; nothing of its run is committed.
		err = finish("never-stopped", model.OutcomeOK, "sha-b", store.SourceProcessed, nil, &store.Approval{By: "hr"})
		wantErr(t, err, store.ErrNotApprovable)
		if _, ok, _ := s.SourceFileByHash(ctx(t), "acme", "sha-b"); ok {
			t.Fatal("a refused approval recorded its file")
		}
		must(t, finish("approved", model.OutcomeOK, "sha-a", store.SourceProcessed, nil, &store.Approval{By: "hr-admin"}))
		st, _, err = s.SafeguardStopByHash(ctx(t), "acme", "sha-a")
		must(t, err)
		if !st.Approved || st.ApprovedRun != "approved" || st.ApprovedBy != "hr-admin" || !st.ApprovedAt.Equal(at(1, 60)) {
			t.Fatalf("approved stop = %+v", st)
		}
		// Used once: the same content again is refused (processed already).
		err = finish("again", model.OutcomeOK, "sha-a", store.SourceProcessed, nil, &store.Approval{By: "hr-admin"})
		if !errors.Is(err, store.ErrFileProcessed) && !errors.Is(err, store.ErrNotApprovable) {
			t.Fatalf("second approval: %v", err)
		}
		// A new stop of content stopped and approved before (a failed
		// record replaced) is a new stop, to approve again.
		must(t, finish("stop-c1", model.OutcomeSafeguard, "sha-c", store.SourceFailed, []string{"x"}, nil))
		must(t, finish("stop-c2", model.OutcomeSafeguard, "sha-c", store.SourceFailed, []string{"y"}, nil))
		st, _, err = s.SafeguardStopByHash(ctx(t), "acme", "sha-c")
		must(t, err)
		if st.RunID != "stop-c2" || st.Approved || st.Stops[0] != "y" {
			t.Fatalf("stop recorded again = %+v", st)
		}
	})
}
