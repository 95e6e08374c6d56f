package main_test

// One outcome, every signal (DESIGN.md, invariant 7): for each fault class
// an operator meets, one people cycle of the real binary ends in one
// outcome, and the exit code, the last line on stderr, the run record in
// the store, `hrsync status -o json`, stdout (text) and `run -o json` all
// say it. Each case runs twice, on two fresh worlds: once printing text,
// once printing JSON, since a cycle changes the state the next one sees.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"hrsync/internal/metrics/metricstest"
)

// outcomeCase is one fault class driven through the binary.
type outcomeCase struct {
	name string
	// noExport leaves the drop folder empty; else it holds employees.csv
	// (40 people, two createPeople calls of 20) before setup.
	noExport bool
	// setup breaks the world (it may run the binary first) and returns
	// extra environment variables for the cycle under test.
	setup func(t *testing.T, e *env) []string
	// outcome and code are what the cycle must end in.
	outcome string
	code    int
	// lineHas are phrases the last line holds (cause and next step).
	lineHas []string
	// runs is how many runs the cycle records when not one (one per
	// export it processed).
	runs int
	// brokenSource says the tenant's source cannot be read; folderProblem
	// that status sees it without connecting anywhere (a drop folder's
	// state: status never queries an HR database, whose failure shows in
	// the failed run it shows).
	brokenSource, folderProblem bool
	// check, when set, asserts what else the case leaves behind.
	check func(t *testing.T, e *env)
}

// outcomeCases are the fault classes of issue 19, each with its outcome.
func outcomeCases() []outcomeCase {
	return []outcomeCase{
		{name: "401 wrong token", outcome: "failed", code: 1,
			setup:   func(*testing.T, *env) []string { return []string{"HRSYNC_API_TOKEN=not-the-token"} },
			lineHas: []string{"the platform refused the token (401 unauthorized) on 1 createPeople call; nothing was granted; 20 people not sent", "check HRSYNC_API_TOKEN"},
			check:   refusedWhole(1)},
		{name: "403 company not allowed", outcome: "failed", code: 1,
			setup: func(_ *testing.T, e *env) []string {
				e.editConfig("companyId: "+e.company, "companyId: 9f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9")
				return nil
			},
			lineHas: []string{"the platform refused the company for this token (403 forbidden) on 1 createPeople call; nothing was granted", "companyId"},
			check:   refusedWhole(1)},
		{name: "API unreachable", outcome: "failed", code: 1,
			setup:   func(*testing.T, *env) []string { return []string{"HRSYNC_API_BASE_URL=http://127.0.0.1:1"} },
			lineHas: []string{"the platform could not be reached on 2 createPeople calls (every call of the run); nothing was granted", "api.baseUrl"},
			check:   refusedWhole(0)},
		{name: "429 storm", outcome: "failed", code: 1,
			setup: faults(fault{Operation: "createPeople", Status: 429, RetryAfter: intPtr(0)}),
			lineHas: []string{"the platform kept rate-limiting the calls (429) on 2 createPeople calls (every call of the run); nothing was granted",
				"lower api.ratePerSecond"},
			check: refusedWhole(4)},
		{name: "503 with Retry-After, then served", outcome: "ok", code: 0,
			setup:   faults(fault{Operation: "createPeople", Status: 503, RetryAfter: intPtr(1), Count: 1}),
			lineHas: []string{"employees.csv: 40 people created"},
			check:   peopleAtEmulator(40)},
		{name: "500 after the platform applied a call", outcome: "attention", code: 4,
			setup:   faults(fault{Operation: "createPeople", When: "after", Status: 500, Count: 1}),
			lineHas: []string{"employees.csv: 20 people created", "20 grants held: the platform's answer is unknown", "hrsync grants list"},
			check:   heldGrants(20)},
		{name: "connection dropped after the platform applied a call", outcome: "attention", code: 4,
			setup:   faults(fault{Operation: "createPeople", When: "after", Drop: true, Count: 1}),
			lineHas: []string{"20 grants held: the platform's answer is unknown", "hrsync grants list"},
			check:   heldGrants(20)},
		{name: "400 on every call", outcome: "failed", code: 1,
			setup:   faults(fault{Operation: "createPeople", Status: 400}),
			lineHas: []string{"the platform refused the request as invalid on 2 createPeople calls (every call of the run); nothing was granted"},
			check:   refusedWhole(2)},
		{name: "a balance over the platform's limit", outcome: "attention", code: 4, noExport: true,
			setup: func(t *testing.T, e *env) []string {
				e.emu.do(t, "PUT", "/_emulator/limits", map[string]any{"maxBalance": 100}, nil)
				staff := genPeople(1, 41)
				staff[9].balance = "500" // P00010
				e.dropFile("employees.csv", csvExport(staff))
				return nil
			},
			lineHas: []string{"employees.csv: 39 people created", "1 person refused by the platform", "P00010", "fix the refused people"},
			check:   peopleAtEmulator(39)},
		{name: "a safeguard stop", outcome: "safeguard", code: 3,
			setup: func(_ *testing.T, e *env) []string {
				e.mustRun(0, "run", "people")
				e.dropFile("truncated.csv", csvExport(genPeople(1, 6))) // 35 of 40 people gone
				return nil
			},
			lineHas: []string{"truncated.csv: a safeguard stopped the run before any call", "--override-safeguards --file failed/truncated.csv"},
			check:   peopleAtEmulator(40)},
		{name: "the lock held", outcome: "locked", code: 5,
			setup:   holdPeopleLock,
			lineHas: []string{"another run of this job and tenant holds the lock"},
			check:   peopleAtEmulator(0)},
		{name: "the drop folder is missing", outcome: "failed", code: 1, brokenSource: true, folderProblem: true,
			setup: func(t *testing.T, e *env) []string {
				if err := os.RemoveAll(e.drop); err != nil {
					t.Fatal(err)
				}
				return nil
			},
			lineHas: []string{"read the source", "drop folder", "check the tenant's source"}},
		{name: "the drop folder cannot be listed", outcome: "failed", code: 1, brokenSource: true, folderProblem: true,
			setup: func(t *testing.T, e *env) []string {
				if err := os.RemoveAll(e.drop); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(e.drop, []byte("not a folder"), 0o600); err != nil {
					t.Fatal(err)
				}
				return nil
			},
			lineHas: []string{"read the source", "is not a folder", "check the tenant's source"}},
		{name: "the SQL source is down", outcome: "failed", code: 1, brokenSource: true, setup: sqlSourceDown,
			lineHas: []string{"read the source", "connection refused", "check the tenant's source"}},
		{name: "two exports, the first unusable", outcome: "failed", code: 1, noExport: true, runs: 2,
			setup: func(t *testing.T, e *env) []string {
				empty := e.dropFile("a.csv", nil)
				hour := time.Now().Add(-time.Hour)
				if err := os.Chtimes(empty, hour, hour); err != nil {
					t.Fatal(err)
				}
				e.dropFile("b.csv", csvExport(genPeople(1, 41)))
				return nil
			},
			lineHas: []string{"failed: people " + tenantName + ": 2 exports; a.csv: ", "fix the export and drop it again"},
			check:   peopleAtEmulator(40)},
		{name: "nothing to do", outcome: "ok", code: 0, noExport: true,
			setup:   func(*testing.T, *env) []string { return nil },
			lineHas: []string{"ok: people " + tenantName + ": no export ready"}},
		{name: "nothing to do while grants are held", outcome: "attention", code: 4,
			setup:   heldThen(func(*testing.T, *env) {}),
			lineHas: []string{"attention: people " + tenantName + ": no export ready; 20 grants held from earlier runs", "hrsync grants list"}},
		{name: "the same file dropped again while grants are held", outcome: "attention", code: 4,
			setup: heldThen(func(_ *testing.T, e *env) { e.dropFile("employees.csv", csvExport(genPeople(1, 41))) }),
			lineHas: []string{"attention: people " + tenantName + ": employees.csv: already processed (same content); archived without a change; " +
				"20 grants held from earlier runs", "hrsync grants list"}},
	}
}

func TestE2EOutcomes(t *testing.T) {
	t.Parallel()
	for _, c := range outcomeCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			for _, format := range []string{"text", "json"} {
				t.Run(format, func(t *testing.T) {
					t.Parallel()
					runOutcomeCase(t, c, format)
				})
			}
		})
	}
}

// runOutcomeCase runs one people cycle of c in a fresh world, printing
// format, and checks that every signal says c's outcome.
func runOutcomeCase(t *testing.T, c outcomeCase, format string) {
	// One call at a time, so that a refused token stops the run before its
	// second batch.
	e := newEnv(t, configOptions{maxAttempts: 2, batchSize: 20, concurrency: 1})
	if !c.noExport {
		e.dropFile("employees.csv", csvExport(genPeople(1, 41)))
	}
	var gw *metricstest.Pushgateway
	if format == "json" { // the metrics the run pushes, once per case
		gw = metricstest.Start(t)
		e.setPushgateway(gw.URL)
	}
	extra := c.setup(t, e)
	e.emu.clearRequests(t)
	runsBefore := e.peopleRuns()
	var pushedBefore pushed
	if gw != nil {
		pushedBefore = pushedNow(t, gw, c.outcome)
	}
	start := time.Now()
	res := e.runEnv(extra, "run", "people", "-o", format)
	if res.code != c.code {
		t.Fatalf("want exit %d (%s), got %s", c.code, c.outcome, res)
	}
	last := lastLine(t, res)
	t.Logf("last line: %s", last.Msg)
	checkLast(t, c, last)
	if strings.Contains(res.stderr, "not-the-token") || strings.Contains(res.stderr, e2eToken) {
		t.Errorf("a token reached stderr")
	}

	want := c.runs
	if want == 0 && c.outcome != "locked" {
		want = 1 // a locked cycle did not run: the run holding the lock has the record
	}
	if n := e.peopleRuns() - runsBefore; n != want {
		t.Fatalf("the cycle recorded %d people runs, want %d", n, want)
	}
	cycle := e.lastPeopleRuns(want)
	// The cycle's record: the first of its runs that ended as the cycle did.
	var rec runRecord
	for _, r := range cycle {
		if r.Outcome == c.outcome && rec.ID == "" {
			rec = r
		}
	}
	recorded := len(cycle) > 0
	if recorded {
		checkRecord(t, c, rec, last.Msg)
	}
	checkStatus(t, e, c, extra, rec, recorded)
	if format == "json" {
		checkSummary(t, e, c, res, last.Msg, rec)
		checkPushed(t, gw, c, pushedBefore, start)
	} else {
		checkText(t, c, res.stdout, cycle)
	}
	if c.check != nil {
		c.check(t, e)
	}
}

// checkLast checks the last line: c's outcome and exit code, the level
// they give, a cause that is never empty, and c's phrases.
func checkLast(t *testing.T, c outcomeCase, last lastStderrLine) {
	t.Helper()
	level := map[int]string{0: "info", 1: "error", 3: "warn", 4: "warn", 5: "info"}[c.code]
	prefix := c.outcome + ": people " + tenantName + ": "
	if last.Outcome != c.outcome || last.ExitCode != c.code || last.Level != level || !strings.HasPrefix(last.Msg, prefix) {
		t.Errorf("last line = %+v, want a %s line with outcome %s, exit code %d, starting %q", last, level, c.outcome, c.code, prefix)
	}
	if cause := strings.TrimPrefix(last.Msg, prefix); strings.TrimSpace(cause) == "" || strings.HasPrefix(cause, ";") {
		t.Errorf("last line %q has an empty cause", last.Msg)
	}
	for _, want := range c.lineHas {
		if !strings.Contains(last.Msg, want) {
			t.Errorf("last line %q does not say %q", last.Msg, want)
		}
	}
}

// checkRecord checks the cycle's run record: c's outcome, and for any other
// outcome than ok the cause the last line gives.
func checkRecord(t *testing.T, c outcomeCase, rec runRecord, line string) {
	t.Helper()
	if rec.Outcome != c.outcome {
		t.Errorf("run record outcome %q, want %q", rec.Outcome, c.outcome)
	}
	switch {
	case c.outcome == "ok" && rec.Error != "":
		t.Errorf("an ok run record carries an error: %q", rec.Error)
	case c.outcome != "ok" && (rec.Error == "" || !strings.Contains(line, rec.Error)):
		t.Errorf("run record error %q is not the cause of the last line %q", rec.Error, line)
	}
}

// checkStatus checks that `hrsync status -o json` shows the cycle's run
// record as the tenant's last people run (none for a locked cycle in a
// fresh world). status answers whatever the source's state (exit 0), and
// a broken source is the tenant's source problem beside the history.
func checkStatus(t *testing.T, e *env, c outcomeCase, extra []string, rec runRecord, recorded bool) {
	t.Helper()
	res := e.runEnv(extra, "status", "-o", "json")
	if res.code != 0 {
		t.Errorf("status: %s", res)
		return
	}
	var st struct {
		Runs []struct {
			Job     string `json:"job"`
			Tenant  string `json:"tenant"`
			RunID   string `json:"runId"`
			Outcome string `json:"outcome"`
			Error   string `json:"error"`
		} `json:"runs"`
		Tenants []struct {
			Name           string   `json:"name"`
			SourceProblems []string `json:"sourceProblems"`
		} `json:"tenants"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &st); err != nil {
		t.Fatalf("status -o json: %v\n%s", err, res.stdout)
	}
	for _, tn := range st.Tenants {
		if tn.Name == tenantName && (len(tn.SourceProblems) > 0) != c.folderProblem {
			t.Errorf("status shows the source problems %q; the drop folder is broken: %v", tn.SourceProblems, c.folderProblem)
		}
	}
	found := false
	for _, r := range st.Runs {
		if r.Job != "people" || r.Tenant != tenantName {
			continue
		}
		found = true
		if r.RunID != rec.ID || r.Outcome != rec.Outcome || r.Error != rec.Error {
			t.Errorf("status shows people run %+v, the cycle's record is %+v", r, rec)
		}
	}
	if found != recorded {
		t.Errorf("status shows a people run: %v; the store holds one: %v", found, recorded)
	}
}

// checkText checks what `run people` prints: each run the cycle recorded
// with its outcome and id, and no other outcome.
func checkText(t *testing.T, c outcomeCase, stdout string, cycle []runRecord) {
	t.Helper()
	said := map[string]bool{}
	var want []string
	for _, r := range cycle {
		want = append(want, fmt.Sprintf(": %s (run %s)", r.Outcome, r.ID))
		said[r.Outcome] = true
	}
	if c.outcome == "locked" {
		want = []string{"tenant " + tenantName + ", people: locked: another run of this job and tenant holds the lock"}
		said["locked"] = true
	}
	for _, w := range want {
		if !strings.Contains(stdout, w) {
			t.Errorf("stdout does not say %q:\n%s", w, stdout)
		}
	}
	for _, o := range []string{"ok", "attention", "failed", "safeguard", "locked"} {
		if !said[o] && (strings.Contains(stdout, ": "+o+" (run ") || strings.Contains(stdout, ": "+o+": ")) {
			t.Errorf("stdout says %s, which no run of the cycle ended in:\n%s", o, stdout)
		}
	}
}

// checkSummary checks `run people -o json`: the outcome, exit code and
// last line of the run, the cycle's outcome and cause, the run its report
// names, and the report archived beside the export.
func checkSummary(t *testing.T, e *env, c outcomeCase, res result, line string, rec runRecord) {
	t.Helper()
	sum := decodeSummary(t, res)
	if sum.Outcome != c.outcome || sum.ExitCode != c.code || sum.Message != line || len(sum.Cycles) != 1 {
		t.Fatalf("summary %+v, want outcome %s, exit code %d, message %q and one cycle", sum, c.outcome, c.code, line)
	}
	cy := sum.Cycles[0]
	if cy.Job != "people" || cy.Outcome != c.outcome || cy.Cause == "" || !strings.Contains(line, cy.Cause) {
		t.Errorf("cycle %+v, want people ending %s with the last line's cause", cy, c.outcome)
	}
	if c.outcome == "locked" {
		return
	}
	if cy.Report.RunID == "" && len(cy.Report.Exports) == 0 {
		t.Fatalf("the cycle's report names no run: %s", res.stdout)
	}
	// The run of a cycle with no export, or the first export that ended
	// as the cycle did: the cycle's record.
	runID := cy.Report.RunID
	for _, x := range slices.Backward(cy.Report.Exports) {
		if x.Outcome == c.outcome {
			runID = x.RunID
		}
		if dir, name, ok := strings.Cut(x.ArchivedAs, "/"); ok {
			if r := e.report(dir, name); r.Outcome != x.Outcome {
				t.Errorf("the report beside %s says %s, the summary %s", x.ArchivedAs, r.Outcome, x.Outcome)
			}
		}
	}
	if runID != rec.ID {
		t.Errorf("the summary names run %q, the cycle's record is %q", runID, rec.ID)
	}
}

// pushed is what the Pushgateway holds of the people job: the runs of one
// outcome, and the time of the last success (ok says it is there).
type pushed struct {
	runs        float64
	lastSuccess float64
	ok          bool
}

// pushedNow reads what the Pushgateway holds of the people job.
func pushedNow(t *testing.T, gw *metricstest.Pushgateway, outcome string) pushed {
	t.Helper()
	var p pushed
	p.runs, _ = gw.Value(t, "hrsync_runs_total", gwSeries("people", "outcome", outcome))
	p.lastSuccess, p.ok = gw.Value(t, "hrsync_last_success_timestamp_seconds", gwSeries("people"))
	return p
}

// checkPushed checks the metrics the run pushed: one more run of c's
// outcome, the last outcome c's, the time of the last run of that outcome
// now, and the time of the last success now only for a success (ok,
// attention): a cycle that failed, stopped or found the lock held leaves it
// where an earlier run put it.
func checkPushed(t *testing.T, gw *metricstest.Pushgateway, c outcomeCase, before pushed, start time.Time) {
	t.Helper()
	from := float64(start.Unix())
	after := pushedNow(t, gw, c.outcome)
	if after.runs != before.runs+1 {
		t.Errorf("hrsync_runs_total{outcome=%q} = %v, want %v", c.outcome, after.runs, before.runs+1)
	}
	if v, _ := gw.Value(t, "hrsync_last_outcome", gwSeries("people", "outcome", c.outcome)); v != 1 {
		t.Errorf("hrsync_last_outcome{outcome=%q} = %v, want 1", c.outcome, v)
	}
	if v, ok := gw.Value(t, "hrsync_last_run_timestamp_seconds", gwSeries("people", "outcome", c.outcome)); !ok || v < from {
		t.Errorf("hrsync_last_run_timestamp_seconds{outcome=%q} = %v (present: %v), want the run's time", c.outcome, v, ok)
	}
	switch success := c.outcome == "ok" || c.outcome == "attention"; {
	case success && (!after.ok || after.lastSuccess < from):
		t.Errorf("hrsync_last_success_timestamp_seconds = %v (present: %v) after a run ending %s, want its time", after.lastSuccess, after.ok, c.outcome)
	case !success && after != (pushed{runs: after.runs, lastSuccess: before.lastSuccess, ok: before.ok}):
		t.Errorf("hrsync_last_success_timestamp_seconds = %v (present: %v) after a run ending %s, want it left at %v (present: %v)",
			after.lastSuccess, after.ok, c.outcome, before.lastSuccess, before.ok)
	}
}

// runRecord is a people run as the store holds it.
type runRecord struct {
	ID, Outcome, Error string
}

// lastPeopleRuns are the newest n people runs' records, oldest first.
func (e *env) lastPeopleRuns(n int) []runRecord {
	e.t.Helper()
	rows, err := e.stateDB().QueryContext(e.t.Context(), e.rebind(fmt.Sprintf(
		`SELECT id, outcome, COALESCE(error, '') FROM runs WHERE job = 'people' ORDER BY started_at DESC, id DESC LIMIT %d`, n)))
	if err != nil {
		e.t.Fatalf("read the last run records: %v", err)
	}
	defer rows.Close()
	var out []runRecord
	for rows.Next() {
		var r runRecord
		if err := rows.Scan(&r.ID, &r.Outcome, &r.Error); err != nil {
			e.t.Fatalf("read the last run records: %v", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		e.t.Fatalf("read the last run records: %v", err)
	}
	slices.Reverse(out)
	return out
}

// peopleRuns counts the people runs recorded; none before the state exists.
func (e *env) peopleRuns() int {
	e.t.Helper()
	if _, err := os.Stat(filepath.Join(e.dir, "state.db")); err != nil {
		return 0
	}
	return e.count("SELECT COUNT(*) FROM runs WHERE job = 'people'")
}

// faults is a setup that injects fs into the emulator.
func faults(fs ...fault) func(t *testing.T, e *env) []string {
	return func(t *testing.T, e *env) []string {
		for _, f := range fs {
			e.emu.addFault(t, f)
		}
		return nil
	}
}

func intPtr(n int) *int { return &n }

// heldThen is a setup that runs a first cycle whose first call the platform
// applied but answered 500 (20 grants held, the export archived), then
// does then before the cycle under test.
func heldThen(then func(t *testing.T, e *env)) func(t *testing.T, e *env) []string {
	return func(t *testing.T, e *env) []string {
		e.emu.addFault(t, fault{Operation: "createPeople", When: "after", Status: 500, Count: 1})
		e.mustRun(4, "run", "people")
		if n := len(e.grants()); n != 20 {
			t.Fatalf("%d grants held after the first cycle, want 20", n)
		}
		then(t, e)
		return nil
	}
}

// holdPeopleLock holds the people job's lock of the tenant (the SQLite
// store's file lock) until the test ends.
func holdPeopleLock(t *testing.T, e *env) []string {
	e.mustRun(0, "migrate")
	f, err := os.OpenFile(filepath.Join(e.dir, "state.db")+".people-"+tenantName+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatalf("hold the people lock: %v", err)
	}
	return nil
}

// sqlSourceDown points the tenant's source at a SQL database nobody serves.
func sqlSourceDown(t *testing.T, e *env) []string {
	dsn := filepath.Join(e.dir, "hr-dsn")
	if err := os.WriteFile(dsn, []byte("postgres://nobody@127.0.0.1:1/hr?sslmode=disable&connect_timeout=2"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.editConfig("      csv:\n        dir: "+e.drop+"\n        stableFor: 1ms\n",
		"      sql:\n        driver: postgres\n        dsnFile: "+dsn+"\n        query: SELECT 1 AS employee_id\n")
	return nil
}

// refusedWhole checks what a run the platform refused leaves: the
// createPeople calls the emulator saw, nobody created, the export still
// in the drop folder, no grant held.
func refusedWhole(calls int) func(t *testing.T, e *env) {
	return func(t *testing.T, e *env) {
		if got := countOp(e.emu.requests(t), "createPeople"); got != calls {
			t.Errorf("the emulator saw %d createPeople calls, want %d", got, calls)
		}
		peopleAtEmulator(0)(t, e)
		if _, err := os.Stat(filepath.Join(e.drop, "employees.csv")); err != nil {
			t.Errorf("the export left the drop folder after a failed run: %v", err)
		}
		if held := e.grants(); len(held) != 0 {
			t.Errorf("%d grants held after a run the platform refused: %+v", len(held), held)
		}
	}
}

// peopleAtEmulator checks how many people the emulator holds.
func peopleAtEmulator(n int) func(t *testing.T, e *env) {
	return func(t *testing.T, e *env) {
		if got := len(e.emu.people(t, e.company)); got != n {
			t.Errorf("%d people at the emulator, want %d", got, n)
		}
	}
}

// heldGrants checks how many grants are held for an operator.
func heldGrants(n int) func(t *testing.T, e *env) {
	return func(t *testing.T, e *env) {
		if got := len(e.grants()); got != n {
			t.Errorf("%d grants held, want %d", got, n)
		}
	}
}
