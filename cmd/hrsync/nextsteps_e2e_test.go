package main_test

import (
	"encoding/json"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tokenNextStep is the next step of every job whose token the platform refused.
const tokenNextStep = "check HRSYNC_API_TOKEN (or api.tokenFile)"

// TestE2ENextStepsOfARefusedToken: under a refused token (401), people,
// personalize, grants and orders each fail with the same next step, in
// the last line and in the JSON summary's next.
func TestE2ENextStepsOfARefusedToken(t *testing.T) {
	t.Parallel()
	e := newPersonalizeEnv(t)
	e.addGrants(e2eGrantRules)
	// New hires to personalize, and people of earlier years the Lisbon
	// campaign of 2026-06-12 grants.
	staff := append(newHires(5), genPeople(100, 140)...)
	e.dropFile("staff-1.csv", csvExport(staff))
	e.mustRun(0, "run", "people")
	if p := e.planGrants("2026-06-14"); len(p.Due) == 0 {
		t.Fatal("no grant is due: the grants job would make no call")
	}
	e.dropFile("staff-2.csv", csvExport(append(staff, genPeople(200, 203)...)))
	wrong := []string{"HRSYNC_API_TOKEN=not-the-token"}
	for _, args := range [][]string{{"run", "people"}, {"run", "personalize"}, {"run", "grants", "--date", "2026-06-14"}, {"run", "orders"}} {
		t.Run(args[1], func(t *testing.T) {
			res := e.runEnv(wrong, append(args, "-o", "json")...)
			last := lastLine(t, res)
			if res.code != 1 || last.Outcome != "failed" || !strings.Contains(last.Msg, "; "+tokenNextStep) {
				t.Errorf("want exit 1 and the last line ending with %q: %s", tokenNextStep, res)
			}
			var sum struct {
				Cycles []struct {
					Next string `json:"next"`
				} `json:"cycles"`
			}
			if err := json.Unmarshal([]byte(res.stdout), &sum); err != nil || len(sum.Cycles) != 1 ||
				!strings.HasPrefix(sum.Cycles[0].Next, tokenNextStep) {
				t.Errorf("the JSON summary's next: %v, want it to start with %q:\n%s", err, tokenNextStep, res.stdout)
			}
		})
	}
}

// TestE2ENextStepOfEveryCallRefused: when the platform refuses every
// createPeople call (400), the export stays and no report is written: the
// last line carries the platform's reason and sends the operator to the
// logs, never to a report that does not exist.
func TestE2ENextStepOfEveryCallRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, configOptions{})
	e.emu.addFault(t, fault{Operation: "createPeople", Status: http.StatusBadRequest})
	e.dropFile("staff.csv", csvExport(genPeople(0, 3)))
	res := e.mustRun(1, "run", "people")
	last := lastLine(t, res)
	if strings.Contains(last.Msg, "report") {
		t.Errorf("the last line sends the operator to a report: %q", last.Msg)
	}
	for _, want := range []string{"the platform said: createPeople: status 400", "its reason is in the logs"} {
		if !strings.Contains(last.Msg, want) {
			t.Errorf("the last line lacks %q: %q", want, last.Msg)
		}
	}
	if got := e.archived("failed"); len(got) != 0 {
		t.Errorf("failed/ = %v: the test expects the export to stay, with no report", got)
	}
}

// TestE2EStoreUnreachable: a store that refuses the connection ends run,
// status and daemon with a failed outcome: exit 1 and a last line
// "failed: JOB TENANT: open store …; check store.url …" whose JSON line
// carries the outcome.
func TestE2EStoreUnreachable(t *testing.T) {
	t.Parallel()
	e := newEnv(t, configOptions{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	e.editConfig("  url: sqlite:"+filepath.Join(e.dir, "state.db"), "  url: postgres://hrsync@"+closed+"/hrsync?sslmode=disable")
	for _, c := range []struct {
		args  []string
		scope string
	}{
		{[]string{"run", "people"}, "people " + tenantName},
		{[]string{"run", "all", "-o", "json"}, "all " + tenantName},
		{[]string{"status"}, "status"},
		{[]string{"daemon"}, "daemon " + tenantName},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			res := e.run(c.args...)
			last := lastLine(t, res)
			want := "failed: " + c.scope + ": open store postgres://"
			if res.code != 1 || last.Outcome != "failed" || last.ExitCode != 1 || !strings.HasPrefix(last.Msg, want) ||
				!strings.HasSuffix(last.Msg, "connection refused; check store.url (or HRSYNC_STORE_URL) and that the database is up and reachable") {
				t.Errorf("want exit 1 and a failed last line starting %q: %s", want, res)
			}
			if slices.Contains(c.args, "json") {
				// stdout holds the run's one JSON document, with the same outcome.
				var sum struct {
					Outcome  string `json:"outcome"`
					ExitCode int    `json:"exitCode"`
					Message  string `json:"message"`
				}
				if err := json.Unmarshal([]byte(res.stdout), &sum); err != nil || sum.Outcome != "failed" || sum.ExitCode != 1 || sum.Message != last.Msg {
					t.Errorf("run -o json printed %+v (%v), want the failed outcome and the last line:\n%s", sum, err, res.stdout)
				}
			}
		})
	}
}
