package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// addGrants appends a grants section to the test tenant's configuration
// (the tenant is the last block of the file).
func (e *env) addGrants(section string) {
	e.t.Helper()
	f, err := os.OpenFile(e.config, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	var b strings.Builder
	b.WriteString("    grants:\n")
	for _, l := range strings.Split(strings.TrimRight(section, "\n"), "\n") {
		b.WriteString("      " + l + "\n")
	}
	if _, err := f.WriteString(b.String()); err != nil {
		e.t.Fatal(err)
	}
}

// grantsPlan is what `plan grants -o json` prints for one tenant.
type grantsPlan struct {
	Tenant string `json:"tenant"`
	Day    string `json:"day"`
	Rules  []struct {
		Rule  string  `json:"rule"`
		Due   int     `json:"due"`
		Total float64 `json:"total"`
	} `json:"rules"`
	Due []struct {
		Rule       string  `json:"rule"`
		ExternalID string  `json:"externalId"`
		Occurrence string  `json:"occurrence"`
		Amount     float64 `json:"amount"`
	} `json:"due"`
	Total float64 `json:"total"`
}

func (e *env) planGrants(day string) grantsPlan {
	e.t.Helper()
	res := e.mustRun(0, "plan", "grants", "--date", day, "-o", "json")
	var plans []grantsPlan
	if err := json.Unmarshal([]byte(res.stdout), &plans); err != nil || len(plans) != 1 {
		e.t.Fatalf("plan grants: %v (%d plans)\n%s", err, len(plans), res)
	}
	return plans[0]
}

// emuGrantsBy returns each generated person's grants at the emulator.
func (e *env) emuGrantsBy() map[string][]emuGrant {
	out := map[string][]emuGrant{}
	for _, p := range e.emu.people(e.t, e.company) {
		out[p.ExternalID] = p.Grants
	}
	return out
}

// newGrants lists "externalId amount" for each grant the emulator holds in
// after beyond those of before, sorted.
func newGrants(before, after map[string][]emuGrant) []string {
	var out []string
	for id, gs := range after {
		for _, g := range gs[len(before[id]):] {
			out = append(out, fmt.Sprintf("%s %.2f", id, g.Amount))
		}
	}
	sort.Strings(out)
	return out
}

const e2eGrantRules = `timezone: America/Los_Angeles
lookbackDays: 10
rules:
  - {name: birthday, type: birthday, amount: 3}
  - {name: anniversary, type: workAnniversary, amount: 20, amountByYears: {5: 100}}
  - {name: lisbon, type: campaign, key: lisbon-2026, date: "2026-06-12", amount: 40, locations: [Lisbon]}
`

// TestE2EPlanGrantsMatchesRun: through the binary, `plan grants --date D`
// lists exactly the grants `run grants --date D` then applies at the
// platform (the emulator's own record of each person's grants), the look-
// back catching up on the days since the last run; a second plan and run
// find nothing; status shows the last day per rule; grants list --rule
// lists one rule's grants.
func TestE2EPlanGrantsMatchesRun(t *testing.T) {
	e := newEnv(t, configOptions{})
	e.addGrants(e2eGrantRules)
	e.dropFile("staff.csv", csvExport(genPeople(0, 400)))
	e.mustRun(0, "run", "people")

	e.mustRun(0, "run", "grants", "--date", "2026-06-05")
	plan := e.planGrants("2026-06-14")
	var want []string
	for _, d := range plan.Due {
		want = append(want, fmt.Sprintf("%s %.2f", d.ExternalID, d.Amount))
	}
	sort.Strings(want)
	for _, r := range plan.Rules {
		if r.Due == 0 {
			t.Fatalf("the plan owes nothing for rule %s: the test does not test it", r.Rule)
		}
	}
	before := e.emuGrantsBy()
	res := e.mustRun(0, "run", "grants", "--date", "2026-06-14")
	got := newGrants(before, e.emuGrantsBy())
	if !slices.Equal(got, want) {
		t.Fatalf("plan grants listed %d grants, run grants applied %d:\nplan %v\nrun  %v\n%s", len(want), len(got), want, got, res)
	}
	t.Logf("plan and run agree on %d grants (%.2f)", len(got), plan.Total)

	// Every key the plan listed is applied in the ledger, listed by rule.
	for _, rule := range []string{"birthday", "anniversary", "lisbon"} {
		listed := e.mustRun(0, "grants", "list", "--rule", rule, "--state", "applied", "-o", "json")
		var gs []struct {
			Key    string `json:"key"`
			Reason string `json:"reason"`
		}
		if err := json.Unmarshal([]byte(listed.stdout), &gs); err != nil {
			t.Fatal(err)
		}
		keys := map[string]bool{}
		for _, g := range gs {
			if g.Reason != rule {
				t.Fatalf("grants list --rule %s listed %s", rule, g.Key)
			}
			keys[g.Key] = true
		}
		for _, d := range plan.Due {
			if k := tenantName + "/" + d.ExternalID + "/" + d.Rule + "/" + d.Occurrence; d.Rule == rule && !keys[k] {
				t.Errorf("%s is not applied in the ledger", k)
			}
		}
	}

	if again := e.planGrants("2026-06-14"); len(again.Due) != 0 {
		t.Fatalf("after the run, the plan still lists %d grants", len(again.Due))
	}
	calls := countOp(e.emu.requests(t), "createPeople")
	e.mustRun(0, "run", "grants", "--date", "2026-06-14")
	if n := countOp(e.emu.requests(t), "createPeople"); n != calls {
		t.Fatalf("a repeated run made %d calls", n-calls)
	}

	var status struct {
		Tenants []struct {
			GrantRules []struct {
				Rule    string  `json:"rule"`
				LastDay *string `json:"lastDay"`
			} `json:"grantRules"`
		} `json:"tenants"`
	}
	st := e.mustRun(0, "status", "-o", "json")
	if err := json.Unmarshal([]byte(st.stdout), &status); err != nil || len(status.Tenants) != 1 || len(status.Tenants[0].GrantRules) != 3 {
		t.Fatalf("status: %v\n%s", err, st)
	}
	for _, r := range status.Tenants[0].GrantRules {
		if r.LastDay == nil || *r.LastDay != "2026-06-14" {
			t.Errorf("status: rule %s last day %v, want 2026-06-14", r.Rule, r.LastDay)
		}
	}
	if text := e.mustRun(0, "status"); !strings.Contains(text.stdout, "LAST DAY PROCESSED") {
		t.Errorf("status text has no grant rules:\n%s", text.stdout)
	}
}

// TestE2EGrantsBudgetStopsBeforeAnyCall: through the binary, a run whose
// grants exceed grants.maxPerRun exits 3 (safeguard) naming the totals,
// and the platform's request log shows no call; --override-safeguards
// grants once.
func TestE2EGrantsBudgetStopsBeforeAnyCall(t *testing.T) {
	e := newEnv(t, configOptions{})
	e.addGrants("maxPerRun: 100\n" + e2eGrantRules)
	e.dropFile("staff.csv", csvExport(genPeople(0, 400)))
	e.mustRun(0, "run", "people")
	e.mustRun(0, "run", "grants", "--date", "2026-06-11") // the first day: nothing on 11 June within the cap
	e.emu.clearRequests(t)
	res := e.mustRun(3, "run", "grants", "--date", "2026-06-12")
	if !strings.Contains(res.stderr, "safeguard: grants acme: budget: the run would grant") || !strings.Contains(res.stderr, "over grants.maxPerRun (100.00)") {
		t.Fatalf("the last line does not name the budget and its totals:\n%s", res.stderr)
	}
	if n := countOp(e.emu.requests(t), "createPeople"); n != 0 {
		t.Fatalf("the stopped run made %d createPeople calls", n)
	}
	before := e.emuGrantsBy()
	e.mustRun(0, "run", "grants", "--date", "2026-06-12", "--override-safeguards")
	if len(newGrants(before, e.emuGrantsBy())) == 0 {
		t.Fatal("the override granted nothing")
	}
}

// TestGrantsJSONGolden compares `plan grants -o json` and `run grants -o
// json` to their golden files (see TestJSONOutputGolden).
func TestGrantsJSONGolden(t *testing.T) {
	e := newEnv(t, configOptions{})
	e.addGrants(`timezone: Asia/Tokyo
rules:
  - {name: birthday, type: birthday, amount: 3}
  - {name: anniversary, type: workAnniversary, amount: 20, amountByYears: {5: 100}}
`)
	e.dropFile("staff.csv", csvExport(genPeople(0, 6)))
	e.mustRun(0, "run", "people")
	g := golden{e: e}
	g.check(t, "plan-grants", e.mustRun(0, "plan", "grants", "--date", "2026-01-01", "-o", "json"))
	g.check(t, "run-grants", e.mustRun(0, "run", "grants", "--date", "2026-01-01", "-o", "json"))
}

// TestE2ERunGrantsRefusesAFutureDate: run grants --date after today is a
// usage error (exit 2) and makes no call; plan grants previews it.
func TestE2ERunGrantsRefusesAFutureDate(t *testing.T) {
	e := newEnv(t, configOptions{})
	e.addGrants(e2eGrantRules)
	res := e.mustRun(2, "run", "grants", "--date", "2999-01-01")
	if !strings.Contains(res.stderr, "is after today") {
		t.Errorf("the refusal does not say why:\n%s", res)
	}
	if res := e.mustRun(2, "run", "grants", "--date", "2026-02-30"); !strings.Contains(res.stderr, "not a date") {
		t.Errorf("an impossible date:\n%s", res)
	}
	if n := countOp(e.emu.requests(t), "createPeople"); n != 0 {
		t.Fatalf("%d calls", n)
	}
	e.mustRun(0, "plan", "grants", "--date", "2999-01-01")
}

// TestE2EDaemonGrants: the daemon runs the grants job on its schedule: a
// campaign of today reaches every person it names once, and /metrics counts
// it in hrsync_rule_grants_total by rule and result.
func TestE2EDaemonGrants(t *testing.T) {
	e := newEnv(t, configOptions{})
	today := time.Now().UTC().Format(time.DateOnly)
	e.addGrants("timezone: UTC\nrules:\n  - {name: today, type: campaign, key: k1, date: \"" + today + "\", amount: 15, locations: [Lisbon]}\n")
	f, err := os.OpenFile(e.config, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Fprintf(f, "    schedules:\n      people: %q\n      grants: %q\nhttp:\n  listen: 127.0.0.1:0\n", everySecond, everySecond); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	staff := genPeople(0, 40)
	lisbon := 0
	for _, p := range staff {
		if p.loc == "Lisbon" {
			lisbon++
		}
	}
	e.dropFile("staff.csv", csvExport(staff))
	d := e.startDaemon()
	if !waitFor(60*time.Second, func() bool {
		return d.scrape(t, "hrsync_rule_grants_total", "tenant=acme", "rule=today", "result=applied") >= float64(lisbon)
	}) {
		t.Fatalf("the campaign was not applied to %d people:\n%s", lisbon, d.stderr)
	}
	// A few more grants cycles: nothing more is granted.
	runs := d.scrape(t, "hrsync_runs_total", "job=grants", "tenant=acme")
	if !waitFor(30*time.Second, func() bool { return d.scrape(t, "hrsync_runs_total", "job=grants", "tenant=acme") >= runs+2 }) {
		t.Fatalf("the grants job stopped running:\n%s", d.stderr)
	}
	if got := d.scrape(t, "hrsync_rule_grants_total", "tenant=acme", "rule=today", "result=applied"); got != float64(lisbon) {
		t.Errorf("applied %v, want %d", got, lisbon)
	}
	if code := d.stop(t); code != 0 {
		t.Errorf("the daemon exited %d", code)
	}
	for id, gs := range e.emuGrantsBy() {
		if n := len(gs) - 1; n > 1 {
			t.Errorf("%s received %d campaign grants", id, n)
		}
	}
}
