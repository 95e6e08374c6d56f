package config

import (
	"strings"
	"testing"
	"time"
)

func TestSCIMSection(t *testing.T) {
	t.Run("off by default, settle 60s", func(t *testing.T) {
		cfg := mustLoad(t, minimal, nil)
		if cfg.SCIM.Listen != "" || cfg.SCIM.Settle.Duration != time.Minute {
			t.Errorf("scim = %+v, want no listener and a settle of 60s", cfg.SCIM)
		}
		if got := cfg.SCIMTenants(); len(got) != 0 {
			t.Errorf("SCIMTenants = %v, want none (the tenant is fed by a drop folder)", got)
		}
	})
	t.Run("a listener with no tenant fed by scim", func(t *testing.T) {
		wantOnlyProblem(t, minimal+"scim:\n  listen: 127.0.0.1:8090\n", "scim.listen", "no tenant's source is scim")
	})
	t.Run("not host:port", func(t *testing.T) {
		for _, bad := range []string{"8090", "127.0.0.1", "http://127.0.0.1:8090"} {
			_, err := load(t, minimal+"scim:\n  listen: \""+bad+"\"\n", nil)
			if ps := problemsOf(t, err); !hasProblem(ps, "scim.listen", "must be host:port") {
				t.Errorf("%q: %v, want a problem at scim.listen", bad, err)
			}
		}
	})
	t.Run("the metrics listener's address", func(t *testing.T) {
		_, err := load(t, minimal+"http:\n  listen: :9090\nscim:\n  listen: :9090\n", nil)
		if ps := problemsOf(t, err); !hasProblem(ps, "scim.listen", "is also http.listen") {
			t.Errorf("%v, want a problem at scim.listen", err)
		}
	})
	t.Run("settle must be a positive duration", func(t *testing.T) {
		wantOnlyProblem(t, minimal+"scim:\n  settle: 0s\n", "scim.settle", "must be greater than 0")
		wantOnlyProblem(t, minimal+"scim:\n  settle: -5s\n", "scim.settle", "must be greater than 0")
		wantOnlyProblem(t, minimal+"scim:\n  settle: soon\n", "scim.settle", "is not a duration")
	})
	t.Run("the problem names the file and the line", func(t *testing.T) {
		_, err := load(t, minimal+"scim:\n  settle: 0s\n", nil)
		if err == nil || !strings.Contains(err.Error(), "hrsync.yaml") || !strings.Contains(err.Error(), "(line 10)") {
			t.Errorf("err = %v, want the file and line 10", err)
		}
	})
}
