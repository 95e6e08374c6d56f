package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hrsync/sources/scim/directory"
	"hrsync/store"
)

// TestSCIMTenantSafeguardLiftedByCLI: through the binary, a tenant whose
// source is the scim kind. The users its identity provider pushed (written
// here straight into the state's directory, as the SCIM endpoint writes
// them) are created once with the default balance by `run people`; when
// most of them are deactivated, every run stops on the safeguard (exit 3)
// with a last line that says to check the identity provider's changes and
// gives the override command; `run people --tenant acme
// --override-safeguards` applies the departures; `plan` shows the
// snapshot by name with the safeguard it trips.
func TestSCIMTenantSafeguardLiftedByCLI(t *testing.T) {
	e := newEnv(t, configOptions{})
	cfg, err := os.ReadFile(e.config)
	if err != nil {
		t.Fatal(err)
	}
	csvBlock := "      csv:\n        dir: " + e.drop + "\n        stableFor: 1ms\n"
	if !strings.Contains(string(cfg), csvBlock) {
		t.Fatalf("the configuration has no drop folder block to replace:\n%s", cfg)
	}
	cfg = []byte(strings.Replace(string(cfg), csvBlock, "      scim:\n        tokenFile: acme.token\n", 1))
	if err := os.WriteFile(e.config, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.dir, "acme.token"), []byte("scim-token-of-acme\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.Context(), "sqlite:"+filepath.Join(e.dir, "state.db"), store.Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	dir, w := st.SCIMDirectory(), directory.Write{Tenant: tenantName, Actor: "scim-token:acme"}
	ids := make([]string, 0, 6)
	for i := 1; i <= 6; i++ {
		u, err := dir.Create(t.Context(), w, directory.User{ExternalID: fmt.Sprintf("P%05d", 9000+i),
			UserName: fmt.Sprintf("scim%d@acme.example", i), Active: true, GivenName: "Scim", FamilyName: fmt.Sprintf("User%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, u.ID)
	}

	e.mustRun(0, "run", "people")
	people := e.emu.people(t, e.company)
	if len(people) != 6 {
		t.Fatalf("%d people on the platform, want the 6 users", len(people))
	}
	for _, p := range people {
		if len(p.Grants) != 1 || p.Balance != 25 {
			t.Fatalf("%s: balance %v from %d grants, want 25 once", p.ExternalID, p.Balance, len(p.Grants))
		}
	}

	for _, id := range ids[:4] {
		if _, err := dir.Update(t.Context(), w, id, func(u directory.User) (directory.User, error) { u.Active = false; return u, nil }); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		res := e.mustRun(3, "run", "people")
		last := lastLine(t, res)
		for _, want := range []string{"identity provider", "hrsync run people", "--tenant acme", "--override-safeguards"} {
			if !strings.Contains(last.Msg, want) {
				t.Fatalf("the last line does not say %q: %q", want, last.Msg)
			}
		}
		if n := e.count("SELECT COUNT(*) FROM people WHERE departed_at IS NOT NULL"); n != 0 {
			t.Fatalf("%d people departed while the safeguard stops the job", n)
		}
	}
	if res := e.mustRun(0, "plan"); !strings.Contains(res.stdout, "export scim:acme@10") || !strings.Contains(res.stdout, "SAFEGUARD maxDepartedRatio") {
		t.Fatalf("plan does not show the directory's snapshot and the safeguard it trips:\n%s", res.stdout)
	}

	e.mustRun(0, "run", "people", "--tenant", tenantName, "--override-safeguards")
	if n := e.count("SELECT COUNT(*) FROM people WHERE departed_at IS NOT NULL"); n != 4 {
		t.Fatalf("%d people departed after the override, want 4", n)
	}
	for _, p := range e.emu.people(t, e.company) {
		if len(p.Grants) != 1 {
			t.Fatalf("%s granted %d times, want once", p.ExternalID, len(p.Grants))
		}
	}
}
