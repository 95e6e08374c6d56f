package registry_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"hrsync/store"
	_ "hrsync/store/sqlite" // registers the sqlite dialect, as in cmd/hrsync

	"hrsync/config"
	"hrsync/model"
	"hrsync/sources"
	"hrsync/sources/registry"
	_ "hrsync/sources/registry/registrytest" // registers the test-only fixed kind
)

const fixedConfig = `
tenants:
  - name: acme
    companyId: 10000000-0000-4000-8000-000000000001
    collectionId: 20000000-0000-4000-8000-000000000002
    source:
      fixed:
        people:
          - {externalId: E1, email: ada@example.com, firstName: Ada, lastName: Lovelace}
          - {externalId: E2, email: not-an-email, firstName: Bob, lastName: Byte}
`

// TestRecipeNewKind: a kind registered from a test is configured by the
// config package and read through the registry, the path every real kind
// takes (config.Parse with registry.Kinds, then registry.Open and Feed).
func TestRecipeNewKind(t *testing.T) {
	noEnv := func(string) (string, bool) { return "", false }
	t.Run("configured and read", func(t *testing.T) {
		cfg, err := config.Parse([]byte(fixedConfig), t.TempDir(), noEnv, registry.Kinds{}, store.Dialects{})
		if err != nil {
			t.Fatalf("parse: %v", err)
		}
		src, err := registry.Open(context.Background(), cfg.Tenants[0].Source.Options, registry.Env{Tenant: "acme"})
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		exports, err := src.Feed(context.Background())
		if err != nil || len(exports) != 1 {
			t.Fatalf("feed: %d exports, %v", len(exports), err)
		}
		var accepted []string
		var rejected []int
		st, err := exports[0].Read(context.Background(), sources.Handler{
			Accept: func(p model.Person) error { accepted = append(accepted, p.ExternalID); return nil },
			Reject: func(r model.Rejection) error { rejected = append(rejected, r.Line); return nil },
		})
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if st.Rows != 2 || len(accepted) != 1 || accepted[0] != "E1" || len(rejected) != 1 || rejected[0] != 2 {
			t.Errorf("stats %+v, accepted %v, rejected lines %v; want E1 accepted, line 2 rejected", st, accepted, rejected)
		}
		if err := src.CheckRestore(context.Background(), "failed/x.csv"); !errors.Is(err, registry.ErrNoRestore) {
			t.Errorf("restore: %v, want ErrNoRestore", err)
		}
	})
	t.Run("its problems carry the configuration's path and line", func(t *testing.T) {
		bad := strings.Replace(fixedConfig, "        people:\n", "        bogus: 1\n        people:\n", 1)
		bad = bad[:strings.Index(bad, "        people:")] + "        people: []\n"
		_, err := config.Parse([]byte(bad), t.TempDir(), noEnv, registry.Kinds{}, store.Dialects{})
		var cerr *config.Error
		if !errors.As(err, &cerr) {
			t.Fatalf("parse: %v, want a *config.Error", err)
		}
		want := map[string]int{"tenants[0].source.fixed.bogus": 8, "tenants[0].source.fixed.people": 9}
		for _, p := range cerr.Problems {
			if line, ok := want[p.Path]; ok && p.Line == line {
				delete(want, p.Path)
			}
		}
		if len(want) > 0 {
			t.Errorf("problems %v: missing %v", cerr.Problems, want)
		}
	})
}
