package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hrsync/sources/scimsrc"
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

// TestExampleSCIM checks examples/scim.yaml as `hrsync config check` reads it: the SCIM listener
// and settle delay, one tenant fed by SCIM whose token file, written relative to the example's
// folder, is resolved there and holds a placeholder token.
func TestExampleSCIM(t *testing.T) {
	path := filepath.Join(examplesDir, "scim.yaml")
	cfg, err := Load(path, exampleEnv, testKinds, testDialects)
	if err != nil {
		t.Fatalf("examples/scim.yaml does not load: %v", err)
	}
	if cfg.SCIM.Listen == "" || cfg.SCIM.Listen == cfg.HTTP.Listen {
		t.Errorf("scim.listen = %q (http.listen %q), want a listener of its own", cfg.SCIM.Listen, cfg.HTTP.Listen)
	}
	if cfg.SCIM.Settle.Duration <= 0 {
		t.Errorf("scim.settle = %v", cfg.SCIM.Settle)
	}
	tenants := cfg.SCIMTenants()
	if len(tenants) != 1 {
		t.Fatalf("SCIMTenants = %d tenants, want 1", len(tenants))
	}
	o := optionsOf[*scimsrc.Options](t, tenants[0])
	dir, err := filepath.Abs(examplesDir)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(o.TokenFile) != dir {
		t.Errorf("token file %s, want one in the example's folder %s", o.TokenFile, dir)
	}
	tok, err := o.Token().Token(t.Context())
	if err != nil || len(tok) < 32 || !strings.Contains(string(tok), "NOT-A-SECRET") {
		t.Errorf("the example's token file holds %d bytes (%v), want a long placeholder that says it is not a secret", len(tok), err)
	}

	t.Run("a token file that cannot be read names the file and the field", func(t *testing.T) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir() // no token file there
		_, err = Load(writeFile(t, dir, "scim.yaml", string(data)), exampleEnv, testKinds, testDialects)
		ps := problemsOf(t, err)
		if !hasProblem(ps, "tenants[0].source.scim.tokenFile", "does not exist") || !strings.Contains(err.Error(), filepath.Join(dir, "scim.yaml")) {
			t.Errorf("want a problem at tenants[0].source.scim.tokenFile in %s, got %v", dir, err)
		}
	})
}
