package main_test

// End-to-end tests of `hrsync daemon` and `hrsync status`: the real binary
// on second-level schedules against the emulator process.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// everySecond is the people schedule of the daemon tests.
const everySecond = "* * * * * *"

// lockedBuffer is a bytes.Buffer safe for a writer and a reader at once.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// daemonProc is `hrsync daemon` running as a process.
type daemonProc struct {
	cmd    *exec.Cmd
	url    string
	scim   chan string // the SCIM endpoint's base URL, when it serves one
	stderr *lockedBuffer
	done   chan struct{}
	err    error // set when done is closed
}

// scheduleDaemon adds a people schedule and an HTTP address on a free
// loopback port to the env's configuration.
func (e *env) scheduleDaemon(spec string) {
	e.t.Helper()
	f, err := os.OpenFile(e.config, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	if _, err := fmt.Fprintf(f, "    schedules:\n      people: %q\nhttp:\n  listen: 127.0.0.1:0\n", spec); err != nil {
		e.t.Fatal(err)
	}
}

// startDaemon starts the daemon, with extra flags, and waits for its
// listening line; the daemon is killed when the test ends if it still runs.
func (e *env) startDaemon(extra ...string) *daemonProc {
	e.t.Helper()
	cmd := e.command(context.Background(), append([]string{"daemon", "--grace", "60s"}, extra...)...)
	d := &daemonProc{cmd: cmd, stderr: &lockedBuffer{}, done: make(chan struct{}), scim: make(chan string, 1)}
	cmd.Stderr = d.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		e.t.Fatalf("start the daemon: %v", err)
	}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if _, after, ok := strings.Cut(sc.Text(), "daemon listening on "); ok {
				urls <- strings.Fields(after)[0]
			}
			if _, after, ok := strings.Cut(sc.Text(), "scim endpoint listening on "); ok {
				d.scim <- strings.Fields(after)[0]
			}
		}
		_, _ = io.Copy(io.Discard, out)
		d.err = cmd.Wait()
		close(d.done)
	}()
	e.t.Cleanup(func() {
		select {
		case <-d.done:
		default:
			_ = cmd.Process.Kill()
			<-d.done
		}
	})
	select {
	case d.url = <-urls:
	case <-d.done:
		e.t.Fatalf("the daemon exited before listening: %v\n%s", d.err, d.stderr)
	case <-time.After(30 * time.Second):
		e.t.Fatalf("the daemon did not listen within 30s:\n%s", d.stderr)
	}
	return d
}

// stop sends SIGTERM and returns the exit code (-1 if it did not exit
// within two minutes).
func (d *daemonProc) stop(t *testing.T) int {
	t.Helper()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	select {
	case <-d.done:
	case <-time.After(2 * time.Minute):
		return -1
	}
	var exit *exec.ExitError
	switch {
	case d.err == nil:
		return 0
	case errors.As(d.err, &exit):
		return exit.ExitCode()
	}
	return -1
}

// scrape reads /metrics and returns the value of the sample whose name is
// name and whose labels include every one of labels ("k=v"); 0 when absent.
func (d *daemonProc) scrape(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	sum := 0.0
	for line := range strings.Lines(d.metricsText(t)) {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		match := true
		for _, l := range labels {
			k, v, _ := strings.Cut(l, "=")
			if !strings.Contains(line, k+`="`+v+`"`) {
				match = false
			}
		}
		if !match {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		sum += v
	}
	return sum
}

// metricsText reads /metrics in the exposition format and fails the test
// unless it answers 200.
func (d *daemonProc) metricsText(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.url+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("scrape /metrics: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape /metrics: %s %v", resp.Status, err)
	}
	return string(body)
}

// get answers an endpoint's status code.
func (d *daemonProc) get(t *testing.T, path string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// logLine is the part of a JSON log line the tests read.
type logLine struct {
	Msg     string `json:"msg"`
	Time    string `json:"time"`
	Job     string `json:"job"`
	Tenant  string `json:"tenant"`
	Tick    string `json:"tick"`
	Outcome string `json:"outcome"`
}

// logs decodes the daemon's JSON log lines.
func (d *daemonProc) logs(t *testing.T) []logLine {
	t.Helper()
	var out []logLine
	for line := range strings.Lines(d.stderr.String()) {
		var l logLine
		if json.Unmarshal([]byte(line), &l) == nil {
			out = append(out, l)
		}
	}
	return out
}

// cycleStarts returns the times the people cycles started, in order.
func (d *daemonProc) cycleStarts(t *testing.T) []time.Time {
	t.Helper()
	var out []time.Time
	for _, l := range d.logs(t) {
		if l.Msg != "cycle started" || l.Job != "people" {
			continue
		}
		at, err := time.Parse("2006-01-02T15:04:05.000Z0700", l.Time)
		if err != nil {
			t.Fatalf("log time %q: %v", l.Time, err)
		}
		out = append(out, at)
	}
	return out
}

// TestE2EDaemonSchedulesAndMetrics runs the daemon on a one-second people
// schedule: the job runs every second, an export dropped meanwhile is
// synced, /metrics shows the counters move, and SIGTERM exits 0.
func TestE2EDaemonSchedulesAndMetrics(t *testing.T) {
	e := newEnv(t, configOptions{batchSize: 25, concurrency: 1})
	e.scheduleDaemon(everySecond)
	d := e.startDaemon()

	t.Run("health", func(t *testing.T) {
		if code := d.get(t, "/healthz"); code != http.StatusOK {
			t.Errorf("/healthz answered %d", code)
		}
		if code := d.get(t, "/readyz"); code != http.StatusOK {
			t.Errorf("/readyz answered %d", code)
		}
	})

	var runsBefore float64
	t.Run("runs every second", func(t *testing.T) {
		if !waitFor(60*time.Second, func() bool {
			return d.scrape(t, "hrsync_runs_total", "job=people", "tenant=acme", "outcome=ok") >= 3
		}) {
			t.Fatalf("fewer than 3 people cycles ran:\n%s", d.stderr)
		}
		starts := d.cycleStarts(t)
		seconds := map[int64]bool{}
		for _, s := range starts {
			sec := s.Unix()
			if seconds[sec] {
				t.Errorf("two cycles started in second %v: %v", s, starts)
			}
			seconds[sec] = true
		}
		runsBefore = d.scrape(t, "hrsync_runs_total", "job=people", "tenant=acme")
	})

	staff := genPeople(0, 30)
	t.Run("an export is synced and the counters move", func(t *testing.T) {
		if got := d.scrape(t, "hrsync_people_created_total", "tenant=acme"); got != 0 {
			t.Fatalf("people created before any export: %v", got)
		}
		e.in(t).dropFile("staff.csv", csvExport(staff))
		if !waitFor(60*time.Second, func() bool {
			return d.scrape(t, "hrsync_people_created_total", "tenant=acme") == 30
		}) {
			t.Fatalf("hrsync_people_created_total did not reach 30:\n%s", d.stderr)
		}
		if got := d.scrape(t, "hrsync_grants_applied_total", "tenant=acme"); got != 30 {
			t.Errorf("hrsync_grants_applied_total = %v, want 30", got)
		}
		if got := d.scrape(t, "hrsync_api_calls_total", "endpoint=createPeople", "status=201"); got != 2 {
			t.Errorf("createPeople calls answered 201 = %v, want 2 (30 people in batches of 25)", got)
		}
		if got := d.scrape(t, "hrsync_grants_held", "tenant=acme"); got != 0 {
			t.Errorf("hrsync_grants_held = %v, want 0", got)
		}
		if got := d.scrape(t, "hrsync_last_success_timestamp_seconds", "job=people", "tenant=acme"); got <= 0 {
			t.Errorf("no time of last success: %v", got)
		}
		if after := d.scrape(t, "hrsync_runs_total", "job=people", "tenant=acme"); after <= runsBefore {
			t.Errorf("hrsync_runs_total did not move: %v then %v", runsBefore, after)
		}
		checkPeople(t, e, staff)
	})

	t.Run("status shows the run", func(t *testing.T) {
		res := e.in(t).mustRun(0, "status", "--json")
		var st struct {
			Runs []struct {
				Job, Tenant, Outcome string
				Counts               map[string]int
			}
			Tenants []struct {
				Name       string
				HeldGrants int
				Files      struct{ Waiting, Processed, Failed int }
			}
		}
		if err := json.Unmarshal([]byte(res.stdout), &st); err != nil {
			t.Fatalf("decode status: %v\n%s", err, res)
		}
		if len(st.Runs) != 1 || st.Runs[0].Job != "people" || st.Runs[0].Outcome != "ok" || st.Runs[0].Counts["created"] != 30 {
			t.Errorf("runs = %+v, want one ok people run that created 30", st.Runs)
		}
		if len(st.Tenants) != 1 || st.Tenants[0].Files.Processed != 1 || st.Tenants[0].Files.Waiting != 0 || st.Tenants[0].HeldGrants != 0 {
			t.Errorf("tenants = %+v, want one processed file, none waiting, no grant held", st.Tenants)
		}
	})

	t.Run("SIGTERM exits 0", func(t *testing.T) {
		if code := d.stop(t); code != 0 {
			t.Fatalf("daemon exit %d, want 0:\n%s", code, d.stderr)
		}
		if !strings.Contains(d.stderr.String(), "stopped cleanly") {
			t.Errorf("the daemon did not say it stopped cleanly:\n%s", d.stderr)
		}
	})
}

// TestE2EDaemonSlowRunNotOverlapped makes one people run last several
// ticks of a one-second schedule: the ticks that come meanwhile are
// skipped, cycles never overlap, and no call is made twice.
func TestE2EDaemonSlowRunNotOverlapped(t *testing.T) {
	e := newEnv(t, configOptions{batchSize: 25, concurrency: 1})
	e.scheduleDaemon(everySecond)
	e.emu.addFault(t, fault{Operation: "createPeople", Latency: "1500ms"})
	staff := genPeople(0, 75)
	e.dropFile("staff.csv", csvExport(staff))
	d := e.startDaemon()

	if !waitFor(2*time.Minute, func() bool {
		return d.scrape(t, "hrsync_people_created_total", "tenant=acme") == 75
	}) {
		t.Fatalf("the 75 people were not created:\n%s", d.stderr)
	}
	t.Run("ticks skipped while the run goes on", func(t *testing.T) {
		if got := d.scrape(t, "hrsync_runs_skipped_total", "job=people", "tenant=acme"); got < 1 {
			t.Errorf("hrsync_runs_skipped_total = %v, want at least 1 (three 1.5s calls on a 1s schedule)", got)
		}
	})
	t.Run("cycles never overlap", func(t *testing.T) {
		open := false
		for _, l := range d.logs(t) {
			if l.Job != "people" {
				continue
			}
			switch l.Msg {
			case "cycle started":
				if open {
					t.Fatalf("a cycle started while another was going:\n%s", d.stderr)
				}
				open = true
			case "cycle done", "cycle failed", "cycle done, needs attention", "cycle skipped: another run holds the lock":
				open = false
			}
		}
	})
	t.Run("no call made twice", func(t *testing.T) {
		keys := map[string]int{}
		for _, r := range e.emu.requests(t) {
			if r.OperationID == "createPeople" {
				keys[r.IdempotencyKey]++
			}
		}
		if len(keys) != 3 {
			t.Errorf("%d distinct createPeople calls, want 3", len(keys))
		}
		for k, n := range keys {
			if n != 1 {
				t.Errorf("call %s made %d times", k, n)
			}
		}
		checkPeople(t, e, staff)
	})
	if code := d.stop(t); code != 0 {
		t.Fatalf("daemon exit %d, want 0:\n%s", code, d.stderr)
	}
}

// TestE2EDaemonSIGTERMMidRun stops the daemon (--grace 6s) while a people
// run of 8 one-second calls is between calls: the run goes on for two
// thirds of the grace period, is then cut short after the call in flight,
// and is recorded interrupted, not failed; the daemon exits 0 once that
// call is committed, leaves no grant pending and the export in place, and
// a rerun completes the work without a call made twice.
func TestE2EDaemonSIGTERMMidRun(t *testing.T) {
	e := newEnv(t, configOptions{batchSize: 25, concurrency: 1})
	e.scheduleDaemon(everySecond)
	e.emu.addFault(t, fault{Operation: "createPeople", Latency: "1s"})
	staff := genPeople(0, 200)
	e.dropFile("staff.csv", csvExport(staff))
	d := e.startDaemon("--grace", "6s")

	if !waitFor(time.Minute, func() bool { return countOp(e.emu.requests(t), "createPeople") >= 1 }) {
		t.Fatalf("no createPeople call reached the emulator:\n%s", d.stderr)
	}
	if code := d.stop(t); code != 0 {
		t.Fatalf("daemon exit %d, want 0:\n%s", code, d.stderr)
	}

	t.Run("nothing half-written", func(t *testing.T) {
		e := e.in(t)
		if n := e.count("SELECT COUNT(*) FROM grants WHERE state IN ('pending', 'unknown')"); n != 0 {
			t.Errorf("%d grants pending or unknown after a graceful stop", n)
		}
		if n := e.count("SELECT COUNT(*) FROM api_journal WHERE state = 'sent'"); n != 0 {
			t.Errorf("%d calls without a committed outcome", n)
		}
		if n := e.count("SELECT COUNT(*) FROM runs WHERE outcome = 'running'"); n != 0 {
			t.Errorf("%d runs left running", n)
		}
		if n := e.count("SELECT COUNT(*) FROM runs WHERE outcome = 'failed'"); n != 0 {
			t.Errorf("%d runs recorded failed by the stop", n)
		}
		if n := e.count("SELECT COUNT(*) FROM runs WHERE outcome = 'interrupted' AND error LIKE 'interrupted: the process was stopped%'"); n != 1 {
			t.Errorf("%d runs recorded interrupted by the stop, want 1", n)
		}
		applied := e.count("SELECT COUNT(*) FROM grants WHERE state = 'applied'")
		created := len(e.emu.people(t, e.company))
		if applied != created || applied == 0 || applied == len(staff) {
			t.Errorf("%d grants applied in the ledger, %d people at the emulator: want the same, part of %d", applied, created, len(staff))
		}
		if _, err := os.Stat(filepath.Join(e.drop, "staff.csv")); err != nil {
			t.Errorf("the export left the drop folder although the run was stopped: %v", err)
		}
	})
	t.Run("a rerun completes the work", func(t *testing.T) {
		e := e.in(t)
		e.emu.clearFaults(t)
		e.mustRun(0, "run", "people")
		checkPeople(t, e, staff)
		keys := map[string]int{}
		for _, r := range e.emu.requests(t) {
			if r.OperationID == "createPeople" {
				keys[r.IdempotencyKey]++
			}
		}
		for k, n := range keys {
			if n != 1 {
				t.Errorf("call %s made %d times", k, n)
			}
		}
		if got := e.archived("processed"); len(got) != 3 { // the export and its JSON and HTML reports
			t.Errorf("processed/ holds %v, want the export and its reports", got)
		}
	})
}
