package main_test

// The fleet test of issue 14: three `hrsync daemon` processes on one
// PostgreSQL state share 30 tenants on one-second schedules, against the
// emulator process; one of them is killed (SIGKILL) during a run.

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	fleetTenants  = 30
	fleetReplicas = 3
	// fleetPeople is how many people each export of a tenant lists; a
	// tenant's people are numbered from fleetPeople*2*index.
	fleetPeople = 2
)

// fleetTenant names tenant i of the fleet test.
func fleetTenant(i int) string { return fmt.Sprintf("t%02d", i) }

// fleetStaff are the people of tenant i: the first export lists the first
// fleetPeople, the second all of them.
func fleetStaff(i int) []person {
	return genPeople(i*fleetPeople*2, (i+1)*fleetPeople*2)
}

// writeFleetConfig replaces the env's configuration with fleetTenants
// tenants, each with a drop folder of its own and its people and orders
// jobs every second.
func (e *env) writeFleetConfig() {
	e.t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, `store:
  schema: %s
api:
  baseUrl: %s
  timeout: 20s
  ratePerSecond: 1000
  burst: 200
  maxConcurrency: 8
  maxAttempts: 3
log:
  level: info
  format: json
http:
  listen: 127.0.0.1:0
tenants:
`, e.schema, e.emu.url)
	for i := range fleetTenants {
		dir := e.fleetDrop(i)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			e.t.Fatal(err)
		}
		b.WriteString(csvTenantYAML(fleetTenant(i), e.company, e.coll, dir, 25, 2))
		fmt.Fprintf(&b, "    schedules:\n      people: %q\n      orders: %q\n", everySecond, everySecond)
	}
	if err := os.WriteFile(e.config, []byte(b.String()), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) fleetDrop(i int) string { return filepath.Join(e.dir, "drop-"+fleetTenant(i)) }

// dropFleetExport writes an export into tenant i's drop folder.
func (e *env) dropFleetExport(i int, name string, people []person) {
	e.t.Helper()
	if err := writeExport(e.fleetDrop(i), name, people); err != nil {
		e.t.Fatal(err)
	}
}

// writeExport writes an export into a drop folder, ready at once; it may
// be called from any goroutine.
func writeExport(dir, name string, people []person) error {
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path+".partial", csvExport(people), 0o600); err != nil {
		return fmt.Errorf("write export: %w", err)
	}
	if err := os.Rename(path+".partial", path); err != nil {
		return fmt.Errorf("write export: %w", err)
	}
	return nil
}

// fleetTick is a row of the ticks table.
type fleetTick struct {
	job, tenant, replica string
	at                   time.Time
	finished             bool
	finishedAt           time.Time // zero when not finished
	outcome              string
}

func (e *env) fleetTicks() []fleetTick {
	e.t.Helper()
	rows, err := e.stateDB().QueryContext(e.t.Context(),
		`SELECT job, tenant, replica, tick_at, finished_at, COALESCE(outcome, '') FROM ticks ORDER BY job, tenant, tick_at`)
	if err != nil {
		e.t.Fatalf("read ticks: %v", err)
	}
	defer rows.Close()
	var out []fleetTick
	for rows.Next() {
		var tk fleetTick
		var finished sql.NullTime
		if err := rows.Scan(&tk.job, &tk.tenant, &tk.replica, &tk.at, &finished, &tk.outcome); err != nil {
			e.t.Fatal(err)
		}
		tk.at, tk.finished, tk.finishedAt = tk.at.UTC(), finished.Valid, finished.Time
		out = append(out, tk)
	}
	if err := rows.Err(); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// TestE2EFleetOfDaemons starts three daemons on one PostgreSQL schema with
// 30 tenants whose people and orders jobs run every second, for about 20
// seconds, and checks:
//
//   - every tick of every (job, tenant) between the first daemon's start
//     and the first stop was claimed exactly once across the three, but
//     for ticks that came while the previous run of their job and tenant
//     was still going at the next tick (overruns, which a loaded machine
//     makes: the daemon skips them by design, and the test checks that the
//     previous run did hold the lock that long); every claimed tick ran to
//     its end but those the killed daemon had in flight: the kill loses no
//     tick after the next one;
//   - the run records agree with the ticks (each replica recorded one
//     orders run per orders tick it ran) and with the emulator's request
//     log (one listOrders call per orders run);
//   - each daemon ran a fair share: at least 15% of the ticks while three
//     ran (an even share is 33%) and at least 25% of those after the kill
//     (even: 50%). Claims are a symmetric race spread by random waits, so
//     a share far below even means the spread is broken (one replica
//     taking everything, or the claim order following start-up order);
//     the margin absorbs the scheduling noise of a loaded 2-core machine
//     (measured: 28% to 42% and 46% to 54% when idle, down to 22% under
//     the load of two other packages' race-enabled tests);
//   - after the kill, the killed replica comes back (d4: its container
//     restarted), the orders calls slow down (six by 10s, the others by
//     1s), and d2 or d3 is told to stop (SIGTERM, --grace 6s) with short
//     and long orders runs in flight, while the others go on: no run is
//     left running (the killed replica's are closed as interrupted by the
//     next run of their job and tenant), no run failed, short runs in
//     flight at SIGTERM went on to end ok, and long ones were cut short
//     and recorded interrupted (fleet_stop_e2e_test.go);
//   - hrsync_last_success_timestamp_seconds, scraped from every replica
//     every 250ms, never goes back in any series, across d1's restart as
//     d4 included;
//   - after the kill during people runs whose createPeople calls the
//     emulator applies and answers late, and an operator's resolution of
//     the held grants, every person exists once with exactly the balance
//     due: nothing is granted twice.
func TestE2EFleetOfDaemons(t *testing.T) {
	e := newEnv(t, configOptions{store: storePostgres})
	e.writeFleetConfig()
	for i := range fleetTenants {
		e.dropFleetExport(i, "staff-1.csv", fleetStaff(i)[:fleetPeople])
	}
	// People first, by a one-shot run, so that every orders run lists
	// orders: one listOrders call each.
	e.mustRun(0, "run", "people")
	e.emu.clearRequests(t)

	started := time.Now()
	daemons := make([]*daemonProc, fleetReplicas)
	watches := make([]*successWatch, fleetReplicas)
	for i := range daemons {
		daemons[i] = e.startDaemon("--replica-id", fmt.Sprintf("d%d", i+1), "--grace", fleetGrace)
		watches[i] = watchSuccess(t, fmt.Sprintf("d%d", i+1), daemons[i])
	}
	allUp := time.Now()
	time.Sleep(7 * time.Second)

	// The second exports, whose createPeople calls the emulator applies
	// and then answers 300ms late: people runs long enough to be killed
	// in. They come a tenant every 200ms, so that the runs they start stay
	// well within the replicas' run slots.
	e.emu.addFault(t, fault{Operation: "createPeople", When: "after", Latency: "300ms"})
	dropped := time.Now()
	drops := make(chan error, 1)
	go func() {
		for i := range fleetTenants {
			if err := writeExport(e.fleetDrop(i), "staff-2.csv", fleetStaff(i)); err != nil {
				drops <- err
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
		drops <- nil
	}()
	victim := daemons[0]
	db := e.stateDB()
	if !waitFor(15*time.Second, func() bool {
		var n int
		// A createPeople call of d1 whose intent is committed and whose
		// answer is not: d1 is waiting for the emulator's late answer.
		err := db.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM api_journal j JOIN runs r ON r.id = j.run_id
			WHERE r.replica = 'd1' AND r.outcome = 'running' AND j.state = 'sent' AND j.started_at > $1`, dropped).Scan(&n)
		return err == nil && n > 0
	}) {
		t.Fatalf("d1 made no createPeople call for a second export:\n%s", victim.stderr)
	}
	// d1 can give up no tick after the signal: the time it was sent, not
	// the time its exit was seen (later on a loaded machine), bounds the
	// ticks d1 is expected to have given up.
	signalled := time.Now()
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-victim.done
	killed := time.Now()
	if err := <-drops; err != nil {
		t.Fatal(err)
	}
	time.Sleep(8 * time.Second)
	stopping := time.Now()
	stopped, sigterm := e.stopOneReplica(daemons, &watches)
	e.emu.clearFaults(t)

	ticks := e.fleetTicks()
	skips := fleetSkips(t, daemons)
	checkEveryTickOnce(t, ticks, skips, started.Add(2*time.Second), stopping.Add(-2*time.Second), signalled)
	checkKilledTicks(t, ticks, killed)
	checkFairShare(t, ticks, allUp.Add(2*time.Second), killed.Add(-time.Second), []string{"d1", "d2", "d3"}, 15)
	checkFairShare(t, ticks, killed.Add(2*time.Second), stopping.Add(-2*time.Second), []string{"d2", "d3"}, 25)
	e.checkRunsAgree(ticks, stopping)
	e.checkRunsEnded(killed, sigterm, stopped)
	checkSuccessNeverDecreases(t, watches, map[string]string{"d4": "d1"})
	e.settleFleetGrants()
}

// tickSkip is a tick a replica gave up ("tick skipped" in its log).
type tickSkip struct {
	key     string // job/tenant
	at      time.Time
	replica string
}

// fleetSkips reads the ticks each daemon gave up from its log.
func fleetSkips(t *testing.T, daemons []*daemonProc) map[tickSkip]bool {
	t.Helper()
	out := map[tickSkip]bool{}
	why := map[string]int{}
	defer func() { t.Logf("ticks given up, by replica and reason: %v", why) }()
	for i, d := range daemons {
		for _, l := range d.logs(t) {
			if !strings.HasPrefix(l.Msg, "tick skipped") {
				continue
			}
			why[fmt.Sprintf("d%d: %s", i+1, l.Msg)]++
			at, err := time.Parse("2006-01-02T15:04:05.000Z0700", l.Tick)
			if err != nil {
				t.Fatalf("log tick %q: %v", l.Tick, err)
			}
			out[tickSkip{key: l.Job + "/" + l.Tenant, at: at.UTC(), replica: fmt.Sprintf("d%d", i+1)}] = true
		}
	}
	return out
}

// checkEveryTickOnce checks that each (job, tenant) has a claimed tick at
// every second from from to to (at most one: the ticks' key), but for a
// tick that every replica alive until the next tick gave up and logged as
// skipped (the previous run overran the period, or every run slot was busy).
// The killed replica is held to the ticks a second or more before the one
// it was signalled after (signalled).
func checkEveryTickOnce(t *testing.T, ticks []fleetTick, skips map[tickSkip]bool, from, to, signalled time.Time) {
	t.Helper()
	claimed := map[string]map[time.Time]bool{}
	for _, tk := range ticks {
		k := tk.job + "/" + tk.tenant
		if claimed[k] == nil {
			claimed[k] = map[time.Time]bool{}
		}
		claimed[k][tk.at] = true
	}
	if len(claimed) != 2*fleetTenants {
		t.Fatalf("ticks of %d (job, tenant) pairs, want %d", len(claimed), 2*fleetTenants)
	}
	missing, skipped := 0, 0
	for k, at := range claimed {
		for s := from.Truncate(time.Second).Add(time.Second); s.Before(to); s = s.Add(time.Second) {
			s = s.UTC()
			if at[s] {
				continue
			}
			alive := []string{"d2", "d3"}
			// A replica gives a tick up at the next one (s+1s) and logs
			// it just after: d1 is held to it when it was signalled a
			// second later still.
			if signalled.After(s.Add(2 * time.Second)) {
				alive = append(alive, "d1")
			}
			all := true
			for _, r := range alive {
				all = all && skips[tickSkip{key: k, at: s, replica: r}]
			}
			if all {
				skipped++
				continue
			}
			if missing++; missing <= 10 {
				t.Errorf("%s: tick %s claimed by no replica, and not given up by each of %v", k, s.Format(time.TimeOnly), alive)
			}
		}
	}
	t.Logf("%d ticks claimed; window %s to %s; %d ticks given up by every replica", len(ticks),
		from.UTC().Format(time.TimeOnly), to.UTC().Format(time.TimeOnly), skipped)
}

// checkKilledTicks checks that only the killed daemon left ticks without an
// end, those it had in flight when killed (at most one per key), and that
// every key ran ticks after the kill.
func checkKilledTicks(t *testing.T, ticks []fleetTick, killed time.Time) {
	t.Helper()
	open := map[string]int{}
	after := map[string]int{}
	for _, tk := range ticks {
		k := tk.job + "/" + tk.tenant
		switch {
		case !tk.finished && tk.replica != "d1":
			t.Errorf("%s tick %s of %s has no end although its daemon stopped cleanly", k, tk.at.Format(time.TimeOnly), tk.replica)
		case !tk.finished && (tk.at.Before(killed.Add(-3*time.Second)) || tk.at.After(killed)):
			t.Errorf("%s tick %s of d1 has no end but was not in flight at the kill (%s)", k, tk.at.Format(time.TimeOnly), killed.UTC().Format(time.TimeOnly))
		case !tk.finished:
			open[k]++
		case tk.at.After(killed):
			after[k]++
			if tk.replica == "d1" {
				t.Errorf("%s tick %s ran on the killed daemon", k, tk.at.Format(time.TimeOnly))
			}
		}
	}
	if len(open) == 0 {
		t.Error("the kill left no tick in flight: it did not land mid-run")
	}
	for k, n := range open {
		if n > 1 {
			t.Errorf("%s: %d ticks in flight at the kill, want at most one", k, n)
		}
	}
	if len(after) != 2*fleetTenants {
		t.Errorf("%d (job, tenant) pairs ran ticks after the kill, want %d", len(after), 2*fleetTenants)
	}
	t.Logf("ticks in flight at the kill: %d", len(open))
}

// checkFairShare checks that each replica claimed at least minPercent of
// the ticks between from and to.
func checkFairShare(t *testing.T, ticks []fleetTick, from, to time.Time, replicas []string, minPercent int) {
	t.Helper()
	by := map[string]int{}
	total := 0
	for _, tk := range ticks {
		if tk.at.After(from) && tk.at.Before(to) {
			by[tk.replica]++
			total++
		}
	}
	t.Logf("ticks from %s to %s by replica: %v of %d", from.UTC().Format(time.TimeOnly), to.UTC().Format(time.TimeOnly), by, total)
	if total < 2*fleetTenants*3 {
		t.Fatalf("only %d ticks in the window", total)
	}
	for r := range by {
		if !slices.Contains(replicas, r) {
			t.Errorf("replica %s ran %d ticks in the window; only %v ran", r, by[r], replicas)
		}
	}
	for _, r := range replicas {
		if by[r]*100 < total*minPercent {
			t.Errorf("replica %s ran %d of %d ticks, under %d%%", r, by[r], total, minPercent)
		}
	}
}

// checkRunsAgree checks the run records against the ticks and the
// emulator's request log: each replica recorded one orders run per orders
// tick it ran (the killed one: per tick it began; a stopping one: but for
// ticks cut short by the stop, which may end before recording a run), and the
// emulator served one listOrders call per orders run.
func (e *env) checkRunsAgree(ticks []fleetTick, stopping time.Time) {
	t := e.t
	t.Helper()
	claimed, ended, cut := map[string]int{}, map[string]int{}, map[string]int{}
	for _, tk := range ticks {
		if tk.job != "orders" {
			continue
		}
		if tk.finished && tk.outcome != "ok" {
			t.Logf("orders tick %s of %s on %s ended %s", tk.at.Format(time.TimeOnly), tk.tenant, tk.replica, tk.outcome)
			if tk.outcome == "interrupted" && tk.at.After(stopping.Add(-3*time.Second)) {
				cut[tk.replica]++
			}
		}
		claimed[tk.replica]++
		if tk.finished {
			ended[tk.replica]++
		}
	}
	runs := map[string]int{}
	rows, err := e.stateDB().QueryContext(t.Context(), `SELECT replica, COUNT(*) FROM runs WHERE job = 'orders' GROUP BY replica`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var r string
		var n int
		if err := rows.Scan(&r, &n); err != nil {
			t.Fatal(err)
		}
		runs[r] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	allRuns, endedRuns := 0, 0
	for _, r := range []string{"d1", "d2", "d3", "d4"} {
		if runs[r] < ended[r]-cut[r] || runs[r] > claimed[r] || (r != "d1" && runs[r] < claimed[r]-cut[r]) {
			t.Errorf("replica %s recorded %d orders runs for %d orders ticks (%d ended, %d cut by the stop)", r, runs[r], claimed[r], ended[r], cut[r])
		}
		allRuns += runs[r]
		endedRuns += ended[r] - cut[r]
	}
	if len(runs) != 4 {
		t.Errorf("orders runs by replica %v: want d1, d2, d3 and d4 (d1 restarted) only", runs)
	}
	calls := countOp(e.emu.requests(t), "listOrders")
	if calls < endedRuns || calls > allRuns {
		t.Errorf("the emulator served %d listOrders calls for %d orders runs (%d ended)", calls, allRuns, endedRuns)
	}
	t.Logf("orders: runs by replica %v, ticks by replica %v; %d listOrders calls", runs, claimed, calls)
}

// settleFleetGrants does the operator's part after the kill (run again,
// confirm or release the held grants, export again the people whose grant
// waits) and checks that every person exists once at the emulator with the
// balance due, granted once.
func (e *env) settleFleetGrants() {
	t := e.t
	t.Helper()
	settled := false
	confirmed, released := 0, 0
	for round := 0; round < 5 && !settled; round++ {
		if res := e.run("run", "people"); res.code != 0 && res.code != 4 {
			t.Fatalf("round %d: %s", round, res)
		}
		c, r := resolveHeld(t, e)
		confirmed, released = confirmed+c, released+r
		waiting := e.grants("not_applied")
		settled = c+r == 0 && len(waiting) == 0
		for _, g := range waiting {
			for i := range fleetTenants {
				for _, p := range fleetStaff(i) {
					if p.id == g.ExternalID {
						e.dropFleetExport(i, fmt.Sprintf("staff-again-%d.csv", round), fleetStaff(i))
					}
				}
			}
		}
	}
	if !settled {
		t.Fatal("the grants did not settle after 5 rounds")
	}
	t.Logf("held grants after the kill: %d confirmed, %d released", confirmed, released)
	if confirmed+released == 0 {
		t.Error("the kill during a createPeople call left no grant held for an operator")
	}
	emu := byExternalID(t, e.emu.people(t, e.company))
	for i := range fleetTenants {
		for _, p := range fleetStaff(i) {
			got, ok := emu[p.id]
			switch {
			case !ok:
				t.Errorf("person %s of %s is missing at the emulator", p.id, fleetTenant(i))
			case len(got.Grants) != 1 || got.Balance != p.wantBalance():
				t.Errorf("person %s of %s: %d grants, balance %v; want 1 grant of %v", p.id, fleetTenant(i), len(got.Grants), got.Balance, p.wantBalance())
			}
		}
	}
	if n := len(emu); n != fleetTenants*fleetPeople*2 {
		t.Errorf("%d generated people at the emulator, want %d", n, fleetTenants*fleetPeople*2)
	}
}

// TestE2ERunShard runs `hrsync run --shard i/n`: a bad shard is a usage
// error (exit 2) naming the flag, before the configuration is read; of two
// shards, the one that holds the tenant runs it and says so in its JSON
// summary, the other exits 0 saying it holds none.
func TestE2ERunShard(t *testing.T) {
	e := newEnv(t, configOptions{})
	for _, bad := range []string{"3/2", "0/2", "1/0", "two"} {
		res := e.mustRun(2, "run", "all", "--shard", bad)
		if !strings.Contains(res.stderr, "--shard: shard \""+bad+"\"") {
			t.Errorf("--shard %s: the error does not name the flag and value:\n%s", bad, res)
		}
	}
	type summary struct {
		Outcome  string   `json:"outcome"`
		ExitCode int      `json:"exitCode"`
		Message  string   `json:"message"`
		Shard    string   `json:"shard"`
		Tenants  []string `json:"tenants"`
		Cycles   []struct {
			Job    string `json:"job"`
			Tenant string `json:"tenant"`
		} `json:"cycles"`
	}
	owners := 0
	for _, sh := range []string{"1/2", "2/2"} {
		res := e.mustRun(0, "run", "orders", "--shard", sh, "-o", "json")
		var s summary
		if err := json.Unmarshal([]byte(res.stdout), &s); err != nil {
			t.Fatalf("--shard %s: decode the summary: %v\n%s", sh, err, res)
		}
		if s.Shard != sh || s.Outcome != "ok" || s.ExitCode != 0 {
			t.Errorf("--shard %s: summary %+v", sh, s)
		}
		switch len(s.Tenants) {
		case 1:
			owners++
			if s.Tenants[0] != tenantName || len(s.Cycles) != 1 || s.Cycles[0].Tenant != tenantName || s.Cycles[0].Job != "orders" {
				t.Errorf("--shard %s: tenants %v, cycles %+v; want %s's orders cycle", sh, s.Tenants, s.Cycles, tenantName)
			}
		case 0:
			want := "ok: shard " + sh + " holds none of the tenants; nothing to run"
			if s.Message != want || len(s.Cycles) != 0 || !strings.Contains(res.stderr, want) {
				t.Errorf("--shard %s: message %q, cycles %+v; want %q on stdout and stderr\n%s", sh, s.Message, s.Cycles, want, res)
			}
		default:
			t.Errorf("--shard %s: tenants %v", sh, s.Tenants)
		}
	}
	if owners != 1 {
		t.Errorf("%d of 2 shards ran the tenant, want exactly 1", owners)
	}
}
