package main_test

// What the fleet test of issue 19 adds to that of issue 14: runs end
// properly when a replica is killed (SIGKILL) or told to stop (SIGTERM),
// and the last-success series scraped from the replicas never go back.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"hrsync/internal/runner"
	"hrsync/store"
)

// scrapeEvery is how often a successWatch scrapes its daemon.
const scrapeEvery = 250 * time.Millisecond

// successWatch scrapes hrsync_last_success_timestamp_seconds from one
// daemon while it runs, as Prometheus would, keeping each series' values
// in scrape order.
type successWatch struct {
	replica string
	mu      sync.Mutex
	series  map[string][]float64 // "job/tenant" → values, oldest first
	scrapes int
}

// watchSuccess scrapes d every scrapeEvery until it exits; a scrape that
// fails (the daemon is stopping) is left out.
func watchSuccess(t *testing.T, replica string, d *daemonProc) *successWatch {
	t.Helper()
	w := &successWatch{replica: replica, series: map[string][]float64{}}
	ctx := t.Context()
	go func() {
		tick := time.NewTicker(scrapeEvery)
		defer tick.Stop()
		for {
			select {
			case <-d.done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			values, err := scrapeSuccesses(ctx, d.url)
			if err != nil {
				continue
			}
			w.mu.Lock()
			w.scrapes++
			for k, v := range values {
				w.series[k] = append(w.series[k], v)
			}
			w.mu.Unlock()
		}
	}()
	return w
}

// successLine matches a sample of the last-success gauge.
var successLine = regexp.MustCompile(`^hrsync_last_success_timestamp_seconds\{job="([^"]+)",tenant="([^"]+)"\} (\S+)$`)

// scrapeSuccesses reads the last-success gauge of every job and tenant
// from a daemon's /metrics.
func scrapeSuccesses(ctx context.Context, url string) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/metrics", nil)
	if err != nil {
		return nil, fmt.Errorf("scrape: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape: %s %w", resp.Status, err)
	}
	out := map[string]float64{}
	for line := range strings.Lines(string(body)) {
		m := successLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			return nil, fmt.Errorf("scrape: %q: %w", line, err)
		}
		out[m[1]+"/"+m[2]] = v
	}
	return out, nil
}

// values returns a copy of the watch's series and its scrape count.
func (w *successWatch) values() (map[string][]float64, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string][]float64, len(w.series))
	for k, v := range w.series {
		out[k] = append([]float64(nil), v...)
	}
	return out, w.scrapes
}

// restartJobs are the jobs whose series checkSuccessNeverDecreases follows
// across a restart: a restarted process reads its last successes back from
// the run records, which every cycle of these jobs leaves (a people cycle
// with no export included).
var restartJobs = []string{"orders", "people"}

// checkSuccessNeverDecreases checks that each series of last-success times
// never goes back over the scrapes of a process, nor, for restartJobs,
// across the restart of a process, each of restarts following its
// predecessor in watches (the container of a pod restarted: Prometheus
// sees one series), and that every job and tenant succeeded and was seen
// to.
func checkSuccessNeverDecreases(t *testing.T, watches []*successWatch, restarts map[string]string) {
	t.Helper()
	byReplica := map[string]*successWatch{}
	for _, w := range watches {
		byReplica[w.replica] = w
	}
	seen := map[string]bool{}
	for _, w := range watches {
		series, scrapes := w.values()
		var prev map[string][]float64
		if p, ok := restarts[w.replica]; ok {
			prev, _ = byReplica[p].values()
		}
		if scrapes < 4 {
			t.Errorf("replica %s was scraped %d times, want at least 4", w.replica, scrapes)
		}
		for k, vs := range series {
			if job, _, _ := strings.Cut(k, "/"); slices.Contains(restartJobs, job) {
				vs = append(prev[k], vs...)
			}
			for i := 1; i < len(vs); i++ {
				if vs[i] < vs[i-1] {
					t.Errorf("%s on %s (after %v): the last success went back from %s to %s", k, w.replica,
						restarts[w.replica], time.Unix(0, int64(vs[i-1]*1e9)).UTC().Format(time.StampMilli),
						time.Unix(0, int64(vs[i]*1e9)).UTC().Format(time.StampMilli))
					break
				}
			}
			if vs[len(vs)-1] > 0 {
				seen[k] = true
			}
		}
	}
	if len(seen) != 2*fleetTenants {
		t.Errorf("last successes of %d (job, tenant) pairs seen, want %d", len(seen), 2*fleetTenants)
	}
}

// fleetGrace is each replica's --grace: the runs in flight at SIGTERM go
// on for 4s, then are cut short.
const fleetGrace = "6s"

// stopOneReplica ends the fleet after the kill: the killed replica comes
// back (d4, its container restarted); six orders calls are answered 10s
// late and the others 1s late, so that a replica has long and short runs in
// flight; the first of d2 and d3 seen with both is told to stop (SIGTERM)
// and drains while the others go on; then they stop. It returns the
// replica told to stop and when.
func (e *env) stopOneReplica(daemons []*daemonProc, watches *[]*successWatch) (stopped string, sigterm time.Time) {
	t := e.t
	t.Helper()
	d4 := e.startDaemon("--replica-id", "d4", "--grace", fleetGrace)
	*watches = append(*watches, watchSuccess(t, "d4", d4))
	slow := time.Now()
	e.emu.addFault(t, fault{Operation: "listOrders", Latency: "10s", Count: 6})
	e.emu.addFault(t, fault{Operation: "listOrders", Latency: "1s"})
	victim := 0
	if !waitFor(20*time.Second, func() bool { victim = e.drainable(slow); return victim > 0 }) {
		t.Fatal("neither d2 nor d3 had a long and a short orders run in flight at once")
	}
	stopped, sigterm = fmt.Sprintf("d%d", victim+1), time.Now()
	if code := daemons[victim].stop(t); code != 0 {
		t.Fatalf("%s stopped with exit %d:\n%s", stopped, code, daemons[victim].stderr)
	}
	e.emu.clearFaults(t)
	time.Sleep(3 * time.Second) // the others go on without it
	for _, d := range []*daemonProc{daemons[3-victim], d4} {
		if code := d.stop(t); code != 0 {
			t.Fatalf("a daemon stopped with exit %d:\n%s", code, d.stderr)
		}
	}
	return stopped, sigterm
}

// drainable returns the index in the fleet of d2 (1) or d3 (2) when it has
// orders runs in flight, started since slow, both long (begun 1.5s to 3s
// ago: a 10s call, which the cut after 4s ends) and short (begun under
// 0.5s ago: a 1s call); 0 when neither has.
func (e *env) drainable(slow time.Time) int {
	for i, r := range []string{"d2", "d3"} {
		var long, short int
		err := e.stateDB().QueryRowContext(e.t.Context(), `SELECT
			COUNT(*) FILTER (WHERE started_at BETWEEN now() - interval '3 seconds' AND now() - interval '1500 milliseconds'),
			COUNT(*) FILTER (WHERE started_at > now() - interval '500 milliseconds')
			FROM runs WHERE replica = $1 AND job = 'orders' AND outcome = 'running' AND started_at > $2`, r, slow).Scan(&long, &short)
		if err == nil && long > 0 && short > 0 {
			return i + 1
		}
	}
	return 0
}

// checkRunsEnded checks the run records after the fleet stopped: no run is
// left running (those of the killed replica were closed as interrupted by
// the next run of their job and tenant), none failed (a stop never fails a
// run), and the replica told to stop let runs it had in flight end ok and
// recorded those it cut short as interrupted.
func (e *env) checkRunsEnded(killed, sigterm time.Time, stopped string) {
	t := e.t
	t.Helper()
	if n := e.count(`SELECT COUNT(*) FROM runs WHERE outcome = 'running'`); n != 0 {
		t.Errorf("%d runs left running", n)
	}
	rows, err := e.stateDB().QueryContext(t.Context(), `SELECT replica, job, tenant, error FROM runs WHERE outcome = 'failed'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var replica, job, tenant, cause string
		if err := rows.Scan(&replica, &job, &tenant, &cause); err != nil {
			t.Fatal(err)
		}
		t.Errorf("%s %s run of %s failed: %s", replica, job, tenant, cause)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	closed := e.count(`SELECT COUNT(*) FROM runs WHERE replica = 'd1' AND outcome = 'interrupted' AND error = ? AND started_at < ?`,
		store.InterruptedError, killed)
	if closed == 0 {
		t.Error("no run of the killed replica was closed as interrupted")
	}
	drained := e.count(`SELECT COUNT(*) FROM runs WHERE replica = ? AND outcome = 'ok' AND started_at < ? AND finished_at > ?`,
		stopped, sigterm, sigterm)
	cut := e.count(`SELECT COUNT(*) FROM runs WHERE replica = ? AND outcome = 'interrupted' AND error = ?`, stopped, runner.ErrCut.Error())
	if drained == 0 || cut == 0 {
		t.Errorf("of the runs %s had in flight at SIGTERM, %d went on to end ok and %d were cut short; want some of each", stopped, drained, cut)
	}
	t.Logf("runs of the killed replica closed as interrupted: %d; runs of %s in flight at SIGTERM that ended ok: %d, cut short: %d",
		closed, stopped, drained, cut)
}
