package main_test

// The shipped alerts (deploy/prometheus) and dashboard (deploy/grafana)
// query metrics by name: this end-to-end test runs the real daemon against
// the emulator, makes it do each kind of work the metrics count, and finds
// every hrsync metric the rules and the dashboard name in its /metrics.

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

var (
	// quoted matches a PromQL string literal (label values, regexps).
	quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)
	// hrsyncMetric matches the name of an hrsync metric; recording rules
	// (hrsync:...) are not metrics of the binary.
	hrsyncMetric = regexp.MustCompile(`\bhrsync_[a-zA-Z0-9_]+`)
)

// metricNames returns the hrsync metric names the expressions query.
func metricNames(exprs []string) []string {
	var names []string
	for _, e := range exprs {
		names = append(names, hrsyncMetric.FindAllString(quoted.ReplaceAllString(e, `""`), -1)...)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// dashboardExprs reads every query of the shipped Grafana dashboard.
func dashboardExprs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "deploy", "grafana", "hrsync.json"))
	if err != nil {
		t.Fatal(err)
	}
	type panel struct {
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
		Panels []panel `json:"panels"` // a collapsed row's
	}
	var d panel
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("hrsync.json: %v", err)
	}
	var exprs []string
	var walk func(ps []panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, tg := range p.Targets {
				exprs = append(exprs, tg.Expr)
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return exprs
}

// ruleExprs reads every expression of the shipped rules file.
func ruleExprs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "deploy", "prometheus", "hrsync-rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []struct {
			Rules []struct {
				Expr string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatalf("hrsync-rules.yaml: %v", err)
	}
	var exprs []string
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			exprs = append(exprs, r.Expr)
		}
	}
	return exprs
}

// exposedNames returns the names of the samples /metrics serves.
func (d *daemonProc) exposedNames(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	for line := range strings.Lines(d.metricsText(t)) {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.IndexAny(line, "{ "); i > 0 {
			names[line[:i]] = true
		}
	}
	return names
}

// missing returns the names not in exposed.
func missing(names []string, exposed map[string]bool) []string {
	var out []string
	for _, n := range names {
		if !exposed[n] {
			out = append(out, n)
		}
	}
	return out
}

// TestE2EMonitoringQueriesMatchTheDaemon runs the daemon on one-second
// people and orders schedules with a tight rate limit, one rejected row,
// one failing orders call and one order, and checks that every hrsync
// metric the rules and the dashboard query is exposed.
func TestE2EMonitoringQueriesMatchTheDaemon(t *testing.T) {
	dashboard, rules := metricNames(dashboardExprs(t)), metricNames(ruleExprs(t))
	// The extraction reads what it should: a guard against a silent
	// change of the files' shape.
	if !slices.Contains(dashboard, "hrsync_runs_total") || !slices.Contains(dashboard, "hrsync_api_call_duration_seconds_bucket") ||
		!slices.Contains(rules, "hrsync_last_success_timestamp_seconds") || !slices.Contains(rules, "hrsync_grants_held") {
		t.Fatalf("metric names read: dashboard %v, rules %v", dashboard, rules)
	}
	names := slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(dashboard), rules...))))

	e := newEnv(t, configOptions{batchSize: 2, concurrency: 1})
	cfg, err := os.ReadFile(e.config)
	if err != nil {
		t.Fatal(err)
	}
	// Four calls a second with no burst: the batches wait for the limit,
	// and a people run outlasts its one-second tick (a skipped run).
	const fast, slow = "ratePerSecond: 1000\n  burst: 100", "ratePerSecond: 4\n  burst: 1"
	if !strings.Contains(string(cfg), fast) {
		t.Fatalf("the test configuration no longer sets %q:\n%s", fast, cfg)
	}
	text := strings.Replace(string(cfg), fast, slow, 1)
	text += "    schedules:\n      people: \"" + everySecond + "\"\n      orders: \"" + everySecond + "\"\nhttp:\n  listen: 127.0.0.1:0\n"
	if err := os.WriteFile(e.config, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	// One orders list answered 503: the client retries it.
	e.emu.addFault(t, fault{Operation: "listOrders", Status: http.StatusServiceUnavailable, Count: 1})
	staff := genPeople(0, 20)
	bad := genPerson(20)
	bad.email = "not-an-email"
	e.dropFile("staff.csv", csvExport(append(staff, bad)))
	d := e.startDaemon()

	if !waitFor(90*time.Second, func() bool { return d.scrape(t, "hrsync_people_created_total", "tenant=acme") == 20 }) {
		t.Fatalf("the daemon did not create the 20 people:\n%s", d.stderr)
	}
	e.emu.placeOrder(t, e.coll, staff[0].id, time.Now().Add(-time.Hour), placeLine{ProductID: notebookProduct})
	waitFor(90*time.Second, func() bool { return len(missing(names, d.exposedNames(t))) == 0 })
	exposed := d.exposedNames(t)
	for _, n := range missing(names, exposed) {
		where := "the rules and the dashboard query"
		switch {
		case !slices.Contains(dashboard, n):
			where = "the rules query"
		case !slices.Contains(rules, n):
			where = "the dashboard queries"
		}
		t.Errorf("%s %s, which the daemon does not expose", where, n)
	}
	if code := d.stop(t); code != 0 {
		t.Errorf("daemon exit %d, want 0:\n%s", code, d.stderr)
	}
}
