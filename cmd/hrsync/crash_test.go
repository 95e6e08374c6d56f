package main_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"hrsync/store"
)

// killPoint is when a run is killed: once its createPeople calls seen at
// the emulator reach calls, or after delay when delay is set (a kill while
// the worker starts, migrates, reads or plans).
type killPoint struct {
	calls int
	delay time.Duration
}

// TestCrashPeopleSync kills the worker (SIGKILL) at many points of a run of
// a few thousand people, reruns it, resolves the held grants as an operator
// would, and checks that every person exists once at the emulator with
// exactly the balance the ledger says was granted. The second subtest adds
// 5xx answers and dropped connections after the emulator applied the call.
// The third has people the emulator refuses (a balance above its maximum)
// spread over the export, so that most calls are bisections and kills land
// between the calls and commits of a split batch: the people the platform
// accepts are created once, the refused ones never, and none of their
// grants is applied or held. Each runs on each store.
func TestCrashPeopleSync(t *testing.T) {
	for _, store := range storeKinds() {
		t.Run(store, func(t *testing.T) {
			t.Run("kills", func(t *testing.T) {
				t.Parallel()
				crashScenario(t, store, crashPlain)
			})
			t.Run("kills with 5xx and dropped connections after apply", func(t *testing.T) {
				t.Parallel()
				crashScenario(t, store, crashFaults)
			})
			t.Run("kills during bisections of batches with people the platform refuses", func(t *testing.T) {
				t.Parallel()
				crashScenario(t, store, crashPoison)
			})
		})
	}
}

// crashKind is a variant of the crash scenario.
type crashKind int

const (
	crashPlain  crashKind = iota // kills only
	crashFaults                  // kills with 5xx and dropped connections after apply
	crashPoison                  // kills during bisections of batches with refused people
)

// poisonMaxBalance is the emulator's balance maximum in the poison variant;
// the generated people ask for 10 to 40, the poison ones for more.
const poisonMaxBalance = 40

// isPoison tells whether generated person i is one the emulator refuses in
// the poison variant: one in 61, so that most batches of 50 hold one.
func isPoison(i int) bool { return i%61 == 7 }

func crashScenario(t *testing.T, store string, kind crashKind) {
	faults := kind == crashFaults
	n := 3000
	kills := []killPoint{
		{delay: 15 * time.Millisecond}, {calls: 1}, {calls: 3}, {delay: 120 * time.Millisecond}, {calls: 2},
		{calls: 6}, {calls: 1}, {delay: 250 * time.Millisecond}, {calls: 4}, {calls: 2}, {calls: 5},
	}
	if testing.Short() {
		n = 600
		kills = []killPoint{{delay: 15 * time.Millisecond}, {calls: 1}, {calls: 2}, {delay: 120 * time.Millisecond}, {calls: 1}, {calls: 2}}
	}
	if kind == crashPoison {
		// The first calls of a run are whole batches (4 at a time); later
		// ones are mostly the halves of refused batches.
		kills = []killPoint{{calls: 6}, {calls: 9}, {calls: 5}, {delay: 150 * time.Millisecond}, {calls: 12}, {calls: 7}}
		if !testing.Short() {
			kills = append(kills, killPoint{calls: 10}, killPoint{calls: 6}, killPoint{calls: 15}, killPoint{calls: 8})
		}
	}
	e := newEnv(t, configOptions{batchSize: 50, concurrency: 4, timeout: 10 * time.Second, maxAttempts: 3, store: store})
	if faults {
		e.emu.addFault(t, fault{Operation: "createPeople", When: "after", Status: 500, Latency: "20ms", Rate: 0.2})
		e.emu.addFault(t, fault{Operation: "createPeople", When: "after", Drop: true, Latency: "20ms", Rate: 0.2})
	}
	// Every call is applied at once but answered 20ms later, so that kills
	// land between the platform applying a batch and hrsync learning of it.
	e.emu.addFault(t, fault{Operation: "createPeople", When: "after", Latency: "20ms"})

	staff := genPeople(0, n)
	poison := map[string]bool{}
	if kind == crashPoison {
		e.emu.do(t, "PUT", "/_emulator/limits", map[string]any{"maxBalance": poisonMaxBalance}, nil)
		for i := range staff {
			if isPoison(i) {
				staff[i].balance = "75"
				poison[staff[i].id] = true
			}
		}
	}
	e.dropFile("staff.csv", csvExport(staff))

	killed := 0
	for _, kp := range kills {
		if pendingExports(t, e) == 0 {
			break // a run finished the export before its kill point
		}
		if wasKilled, res := runAndKill(t, e, kp); wasKilled {
			killed++
		} else if res.code != 0 && res.code != 4 {
			t.Fatalf("a run that was not killed ended with %s", res)
		}
	}
	t.Logf("%d runs killed", killed)

	// The operator's part: run again; when grants are held, look at the
	// emulator for the batch's Idempotency-Key and confirm or release each;
	// when people wait for a resend, drop the next day's export.
	confirmed, released := 0, 0
	done := false
	for round := 0; round < 30 && !done; round++ {
		res := e.run("run", "people")
		if res.code != 0 && res.code != 4 {
			t.Fatalf("round %d: %s", round, res)
		}
		c, r := resolveHeld(t, e)
		confirmed, released = confirmed+c, released+r
		waiting := 0 // grants waiting to be sent again; the refused people's never stop waiting
		for _, g := range e.grants("not_applied") {
			if !poison[g.ExternalID] {
				waiting++
			}
		}
		if res.code == 0 && c+r == 0 && waiting == 0 && pendingExports(t, e) == 0 {
			done = true
			break
		}
		if waiting > 0 && pendingExports(t, e) == 0 {
			// Released grants are sent with the next export that lists
			// their people; the same bytes again would be skipped by hash.
			next := slices.Clone(staff)
			shift := (round*97 + 1) % len(next)
			next = append(next[shift:], next[:shift]...)
			e.dropFile("staff-next-"+strconv.Itoa(round)+".csv", csvExport(next))
		}
	}
	if !done {
		t.Fatalf("the runs did not settle after 30 rounds")
	}
	t.Logf("held grants: %d confirmed, %d released", confirmed, released)
	if faults && confirmed == 0 {
		t.Errorf("no held grant was confirmed although calls failed after being applied")
	}

	emu := byExternalID(t, e.emu.people(t, e.company))
	ledger := map[string]float64{}
	for _, g := range e.grants("applied") {
		ledger[g.ExternalID] += g.Amount
	}
	if len(emu) != n-len(poison) {
		t.Errorf("the emulator holds %d generated people, want %d", len(emu), n-len(poison))
	}
	checkPoisonLedger(t, e, poison)
	if kind == crashPoison {
		// A kill that landed during a bisection left a part of a split
		// batch (fewer people than a batch) without an outcome.
		n := e.count(`SELECT COUNT(*) FROM api_journal WHERE error_code = 'interrupted' AND item_count < 50`)
		t.Logf("%d parts of split batches interrupted by a kill", n)
		if n == 0 {
			t.Errorf("no kill landed during a bisection")
		}
	}
	wrong := 0
	for _, p := range staff {
		got, ok := emu[p.id]
		switch {
		case poison[p.id] && ok:
			t.Errorf("person %s, whom the platform refuses, exists at the emulator", p.id)
		case poison[p.id]:
			continue
		case !ok:
			t.Errorf("person %s is missing at the emulator", p.id)
		case len(got.Grants) != 1:
			t.Errorf("person %s received %d grants, want 1", p.id, len(got.Grants))
		case got.Balance != ledger[p.id] || ledger[p.id] != p.wantBalance():
			t.Errorf("person %s: balance %v at the emulator, %v in the ledger, %v asked", p.id, got.Balance, ledger[p.id], p.wantBalance())
		default:
			continue
		}
		if wrong++; wrong > 20 {
			t.Fatal("too many wrong people; stopping")
		}
	}
	if held := e.grants(); len(held) != 0 {
		t.Errorf("%d grants still held", len(held))
	}
}

// checkPoisonLedger checks the ledger after the crash scenario settled:
// every call has an outcome, every grant of a refused person is not applied
// (never applied, never held), and the refusals were reported as rejected
// rows.
func checkPoisonLedger(t *testing.T, e *env, poison map[string]bool) {
	t.Helper()
	if n := e.count(`SELECT COUNT(*) FROM api_journal WHERE state = 'sent'`); n != 0 {
		t.Errorf("%d calls of the journal have no outcome", n)
	}
	states := map[string]string{}
	for _, g := range e.grants("applied", "not_applied", "unknown", "pending", "voided") {
		states[g.ExternalID] = g.State
	}
	for id := range poison {
		if states[id] != "not_applied" {
			t.Errorf("the grant of %s, whom the platform refuses, is %q, want not_applied", id, states[id])
		}
	}
	if len(poison) == 0 {
		return
	}
	if n := e.count(`SELECT COUNT(*) FROM rejections WHERE field = 'addBalance' AND reason LIKE 'refused by the platform: 400%'`); n < len(poison) {
		t.Errorf("%d refusals reported as rejected rows, want at least %d", n, len(poison))
	}
}

// pendingExports counts the exports waiting in the drop folder.
func pendingExports(t *testing.T, e *env) int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(e.drop, "*.csv"))
	if err != nil {
		t.Fatal(err)
	}
	return len(files)
}

// runAndKill starts `run people` and kills it with SIGKILL at kp. It tells
// whether the run was killed, and else how it ended on its own.
func runAndKill(t *testing.T, e *env, kp killPoint) (bool, result) {
	t.Helper()
	return runArgsAndKill(t, e, kp, "run", "people")
}

// runArgsAndKill starts the binary with args and kills it with SIGKILL at
// kp, as runAndKill does.
func runArgsAndKill(t *testing.T, e *env, kp killPoint, args ...string) (bool, result) {
	t.Helper()
	base := countOp(e.emu.requests(t), "createPeople")
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := e.command(ctx, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start a run: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var waitErr error
	finished := false
	if kp.delay > 0 {
		select {
		case waitErr = <-exited:
			finished = true
		case <-time.After(kp.delay):
		}
	} else {
		seen := waitFor(commandTimeout, func() bool {
			select {
			case waitErr = <-exited:
				finished = true
				return true
			default:
			}
			return countOp(e.emu.requests(t), "createPeople")-base >= kp.calls
		})
		if !seen {
			t.Fatalf("the run made fewer than %d calls within %v", kp.calls, commandTimeout)
		}
	}
	if !finished {
		if err := cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
			t.Fatalf("kill the run: %v", err)
		}
		waitErr = <-exited
		waitLockFreed(t, e, args[1]+"-"+tenantName) // run JOB: the job's lock
	}
	res := result{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case waitErr == nil:
		return false, res
	case errors.As(waitErr, &exit) && exit.Exited():
		res.code = exit.ExitCode()
		return false, res
	case errors.As(waitErr, &exit) && !finished:
		return true, res // killed by our signal
	default:
		t.Fatalf("%v: %v\n%s", args, waitErr, res)
	}
	return false, res
}

// resolveHeld does what an operator does with held grants: for each, look
// at the emulator for a grant to that person carrying the Idempotency-Key
// of the call the grant was sent in; confirm it when there is one, else
// release it. It returns how many it confirmed and released.
func resolveHeld(t *testing.T, e *env) (confirmed, released int) {
	t.Helper()
	held := e.grants() // unknown and pending
	if len(held) == 0 {
		return 0, 0
	}
	keys := journalKeys(t, e)
	emu := map[string]emuPerson{}
	for _, p := range e.emu.people(t, e.company) {
		emu[p.ExternalID] = p
	}
	var confirm, release []string
	for _, g := range held {
		key, ok := keys[g.Key]
		if !ok {
			t.Fatalf("held grant %s has no call in the journal", g.Key)
		}
		applied := false
		for _, got := range emu[g.ExternalID].Grants {
			if got.IdempotencyKey == key {
				applied = true
			}
		}
		if applied {
			confirm = append(confirm, g.Key)
		} else {
			release = append(release, g.Key)
		}
	}
	if len(confirm) > 0 {
		e.mustRun(0, append([]string{"grants", "confirm", "--note", "seen at the platform"}, confirm...)...)
	}
	if len(release) > 0 {
		e.mustRun(0, append([]string{"grants", "release", "--note", "not at the platform"}, release...)...)
	}
	return len(confirm), len(release)
}

// journalKeys maps each grant's key to the Idempotency-Key of the call it
// was last sent in, read from the worker's state (SQLite or PostgreSQL,
// while no worker runs).
func journalKeys(t *testing.T, e *env) map[string]string {
	t.Helper()
	rows, err := e.stateDB().QueryContext(t.Context(), `SELECT g.grant_key, j.idempotency_key
		FROM grants g JOIN api_journal j ON j.id = g.journal_id`)
	if err != nil {
		t.Fatalf("read the journal: %v", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var g, k string
		if err := rows.Scan(&g, &k); err != nil {
			t.Fatal(err)
		}
		out[g] = k
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// waitLockFreed waits until the lock a killed run held can be taken. A file
// lock dies with its process; a PostgreSQL advisory lock only when the
// server notices that the killed client's connection closed, which on a
// loaded machine can come after the next run has started (and found the
// lock held: exit 5).
func waitLockFreed(t *testing.T, e *env, name string) {
	t.Helper()
	if e.storeKind != storePostgres {
		return
	}
	st, err := store.Open(t.Context(), e.pgURL, store.Options{Schema: e.schema, ReadOnly: true})
	if errors.Is(err, store.ErrNoState) || errors.Is(err, store.ErrStateOutdated) {
		return // killed before its state was migrated: before it took the lock
	}
	if err != nil {
		t.Fatalf("open the state to wait for the lock: %v", err)
	}
	defer func() { _ = st.Close() }()
	var lastErr error
	freed := waitFor(commandTimeout, func() bool {
		release, err := st.TryLock(t.Context(), name)
		if err != nil {
			lastErr = err
			return false
		}
		lastErr = release()
		return true
	})
	if !freed || lastErr != nil {
		t.Fatalf("the killed run's lock %s: %v", name, lastErr)
	}
}
