package config

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"hrsync/sources/scimsrc"
)

// scimTenant is a configuration of one tenant fed by SCIM with the given
// keys under source.scim.
func scimTenant(keys string) string {
	return `
tenants:
  - name: acme
    companyId: 10000000-0000-4000-8000-000000000001
    collectionId: 20000000-0000-4000-8000-000000000002
    source:
      scim:
        ` + keys + "\n"
}

// TestSCIMSource: the scim kind's section. Its token file is taken from the
// configuration's folder and must hold a token; the options give the SCIM
// endpoint the tenant's token, read from the file; keys are checked.
func TestSCIMSource(t *testing.T) {
	t.Run("token file beside the configuration", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, "acme.token", "the-token\n")
		cfg, err := Load(writeFile(t, dir, "c.yaml", scimTenant("tokenFile: acme.token")), noEnv, testKinds, testDialects)
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		tn := cfg.Tenants[0]
		o := optionsOf[*scimsrc.Options](t, tn)
		if tn.Source.Kind() != "scim" || o.TokenFile != filepath.Join(dir, "acme.token") {
			t.Fatalf("kind %s, token file %s", tn.Source.Kind(), o.TokenFile)
		}
		tok, ok := scimsrc.TokenOf(tn.Source.Options)
		if !ok {
			t.Fatal("TokenOf: not a scim tenant")
		}
		if b, err := tok.Token(context.Background()); err != nil || string(b) != "the-token" {
			t.Fatalf("token %q, %v", b, err)
		}
		if strings.Contains(o.String(), "the-token") {
			t.Fatalf("the options print the token: %s", o.String())
		}
	})
	t.Run("a tenant fed otherwise has no token", func(t *testing.T) {
		if _, ok := scimsrc.TokenOf(mustLoad(t, minimal, nil).Tenants[0].Source.Options); ok {
			t.Fatal("a drop folder tenant has a SCIM token")
		}
	})
	t.Run("problems", func(t *testing.T) {
		for _, tt := range []struct{ name, keys, path, reason string }{
			{"no token file", "maxBalance: 10", "tenants[0].source.scim.tokenFile", "required"},
			{"unknown key", "tokenFile: t\n        dir: d", "tenants[0].source.scim.dir", "unknown key"},
			{"negative balance", "tokenFile: acme.token\n        maxBalance: -1", "tenants[0].source.scim.maxBalance", "negative"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				dir := t.TempDir()
				writeFile(t, dir, "acme.token", "tok")
				_, err := Load(writeFile(t, dir, "c.yaml", scimTenant(tt.keys)), noEnv, testKinds, testDialects)
				if ps := problemsOf(t, err); !hasProblem(ps, tt.path, tt.reason) {
					t.Fatalf("want %s: %s, got\n%v", tt.path, tt.reason, err)
				}
			})
		}
		dir := t.TempDir()
		writeFile(t, dir, "empty.token", " \n")
		_, err := Load(writeFile(t, dir, "c.yaml", scimTenant("tokenFile: empty.token")), noEnv, testKinds, testDialects)
		if ps := problemsOf(t, err); !hasProblem(ps, "tenants[0].source.scim.tokenFile", "empty") {
			t.Fatalf("an empty token file: %v", err)
		}
	})
}
