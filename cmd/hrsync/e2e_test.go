package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// planDoc is the part of `hrsync plan --json` the tests read: the people
// plans of the ready exports.
type planDoc struct {
	People []plan `json:"people"`
}

// plan is the part of a people plan the tests read.
type plan struct {
	Stats struct {
		Rows     int `json:"rows"`
		Accepted int `json:"accepted"`
		Rejected int `json:"rejected"`
	} `json:"stats"`
	Changed   []struct{ ExternalID string } `json:"changed"`
	Departed  []string                      `json:"departed"`
	Unchanged int                           `json:"unchanged"`
	Calls     []struct {
		Operation   string    `json:"operation"`
		ExternalIDs []string  `json:"externalIds"`
		Grants      []float64 `json:"grants"`
		Total       float64   `json:"total"`
	} `json:"calls"`
}

// checkPeople fails the test unless the emulator holds exactly want (by
// externalId), each once, each with one grant of the balance the export
// asked for.
func checkPeople(t *testing.T, e *env, want []person) {
	t.Helper()
	got := byExternalID(t, e.emu.people(t, e.company))
	if len(got) != len(want) {
		t.Errorf("the emulator holds %d generated people, want %d", len(got), len(want))
	}
	for _, p := range want {
		g, ok := got[p.id]
		if !ok {
			t.Errorf("person %s is missing at the emulator", p.id)
			continue
		}
		if g.Balance != p.wantBalance() || len(g.Grants) != 1 {
			t.Errorf("person %s: balance %v from %d grants, want %v from one grant", p.id, g.Balance, len(g.Grants), p.wantBalance())
		}
	}
}

// apiCalls counts the partner API calls in the emulator's request log.
func apiCalls(t *testing.T, e *env) int {
	t.Helper()
	n := 0
	for _, r := range e.emu.requests(t) {
		if r.OperationID != "" {
			n++
		}
	}
	return n
}

// step runs one subtest of a test whose steps build on each other, and
// stops the test at the first step that fails.
func step(t *testing.T, name string, fn func(t *testing.T)) {
	t.Helper()
	if !t.Run(name, fn) {
		t.FailNow()
	}
}

// TestE2EPeopleSync runs the binary through the life of one tenant's
// exports against the emulator, once on each store; each step builds on
// the state the one before left, so the subtests run in order and stop at
// the first failure.
func TestE2EPeopleSync(t *testing.T) {
	for _, store := range storeKinds() {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			e2ePeopleSync(t, store)
		})
	}
}

func e2ePeopleSync(t *testing.T, store string) {
	e := newEnv(t, configOptions{batchSize: 25, concurrency: 2, store: store})
	staff := genPeople(0, 100)
	first := csvExport(staff)

	step(t, "validate and plan make no call and change no state", func(t *testing.T) {
		e := e.in(t)
		path := e.dropFile("staff-1.csv", first)
		res := e.mustRun(0, "validate")
		if !strings.Contains(res.stdout, "100 rows, 100 accepted, 0 rejected") {
			t.Errorf("validate's summary: %s", res)
		}
		res = e.mustRun(0, "plan", "--json")
		var doc planDoc
		if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
			t.Fatalf("decode plan: %v\n%s", err, res)
		}
		plans := doc.People
		if len(plans) != 1 {
			t.Fatalf("want one plan, got %d", len(plans))
		}
		var planned []string
		var total, want float64
		for _, c := range plans[0].Calls {
			if c.Operation != "createPeople" || len(c.ExternalIDs) > 25 {
				t.Errorf("planned call %s of %d people, want createPeople of at most 25", c.Operation, len(c.ExternalIDs))
			}
			planned = append(planned, c.ExternalIDs...)
			total += c.Total
		}
		for _, p := range staff {
			want += p.wantBalance()
		}
		if len(plans[0].Calls) != 4 || len(planned) != 100 || total != want {
			t.Errorf("planned %d calls for %d people granting %v; want 4 calls for 100 people granting %v",
				len(plans[0].Calls), len(planned), total, want)
		}
		if n := apiCalls(t, e); n != 0 {
			t.Errorf("validate and plan made %d API calls, want none", n)
		}
		if _, err := os.Stat(path); err != nil {
			t.Errorf("the export left the drop folder: %v", err)
		}
		if got := e.emu.people(t, e.company); len(got) != 0 {
			t.Errorf("the emulator holds %d generated people before any run", len(got))
		}
		if g := e.grants("pending", "applied", "not_applied", "unknown", "voided"); len(g) != 0 {
			t.Errorf("the ledger holds %d grants before any run", len(g))
		}
		if e.stateExists() {
			t.Errorf("validate, plan or grants list created the state before any run")
		}
	})

	step(t, "first run creates every valid person once with the right balance", func(t *testing.T) {
		e := e.in(t)
		res := e.mustRun(0, "run", "people")
		checkPeople(t, e, staff)
		if n := countOp(e.emu.requests(t), "createPeople"); n != 4 {
			t.Errorf("%d createPeople calls, want 4 (100 people in batches of 25)", n)
		}
		if !slices.Contains(e.archived("processed"), "staff-1.csv") {
			t.Errorf("the export is not in processed/: %v\n%s", e.archived("processed"), res)
		}
		if r := e.report("processed", "staff-1.csv"); r.Outcome != "ok" || r.Counts["created"] != 100 {
			t.Errorf("report: outcome %s, counts %v; want ok with 100 created", r.Outcome, r.Counts)
		}
		if g := e.grants("applied"); len(g) != 100 {
			t.Errorf("the ledger holds %d applied grants, want 100", len(g))
		}
	})

	step(t, "the same file dropped again is recognized by its hash", func(t *testing.T) {
		e := e.in(t)
		e.emu.clearRequests(t)
		e.dropFile("staff-1-again.csv", first)
		e.mustRun(0, "run", "people")
		if n := apiCalls(t, e); n != 0 {
			t.Errorf("%d API calls for a file already processed, want none", n)
		}
		if r := e.report("processed", "staff-1-again.csv"); !r.Duplicate {
			t.Errorf("the report does not say the file is a duplicate: %+v", r)
		}
		checkPeople(t, e, staff)
	})

	step(t, "a new file with the same people makes no createPeople call", func(t *testing.T) {
		e := e.in(t)
		e.emu.clearRequests(t)
		reversed := slices.Clone(staff)
		slices.Reverse(reversed)
		e.dropFile("staff-2.csv", csvExport(reversed))
		e.mustRun(0, "run", "people")
		if n := countOp(e.emu.requests(t), "createPeople"); n != 0 {
			t.Errorf("%d createPeople calls for known people, want none", n)
		}
		if r := e.report("processed", "staff-2.csv"); r.Duplicate || r.Counts["unchanged"] != 100 {
			t.Errorf("report: duplicate %v, counts %v; want 100 unchanged, not a duplicate", r.Duplicate, r.Counts)
		}
		checkPeople(t, e, staff)
	})

	step(t, "five new hires create exactly those five", func(t *testing.T) {
		e := e.in(t)
		e.emu.clearRequests(t)
		staff = genPeople(0, 105)
		e.dropFile("staff-3.csv", csvExport(staff))
		e.mustRun(0, "run", "people")
		log := e.emu.requests(t)
		if n := countOp(log, "createPeople"); n != 1 {
			t.Errorf("%d createPeople calls for five new hires, want 1", n)
		}
		if r := e.report("processed", "staff-3.csv"); r.Counts["created"] != 5 || r.Counts["unchanged"] != 100 {
			t.Errorf("report counts %v, want 5 created and 100 unchanged", r.Counts)
		}
		checkPeople(t, e, staff)
	})

	step(t, "a changed department is a change and makes no call", func(t *testing.T) {
		e := e.in(t)
		e.emu.clearRequests(t)
		before := e.emu.people(t, e.company)
		staff[3].dept = "Moved Elsewhere"
		e.dropFile("staff-4.csv", csvExport(staff))
		e.mustRun(0, "run", "people")
		if n := apiCalls(t, e); n != 0 {
			t.Errorf("%d API calls for a changed department, want none", n)
		}
		if r := e.report("processed", "staff-4.csv"); r.Counts["changed"] != 1 || r.Counts["created"] != 0 {
			t.Errorf("report counts %v, want 1 changed and none created", r.Counts)
		}
		if after := e.emu.people(t, e.company); len(after) != len(before) {
			t.Errorf("the emulator went from %d to %d people", len(before), len(after))
		}
		checkPeople(t, e, staff)
	})

	step(t, "an e-mail change with the same externalId is the same person", func(t *testing.T) {
		e := e.in(t)
		e.emu.clearRequests(t)
		staff[4].email = "p00004.renamed@example.test"
		e.dropFile("staff-5.csv", csvExport(staff))
		e.mustRun(0, "run", "people")
		if n := apiCalls(t, e); n != 0 {
			t.Errorf("%d API calls for a changed e-mail, want none", n)
		}
		if r := e.report("processed", "staff-5.csv"); r.Counts["changed"] != 1 || r.Counts["created"] != 0 {
			t.Errorf("report counts %v, want 1 changed and none created", r.Counts)
		}
		checkPeople(t, e, staff)
	})

	truncated := csvExport(staff[:60])
	step(t, "a truncated file trips the safeguard before any call", func(t *testing.T) {
		e := e.in(t)
		e.emu.clearRequests(t)
		e.dropFile("staff-6.csv", truncated)
		res := e.mustRun(3, "run", "people")
		if n := apiCalls(t, e); n != 0 {
			t.Errorf("%d API calls from a run a safeguard stopped, want none", n)
		}
		if !slices.Contains(e.archived("failed"), "staff-6.csv") {
			t.Fatalf("the truncated export is not in failed/: %v\n%s", e.archived("failed"), res)
		}
		r := e.report("failed", "staff-6.csv")
		var names []string
		for _, s := range r.Safeguards {
			names = append(names, s.Name)
		}
		if r.Outcome != "safeguard" || !slices.Contains(names, "minRowsRatio") {
			t.Errorf("report: outcome %s, safeguards %v; want safeguard naming minRowsRatio", r.Outcome, names)
		}
		if !strings.Contains(res.stdout, "SAFEGUARD minRowsRatio") {
			t.Errorf("the run's summary does not name the safeguard:\n%s", res)
		}
		if n := e.count("SELECT COUNT(*) FROM people WHERE departed_at IS NOT NULL"); n != 0 {
			t.Errorf("a run a safeguard stopped marked %d people departed", n)
		}
		// The plan of the same file still sees 105 active people.
		res = e.mustRun(0, "plan", "--json", filepath.Join(e.drop, "failed", "staff-6.csv"))
		var doc planDoc
		if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil || len(doc.People) != 1 {
			t.Fatalf("decode plan: %v\n%s", err, res)
		}
		plans := doc.People
		if len(plans[0].Departed) != 45 {
			t.Errorf("the plan would mark %d people departed, want 45", len(plans[0].Departed))
		}
	})

	step(t, "--override-safeguards goes on and marks the missing people departed, not deleted", func(t *testing.T) {
		e := e.in(t)
		e.emu.clearRequests(t)
		e.dropFile("staff-6.csv", truncated)
		e.mustRun(0, "run", "people", "--override-safeguards")
		if n := apiCalls(t, e); n != 0 {
			t.Errorf("%d API calls, want none (nobody is new)", n)
		}
		r := e.report("processed", "staff-6.csv")
		if r.Counts["departed"] != 45 || len(r.Safeguards) == 0 {
			t.Errorf("report counts %v, safeguards %d; want 45 departed and the overridden safeguards listed", r.Counts, len(r.Safeguards))
		}
		// Every one of the 105 is still at the emulator, with the balance
		// granted once, and in hrsync's state, 45 of them departed.
		checkPeople(t, e, staff)
		if n := e.count("SELECT COUNT(*) FROM people"); n != 105 {
			t.Errorf("state holds %d people, want 105", n)
		}
		if n := e.count("SELECT COUNT(*) FROM people WHERE departed_at IS NOT NULL"); n != 45 {
			t.Errorf("state holds %d departed people, want 45", n)
		}
		// A later export with the same 60 departs nobody else.
		res := e.mustRun(0, "plan", "--json", filepath.Join(e.drop, "processed", "staff-6.csv"))
		var doc planDoc
		if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil || len(doc.People) != 1 {
			t.Fatalf("decode plan: %v\n%s", err, res)
		}
		plans := doc.People
		if len(plans[0].Departed) != 0 || plans[0].Unchanged != 60 {
			t.Errorf("plan: %d departed, %d unchanged; want 0 and 60", len(plans[0].Departed), plans[0].Unchanged)
		}
	})

	step(t, "an export with bad rows creates the good ones and reports each bad row", func(t *testing.T) {
		e := e.in(t)
		e.emu.clearRequests(t)
		good := genPeople(200, 203)
		badEmail, badDate, dup := genPerson(203), genPerson(204), genPerson(205)
		badEmail.email = "not-an-email"
		badDate.start = "2023-02-30"
		rows := append(slices.Clone(staff[:60]), good[0], badEmail, good[1], badDate, dup, good[2], dup)
		// Line 1 is the header; rows[i] is on line i+2. Both occurrences of
		// a duplicate id are rejected.
		wantLines := map[int]string{63: "email", 65: "startDate", 66: "externalId", 68: "externalId"}
		e.dropFile("staff-7.csv", csvExport(rows))
		res := e.mustRun(4, "run", "people")
		if n := countOp(e.emu.requests(t), "createPeople"); n != 1 {
			t.Errorf("%d createPeople calls, want 1 for the three good new people", n)
		}
		want := append(slices.Clone(staff), good...)
		checkPeople(t, e, want)
		if !slices.Contains(e.archived("processed"), "staff-7.csv") {
			t.Fatalf("the export is not in processed/: %v\n%s", e.archived("processed"), res)
		}
		r := e.report("processed", "staff-7.csv")
		got := map[int][]string{}
		for _, rej := range r.Rejections {
			got[rej.Line] = append(got[rej.Line], rej.Field)
			if rej.Reason == "" {
				t.Errorf("rejection on line %d has no reason", rej.Line)
			}
		}
		if len(got) != len(wantLines) {
			t.Errorf("report lists rejections on lines %v, want %v", got, wantLines)
		}
		for line, field := range wantLines {
			if !slices.Contains(got[line], field) {
				t.Errorf("line %d: rejected fields %q, want %q among them", line, got[line], field)
			}
			if !strings.Contains(res.stdout, "staff-7.csv:"+strconv.Itoa(line)+": "+field) {
				t.Errorf("the run's summary does not report line %d (%s):\n%s", line, field, res.stdout)
			}
		}
		if r.Outcome != "attention" {
			t.Errorf("report outcome %s, want attention", r.Outcome)
		}
	})
}

// TestE2EConcurrentRuns starts two `run people` at once: one runs, the
// other exits 5 without a call, and no call is made twice.
func TestE2EConcurrentRuns(t *testing.T) {
	e := newEnv(t, configOptions{batchSize: 25, concurrency: 1})
	// The store is migrated first: two first-ever runs migrating one fresh
	// SQLite file at once race in goose (the loser exits 1 with "table runs
	// already exists"), a store issue reported apart from this test.
	e.mustRun(0, "migrate")
	// Each createPeople call takes a second, so the run that wins the lock
	// holds it for seconds, far longer than the other takes to start.
	e.emu.addFault(t, fault{Operation: "createPeople", Latency: "1s"})
	staff := genPeople(0, 100)
	e.dropFile("staff.csv", csvExport(staff))

	var wg sync.WaitGroup
	results := make([]result, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = e.runNoFatal("run", "people")
		}()
	}
	wg.Wait()
	codes := []int{results[0].code, results[1].code}
	slices.Sort(codes)
	if !slices.Equal(codes, []int{0, 5}) {
		t.Fatalf("exit codes %v, want one 0 and one 5:\n%s\n---\n%s", codes, results[0], results[1])
	}
	for _, r := range results {
		if r.code == 5 && !strings.Contains(r.stderr, "lock") {
			t.Errorf("the run that lost does not say the lock is held:\n%s", r)
		}
	}
	log := e.emu.requests(t)
	keys := map[string]int{}
	for _, r := range log {
		if r.OperationID == "createPeople" {
			keys[r.IdempotencyKey]++
		}
	}
	if len(keys) != 4 {
		t.Errorf("%d distinct createPeople calls, want 4", len(keys))
	}
	for k, n := range keys {
		if n != 1 {
			t.Errorf("call %s made %d times", k, n)
		}
	}
	checkPeople(t, e, staff)
}

// TestE2EHeldGrants follows held grants through an operator's hands: a
// call the platform applied but answered 500, and a call it refused with a
// 500 before applying it. Both are held, never resent on their own; the
// operator confirms the first and releases the second; the next export
// sends only the released people, once.
func TestE2EHeldGrants(t *testing.T) {
	e := newEnv(t, configOptions{batchSize: 10, concurrency: 1})
	e.emu.addFault(t, fault{Operation: "createPeople", When: "after", Status: 500, Count: 1})
	e.emu.addFault(t, fault{Operation: "createPeople", When: "before", Status: 500, Count: 1})
	staff := genPeople(0, 30)
	e.dropFile("staff.csv", csvExport(staff))

	e.mustRun(4, "run", "people")
	held := e.grants()
	if len(held) != 20 {
		t.Fatalf("%d grants held, want 20 (two calls of 10 answered 500)", len(held))
	}

	step(t, "held grants stay held across runs without a call", func(t *testing.T) {
		e := e.in(t)
		e.emu.clearRequests(t)
		res := e.mustRun(4, "run", "people")
		if !strings.Contains(res.stdout, "20 grants held") {
			t.Errorf("the run does not say grants are held:\n%s", res)
		}
		if n := apiCalls(t, e); n != 0 {
			t.Errorf("%d API calls, want none", n)
		}
	})

	step(t, "the held grants are listed and decided within their job and rule", func(t *testing.T) {
		e := e.in(t)
		list := func(args ...string) []ledgerGrant {
			res := e.mustRun(0, append([]string{"grants", "list", "--json"}, args...)...)
			var out []ledgerGrant
			if err := json.Unmarshal([]byte(res.stdout), &out); err != nil {
				t.Fatalf("decode grants list: %v\n%s", err, res)
			}
			return out
		}
		if n := len(list("--job", "people", "--rule", "initial")); n != 20 {
			t.Errorf("--job people --rule initial lists %d grants, want the 20 held", n)
		}
		if n := len(list("--job", "grants")); n != 0 {
			t.Errorf("--job grants lists %d grants, want none", n)
		}
		if n := len(list("--rule", "birthday")); n != 0 {
			t.Errorf("--rule birthday lists %d grants, want none", n)
		}
		res := e.mustRun(2, "grants", "list", "--job", "nope")
		if !strings.Contains(res.stderr, "nope") || !strings.Contains(res.stderr, "want people or grants") {
			t.Errorf("an unknown job's error: %s", res)
		}
		res = e.mustRun(1, "grants", "confirm", "--job", "grants", held[0].Key)
		if !strings.Contains(res.stderr, "is of job people, rule initial: outside --job grants --rule any") {
			t.Errorf("a decision outside its scope: %s", res)
		}
		if n := len(e.grants()); n != 20 {
			t.Errorf("%d grants held after a refused decision, want 20", n)
		}
	})

	step(t, "the operator confirms the applied call and releases the other", func(t *testing.T) {
		e := e.in(t)
		keys := journalKeys(t, e)
		emu := byExternalID(t, e.emu.people(t, e.company))
		var confirm, release []string
		for _, g := range held {
			p, ok := emu[g.ExternalID]
			if ok && len(p.Grants) == 1 && p.Grants[0].IdempotencyKey == keys[g.Key] {
				confirm = append(confirm, g.Key)
			} else {
				release = append(release, g.Key)
			}
		}
		if len(confirm) != 10 || len(release) != 10 {
			t.Fatalf("%d grants applied at the emulator and %d not, want 10 and 10", len(confirm), len(release))
		}
		res := e.mustRun(0, append([]string{"grants", "confirm"}, confirm...)...)
		if !strings.Contains(res.stdout, confirm[0]+": confirmed") {
			t.Errorf("confirm's output: %s", res)
		}
		e.mustRun(0, append([]string{"grants", "release"}, release...)...)
		if g := e.grants(); len(g) != 0 {
			t.Errorf("%d grants still held after the decisions", len(g))
		}
	})

	step(t, "the next export sends the released people only, once", func(t *testing.T) {
		e := e.in(t)
		e.emu.clearRequests(t)
		next := slices.Clone(staff)
		slices.Reverse(next)
		e.dropFile("staff-next.csv", csvExport(next))
		e.mustRun(0, "run", "people")
		if n := countOp(e.emu.requests(t), "createPeople"); n != 1 {
			t.Errorf("%d createPeople calls, want 1 for the 10 released people", n)
		}
		checkPeople(t, e, staff)
		if g := e.grants("applied"); len(g) != 30 {
			t.Errorf("%d applied grants in the ledger, want 30", len(g))
		}
	})
}
