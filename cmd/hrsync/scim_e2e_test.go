package main_test

// End-to-end tests of the SCIM endpoint of `hrsync daemon`: the real binary
// configured from examples/scim.yaml, an identity provider pushing users as
// Microsoft Entra ID does, and the emulator as the platform.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestE2ESCIMFromEntra pushes 200 users to the daemon as Entra does (a
// lookup by userName, then POST), then Entra's PATCH forms (value paths,
// no path, booleans as strings), deactivations and a deletion, a
// reactivation, and a deactivation of half the users, which trips the
// departures safeguard until an operator approves it. Each write triggers
// the people job one settle delay (2s, longer than the 1s the endpoint's
// rate limit makes the client wait) after the last: no schedule fires in
// the test. The emulator ends with every person created once with one
// grant of the right balance; the state records the departures and the
// return; the stop is reported and, once approved, applied.
func TestE2ESCIMFromEntra(t *testing.T) {
	e := newSCIMEnv(t, storeSQLite, "2s")
	d := e.startDaemon()
	w := &scimWorld{e: e, d: d, c: newIDP(t, d), st: e.stateReader(), staff: genPeople(0, 200)}
	w.pushAll(t)
	w.entraPatches(t)
	w.departures(t)
	w.reactivation(t)
	w.massDeactivation(t)
	if code := d.stop(t); code != 0 {
		t.Errorf("SIGTERM: exit %d, want 0\n%s", code, tail(d.stderr.String(), 20))
	}
}

// scimWorld is the daemon of a SCIM test, its identity provider and its
// state; the steps of TestE2ESCIMFromEntra run in order on it.
type scimWorld struct {
	e     *env
	d     *daemonProc
	c     *idp
	st    stateReader
	staff []person
}

// pushAll provisions every user as Entra does: each is created once at
// the emulator, with one grant of its balance.
func (w *scimWorld) pushAll(t *testing.T) {
	for _, p := range w.staff {
		w.c.provision(p)
	}
	waitState(t, w.d, "200 people at the emulator", func() bool { return len(w.e.emu.people(t, w.e.company)) == len(w.staff) })
	checkEmulatorPeople(t, w.e, w.staff)
	// A figure, not an assert: how many runs the 400 requests (with the
	// endpoint's rate limit's pauses) triggered.
	t.Logf("%d triggered people runs for the push of %d users", strings.Count(w.d.stderr.String(), "settle delay over: running"), len(w.staff))
}

// entraPatches sends Entra's PATCH forms of profile changes: they are
// stored, and nobody is created or granted again.
func (w *scimWorld) entraPatches(t *testing.T) {
	ok := w.st.runs("ok")
	w.c.patch("P00001", op("Replace", `emails[type eq "work"].value`, "p00001.renamed@example.test"),
		op("Replace", "name.familyName", "Renamed"))
	w.c.patch("P00002", op("Replace", "", map[string]any{
		"name.givenName": "Renamed", scimEnterpriseUser + ":department": "Finance", "displayName": "Renamed Person",
	}))
	w.c.patch("P00003", op("Add", scimHrsyncUser+":location", "Remote"))
	status, u := w.c.do(http.MethodGet, "/Users/"+w.c.ids["P00001"], nil)
	if emails, _ := u["emails"].([]any); status != http.StatusOK || len(emails) != 1 ||
		emails[0].(map[string]any)["value"] != "p00001.renamed@example.test" {
		t.Fatalf("GET P00001 after the PATCH: %d %v", status, u)
	}
	waitState(t, w.d, "a people run after the profile changes", func() bool { return w.st.runs("ok") > ok })
	checkEmulatorPeople(t, w.e, w.staff)
}

// departures deactivates five users as Entra does, active as the string
// "False", and deletes one: six departures are recorded.
func (w *scimWorld) departures(t *testing.T) {
	want := []string{"P00010", "P00011", "P00012", "P00013", "P00014"}
	for _, id := range want {
		w.c.patch(id, op("Replace", "active", "False"))
	}
	if status, _ := w.c.do(http.MethodDelete, "/Users/"+w.c.ids["P00015"], nil); status != http.StatusNoContent {
		t.Fatalf("DELETE P00015: %d", status)
	}
	want = append(want, "P00015")
	waitState(t, w.d, "6 departures recorded", func() bool { return sameSet(w.st.people(true), want) })
}

// reactivation reactivates one of them, active as the string "True": a
// return, counted once.
func (w *scimWorld) reactivation(t *testing.T) {
	w.c.patch("P00012", op("Replace", "active", "True"))
	waitState(t, w.d, "P00012 back", func() bool { return !w.st.people(true)["P00012"] && len(w.st.people(true)) == 5 })
	if got := w.e.runCounts("returned"); got != 1 {
		t.Errorf("runs counted %d returns, want 1", got)
	}
	if got := w.e.runCounts("departed"); got != 6 {
		t.Errorf("runs counted %d departures, want 6", got)
	}
	checkEmulatorPeople(t, w.e, w.staff)
}

// massDeactivation deactivates 100 of the 195 active users (half with a
// PATCH without path), waits for the safeguard stop, checks that nothing
// was applied and that the stop is reported, then approves it as an
// operator does and checks that the departures are applied.
func (w *scimWorld) massDeactivation(t *testing.T) {
	for i := 50; i < 150; i++ {
		id := fmt.Sprintf("P%05d", i)
		if i%2 == 0 {
			w.c.patch(id, op("Replace", "", map[string]any{"active": false})) // without a path
		} else {
			w.c.patch(id, op("Replace", "active", false))
		}
	}
	waitState(t, w.d, "a safeguard stop", func() bool { return w.st.runs("safeguard") > 0 })
	if n := len(w.st.people(true)); n != 5 {
		t.Errorf("%d departures recorded while stopped, want the 5 from before", n)
	}
	checkSafeguardReported(t, w.e, w.d)

	res := w.e.runUnlocked("run", "people", "--tenant", tenantName, "--override-safeguards")
	if res.code != 0 {
		t.Fatalf("the approval: %s", res)
	}
	if n := len(w.st.people(true)); n != 105 {
		t.Errorf("%d departures recorded after the approval, want 105", n)
	}
	checkEmulatorPeople(t, w.e, w.staff)
}

// checkEmulatorPeople wants each of staff once at the emulator, with one
// grant of the balance asked (its balanceOverride or the default 25).
func checkEmulatorPeople(t *testing.T, e *env, staff []person) {
	t.Helper()
	emu := byExternalID(t, e.emu.people(t, e.company))
	if len(emu) != len(staff) {
		t.Errorf("the emulator holds %d generated people, want %d", len(emu), len(staff))
	}
	wrong := 0
	for _, p := range staff {
		got, ok := emu[p.id]
		switch {
		case !ok:
			t.Errorf("%s is missing at the emulator", p.id)
		case len(got.Grants) != 1:
			t.Errorf("%s received %d grants, want 1", p.id, len(got.Grants))
		case got.Balance != p.wantBalance():
			t.Errorf("%s: balance %v, want %v", p.id, got.Balance, p.wantBalance())
		default:
			continue
		}
		if wrong++; wrong > 10 {
			t.Fatal("too many wrong people; stopping")
		}
	}
}

// checkSafeguardReported wants the stop in `hrsync status --json`, and the
// daemon's log line of the cycle to say what to do next.
func checkSafeguardReported(t *testing.T, e *env, d *daemonProc) {
	t.Helper()
	var status struct {
		Runs []struct {
			Job, Tenant, Outcome, Error string
		} `json:"runs"`
	}
	res := e.mustRun(0, "status", "--json")
	if err := json.Unmarshal([]byte(res.stdout), &status); err != nil {
		t.Fatalf("status --json: %v\n%s", err, res)
	}
	found := false
	for _, r := range status.Runs {
		if r.Job == "people" && r.Tenant == tenantName && r.Outcome == "safeguard" {
			found = true
		}
	}
	if !found {
		t.Errorf("status shows no safeguard stop of the people job: %+v", status.Runs)
	}
	logged := false
	for line := range strings.Lines(d.stderr.String()) {
		if strings.Contains(line, `"outcome":"safeguard"`) && strings.Contains(line, "--override-safeguards") {
			logged = true
		}
	}
	if !logged {
		t.Errorf("no log line of the daemon reports the stop with its next step:\n%s", tail(d.stderr.String(), 20))
	}
}

// runCounts sums a count over the tenant's people runs (read through the
// state, while the daemon runs).
func (e *env) runCounts(key string) int {
	e.t.Helper()
	rows, err := e.stateDB().QueryContext(e.t.Context(), e.rebind(`SELECT counts FROM runs WHERE job = 'people' AND tenant = ?`), tenantName)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	sum := 0
	for rows.Next() {
		var raw string
		if err := rows.Scan(&raw); err != nil {
			e.t.Fatal(err)
		}
		var counts map[string]int
		if err := json.Unmarshal([]byte(raw), &counts); err != nil {
			e.t.Fatalf("counts %q: %v", raw, err)
		}
		sum += counts[key]
	}
	if err := rows.Err(); err != nil {
		e.t.Fatal(err)
	}
	return sum
}

// runUnlocked runs the binary, again while the daemon's run holds the
// job's lock (exit 5), up to ten times.
func (e *env) runUnlocked(args ...string) result {
	e.t.Helper()
	var res result
	for range 10 {
		if res = e.run(args...); res.code != 5 {
			return res
		}
		time.Sleep(time.Second)
	}
	return res
}

// sameSet tells whether set holds exactly want.
func sameSet(set map[string]bool, want []string) bool {
	if len(set) != len(want) {
		return false
	}
	for _, w := range want {
		if !set[w] {
			return false
		}
	}
	return true
}

// TestE2ESCIMKillDuringTriggeredRun kills the daemon (SIGKILL) during the
// people run that an identity provider's push started, restarts it, and
// resolves the held grants as an operator would: every pushed user ends at
// the emulator once, with one grant of the right balance, and none is lost
// (the restarted daemon runs the job once after the settle delay, with no
// new write). On each store.
func TestE2ESCIMKillDuringTriggeredRun(t *testing.T) {
	for _, store := range storeKinds() {
		t.Run(store, func(t *testing.T) { scimKillScenario(t, store) })
	}
}

func scimKillScenario(t *testing.T, store string) {
	e := newSCIMEnv(t, store, "3s", "      batchSize: 5\n      concurrency: 1\n")
	// Each call is applied at once and answered 200ms later: the run lasts
	// long enough to be killed in, between the platform applying a batch
	// and hrsync learning of it.
	e.emu.addFault(t, fault{Operation: "createPeople", When: "after", Latency: "200ms"})
	d := e.startDaemon()
	c := newIDP(t, d)
	st := e.stateReader()
	staff := genPeople(0, 120)
	for _, p := range staff {
		c.create(p)
	}
	// A run is going and has made 3 calls. (On a loaded machine a gap of
	// the settle delay between two pushes starts a run of the first users
	// alone, which may be over before the kill: the kill must land in a
	// run that is going.)
	waitState(t, d, "3 create calls of the triggered run", func() bool {
		return countOp(e.emu.requests(t), "createPeople") >= 3 && st.runs("running") == 1
	})
	if err := d.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("SIGKILL: %v", err)
	}
	<-d.done
	var exit *exec.ExitError
	if !errors.As(d.err, &exit) || exit.Exited() {
		t.Fatalf("the daemon ended on its own before the kill: %v", d.err)
	}
	if st.runs("running") != 1 {
		t.Fatalf("%d people runs interrupted, want the one the kill landed in", st.runs("running"))
	}
	t.Logf("killed after %d of %d people were created", len(e.emu.people(t, e.company)), len(staff))

	// No new write: the restarted daemon runs the job once after the
	// settle delay (on PostgreSQL, again after another delay while the
	// killed session's lock lingers).
	finished := func() int { return st.runs("ok") + st.runs("attention") }
	settle := func(what string, before int) {
		t.Helper()
		waitState(t, d, what, func() bool { return finished() > before && st.runs("running") == 0 })
	}
	// Runs of the first users alone may have finished before the kill.
	before := finished()
	d = e.startDaemon()
	c.base = waitSCIM(t, d)
	settle("the restarted daemon's run", before)
	for round := 0; ; round++ {
		if round == 5 {
			t.Fatal("the held grants did not settle in 5 rounds")
		}
		confirmed, released := resolveHeld(t, e)
		t.Logf("round %d: %d held grants confirmed, %d released", round, confirmed, released)
		if confirmed+released == 0 && len(e.emu.people(t, e.company)) == len(staff) {
			break
		}
		// Released grants go with the next snapshot of the directory: the
		// identity provider's next write (a profile update) makes one.
		before := finished()
		c.patch(staff[round].id, op("Replace", "displayName", fmt.Sprintf("Round %d", round)))
		settle("the run after the write", before)
	}
	checkEmulatorPeople(t, e, staff)
	if held := e.grants(); len(held) != 0 {
		t.Errorf("%d grants still held", len(held))
	}
	if n := e.count(`SELECT COUNT(*) FROM api_journal WHERE state = 'sent'`); n != 0 {
		t.Errorf("%d calls of the journal have no outcome", n)
	}
	if status, list := c.do(http.MethodGet, "/Users?count=0", nil); status != http.StatusOK || list["totalResults"] != float64(len(staff)) {
		t.Errorf("the directory after the kill: %d %v, want %d users", status, list, len(staff))
	}
	if code := d.stop(t); code != 0 {
		t.Errorf("SIGTERM: exit %d, want 0", code)
	}
}

// TestE2ESCIMReplicas runs two daemons on one PostgreSQL state, each
// serving SCIM: the identity provider's writes go to either (as through a
// load balancer), each write triggers the people job on the replica that
// took it, and the job's lock runs it on one at a time: every user is
// created once with one grant, and the departures pushed to the other
// replica are recorded once.
func TestE2ESCIMReplicas(t *testing.T) {
	e := newSCIMEnv(t, storePostgres, "1s")
	a, b := e.startDaemon("--replica-id", "replica-a"), e.startDaemon("--replica-id", "replica-b")
	ca, cb := newIDP(t, a), newIDP(t, b)
	cb.ids = ca.ids
	st := e.stateReader()
	staff := genPeople(0, 100)
	for i, p := range staff {
		[]*idp{ca, cb}[i%2].create(p)
	}
	waitState(t, a, "100 people at the emulator", func() bool { return len(e.emu.people(t, e.company)) == len(staff) })
	for _, id := range []string{"P00001", "P00002", "P00003"} {
		cb.patch(id, op("Replace", "active", "False"))
	}
	waitState(t, b, "3 departures recorded", func() bool { return sameSet(st.people(true), []string{"P00001", "P00002", "P00003"}) })
	checkEmulatorPeople(t, e, staff)
	var ran []string
	for _, r := range []struct {
		name string
		d    *daemonProc
	}{{"replica-a", a}, {"replica-b", b}} {
		if strings.Contains(r.d.stderr.String(), "settle delay over: running") {
			ran = append(ran, r.name)
		}
		if code := r.d.stop(t); code != 0 {
			t.Errorf("%s: SIGTERM: exit %d, want 0", r.name, code)
		}
	}
	t.Logf("replicas that ran a triggered people job: %v", ran)
}

// waitSCIM waits for the daemon's SCIM address.
func waitSCIM(t *testing.T, d *daemonProc) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	select {
	case base := <-d.scim:
		return base
	case <-ctx.Done():
		t.Fatalf("the daemon did not say where SCIM listens:\n%s", d.stderr)
	}
	return ""
}

// TestSCIMConfigCheck runs `hrsync config check` on examples/scim.yaml as
// an operator does, from the repository's root: it is valid and says where
// the daemon serves SCIM; the same file without its token file beside it,
// or with scim.settle 0, is refused with exit 2, naming the file, the
// field and the line.
func TestSCIMConfigCheck(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	res := runIn(t, root, "config", "check", "--config", filepath.Join("examples", "scim.yaml"))
	if res.code != 0 || !strings.Contains(res.stdout, "scim endpoint: hrsync daemon serves it on 127.0.0.1:8090 for acme") {
		t.Fatalf("config check of examples/scim.yaml: %s", res)
	}
	body, err := os.ReadFile(filepath.Join(exampleSCIMDir, "scim.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "scim.yaml")
	bad := strings.Replace(string(body), "settle: 10s", "settle: 0s", 1)
	if err := os.WriteFile(cfg, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	res = runIn(t, dir, "config", "check", "--config", cfg)
	for _, want := range []string{cfg, "tenants[0].source.scim.tokenFile: file " + filepath.Join(dir, "scim-acme.token") + " does not exist", "scim.settle: must be greater than 0 (line "} {
		if res.code != 2 || !strings.Contains(res.stderr+res.stdout, want) {
			t.Errorf("config check without the token file and with settle 0: want exit 2 and %q, got %s", want, res)
		}
	}
}
