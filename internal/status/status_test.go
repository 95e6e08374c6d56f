package status

import (
	"context"
	"errors"
	"testing"

	"hrsync/config"
	"hrsync/internal/storetest"
)

// TestBuildSetsSourceProblemsAside checks, over a real SQLite state, that
// a tenant whose folder cannot be counted or whose source the
// configuration set aside shows its problem, never stopping the status,
// and that a tenant with a problem set aside is not read at all.
func TestBuildSetsSourceProblemsAside(t *testing.T) {
	st := storetest.SQLite(t).St
	tenants := []config.Tenant{
		{Name: "acme"},
		{Name: "globex", SourceProblems: []config.Problem{{Path: "tenants[1].source.sql.dsnEnv", Line: 9,
			Reason: "environment variable HR_DSN is not set"}}},
		{Name: "initech"},
	}
	count := func(_ context.Context, tn config.Tenant) (*Files, error) {
		switch tn.Name {
		case "acme":
			return nil, errors.New("sftp: connection refused")
		case "globex":
			t.Error("the folder of a tenant whose source was set aside was read")
		}
		return &Files{Waiting: 2}, nil
	}
	rep, err := Build(t.Context(), st, tenants, count)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	want := map[string]string{"acme": "sftp: connection refused",
		"globex": "source.sql.dsnEnv: environment variable HR_DSN is not set (line 9)", "initech": ""}
	for _, tn := range rep.Tenants {
		got := ""
		if len(tn.SourceProblems) > 0 {
			got = tn.SourceProblems[0]
		}
		if got != want[tn.Name] || len(tn.SourceProblems) > 1 {
			t.Errorf("tenant %s: source problems %q, want %q", tn.Name, tn.SourceProblems, want[tn.Name])
		}
	}
	if f := rep.Tenants[2].Files; f == nil || f.Waiting != 2 {
		t.Errorf("initech: files %+v, want 2 waiting", f)
	}
}
