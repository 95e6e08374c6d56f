package main_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// statusWidth is the most columns a line of `hrsync status` takes.
const statusWidth = 100

// TestE2EStatusAnswersWithUnusableSources: with one tenant's drop folder
// unusable and another's SQL DSN variable not set, status still shows the
// history (the people run that failed on the folder included) and each
// tenant's source problem, exits 0, and fits 100 columns; --tenant adds
// the full text; -o json has the problems per tenant.
func TestE2EStatusAnswersWithUnusableSources(t *testing.T) {
	t.Parallel()
	e := newEnv(t, configOptions{})
	e.dropFile("employees.csv", csvExport(genPeople(0, 3)))
	e.mustRun(0, "run", "people")
	// Root, whom a mode 000 does not stop, meets a file where the folder was.
	problem := "is not a folder"
	if err := os.RemoveAll(e.drop); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.drop, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		problem = "permission denied"
		if err := os.Remove(e.drop); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(e.drop, 0); err != nil {
			t.Fatal(err)
		}
	}
	e.mustRun(1, "run", "people")
	e.editConfig("tenants:\n", `tenants:
  - name: globex-with-a-tenant-name-far-longer-than-any-column
    companyId: `+e.company+`
    collectionId: `+e.coll+`
    source:
      sql:
        driver: postgres
        dsnEnv: HRSYNC_TEST_UNSET_DSN
        query: SELECT 1
        columns: {externalId: a, email: b, firstName: c, lastName: d}
`)
	res := e.mustRun(0, "status")
	for i, line := range strings.Split(res.stdout, "\n") {
		if n := utf8.RuneCountInString(line); n > statusWidth {
			t.Errorf("status line %d is %d columns wide: %q", i+1, n, line)
		}
	}
	for _, want := range []string{"people  failed", problem, "source.sql.dsnEnv: ", "is not set (line ", "PROBLEM"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("status does not show %q:\n%s", want, res.stdout)
		}
	}
	detail := e.mustRun(0, "status", "--tenant", tenantName)
	if !strings.Contains(detail.stdout, "cause: ") || !strings.Contains(detail.stdout, "source of "+tenantName+": ") {
		t.Errorf("status --tenant shows no details:\n%s", detail.stdout)
	}
	var st struct {
		Runs []struct {
			Tenant, Job, Outcome string
		} `json:"runs"`
		Tenants []struct {
			Name           string   `json:"name"`
			SourceProblems []string `json:"sourceProblems"`
		} `json:"tenants"`
	}
	out := e.mustRun(0, "status", "-o", "json")
	if err := json.Unmarshal([]byte(out.stdout), &st); err != nil {
		t.Fatalf("status -o json: %v\n%s", err, out.stdout)
	}
	if len(st.Runs) != 1 || st.Runs[0].Outcome != "failed" {
		t.Errorf("status -o json runs = %+v, want the failed people run", st.Runs)
	}
	if len(st.Tenants) != 2 {
		t.Fatalf("status -o json tenants = %+v", st.Tenants)
	}
	for _, tn := range st.Tenants {
		if len(tn.SourceProblems) != 1 || !strings.Contains(tn.SourceProblems[0], problem) &&
			!strings.Contains(tn.SourceProblems[0], "HRSYNC_TEST_UNSET_DSN is not set") {
			t.Errorf("tenant %s: source problems %q, want one", tn.Name, tn.SourceProblems)
		}
	}
}
