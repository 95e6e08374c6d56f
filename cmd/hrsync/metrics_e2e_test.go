package main_test

// End-to-end tests of the metrics: `hrsync run` pushing to a real
// Pushgateway (Debian's prometheus-pushgateway, started by the test), and
// the series `hrsync daemon` shows on its first scrape, before any tick.

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hrsync/internal/metrics/metricstest"
)

// setPushgateway points the env's configuration at a Pushgateway.
func (e *env) setPushgateway(url string) {
	e.t.Helper()
	f, err := os.OpenFile(e.config, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	if _, err := fmt.Fprintf(f, "metrics:\n  pushgateway: %q\n", url); err != nil {
		e.t.Fatal(err)
	}
}

// binaryVersion is the version the test binary reports.
func binaryVersion(t *testing.T) string {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), binaryPath(), "--version").Output()
	if err != nil {
		t.Fatalf("hrsync --version: %v", err)
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "hrsync ")
	if !ok || v == "" {
		t.Fatalf("hrsync --version printed %q", out)
	}
	return v
}

// gwSeries names one series of a group the Pushgateway holds.
func gwSeries(job string, extra ...string) map[string]string {
	out := map[string]string{"job": job, "tenant": tenantName}
	for i := 0; i+1 < len(extra); i += 2 {
		out[extra[i]] = extra[i+1]
	}
	return out
}

func TestE2EPushgateway(t *testing.T) {
	t.Parallel()
	gw := metricstest.Start(t)
	e := newEnv(t, configOptions{})
	e.setPushgateway(gw.URL)
	want := func(t *testing.T, name string, labels map[string]string, want float64) {
		t.Helper()
		if v, ok := gw.Value(t, name, labels); !ok || v != want {
			t.Errorf("%s%v = %v (present: %v), want %v", name, labels, v, ok, want)
		}
	}
	sumOf := func(t *testing.T, name, job string) float64 {
		t.Helper()
		sum := 0.0
		for _, o := range []string{"ok", "attention", "locked", "interrupted", "safeguard", "failed"} {
			v, _ := gw.Value(t, name, gwSeries(job, "outcome", o))
			sum += v
		}
		return sum
	}

	step(t, "a people run with a rejected row pushes attention", func(t *testing.T) {
		e := e.in(t)
		export := csvExport(genPeople(1, 11))
		export = append(export, []byte("P99999,not-an-email,Bad,Row,Sales,Lisbon,2020-01-01,1990-01-01,10\n")...)
		e.dropFile("a.csv", export)
		before := time.Now()
		res := e.mustRun(4, "run", "people")
		if !strings.Contains(res.stderr, `"metrics pushed"`) {
			t.Errorf("no log line says the metrics were pushed:\n%s", res.stderr)
		}
		want(t, "hrsync_last_outcome", gwSeries("people", "outcome", "attention"), 1)
		for _, o := range []string{"ok", "locked", "interrupted", "safeguard", "failed"} {
			want(t, "hrsync_last_outcome", gwSeries("people", "outcome", o), 0)
		}
		want(t, "hrsync_runs_total", gwSeries("people", "outcome", "attention"), 1)
		want(t, "hrsync_runs_total", gwSeries("people", "outcome", "failed"), 0)
		want(t, "hrsync_people_created_total", gwSeries("people"), 10)
		want(t, "hrsync_rows_rejected_total", gwSeries("people"), 1)
		want(t, "hrsync_run_duration_seconds", gwSeries("people"), 1)
		want(t, "hrsync_build_info", gwSeries("people", "version", binaryVersion(t), "goversion", goVersionOf(t, gw)), 1)
		if v, ok := gw.Value(t, "hrsync_last_success_timestamp_seconds", gwSeries("people")); !ok ||
			v < float64(before.Unix()) || v > float64(time.Now().Unix()+1) {
			t.Errorf("last success = %v (present: %v), want the time of the run", v, ok)
		}
		if _, ok := gw.Value(t, "hrsync_runs_total", gwSeries("orders", "outcome", "ok")); ok {
			t.Error("a job that did not run (orders) was pushed")
		}
	})

	step(t, "run all pushes a group per job; the people counters go on from the last push", func(t *testing.T) {
		e := e.in(t)
		e.dropFile("b.csv", csvExport(genPeople(1, 16)))
		e.mustRun(0, "run", "all")
		want(t, "hrsync_runs_total", gwSeries("people", "outcome", "attention"), 1)
		want(t, "hrsync_runs_total", gwSeries("people", "outcome", "ok"), 1)
		want(t, "hrsync_last_outcome", gwSeries("people", "outcome", "ok"), 1)
		want(t, "hrsync_last_outcome", gwSeries("people", "outcome", "attention"), 0)
		want(t, "hrsync_people_created_total", gwSeries("people"), 15)
		want(t, "hrsync_rows_rejected_total", gwSeries("people"), 1)
		want(t, "hrsync_run_duration_seconds", gwSeries("people"), 2)
		// What waits after each job, read when the run pushed, in the job's group.
		want(t, "hrsync_dropfolder_files_waiting", gwSeries("people"), 0)
		want(t, "hrsync_dropfolder_oldest_file_age_seconds", gwSeries("people"), 0)
		want(t, "hrsync_personalizations_pending", gwSeries("personalize"), 0)
		want(t, "hrsync_personalizations_failed", gwSeries("personalize"), 0)
		want(t, "hrsync_orders_not_polled", gwSeries("orders"), 0)
		if _, ok := gw.Value(t, "hrsync_orders_not_polled", gwSeries("people")); ok {
			t.Error("the orders gauge was pushed in the people group")
		}
		for _, job := range []string{"personalize", "orders"} {
			if n := sumOf(t, "hrsync_runs_total", job); n != 1 {
				t.Errorf("%s: %v runs pushed, want 1", job, n)
			}
			if n := sumOf(t, "hrsync_last_outcome", job); n != 1 {
				t.Errorf("%s: last outcome set for %v outcomes, want 1", job, n)
			}
		}
	})

	step(t, "a Pushgateway that is down changes no exit code and shows no password", func(t *testing.T) {
		e := e.in(t)
		ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed := ln.Addr().String()
		_ = ln.Close()
		ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
		defer cancel()
		cmd := e.command(ctx, "run", "people")
		// The variable wins over the file's metrics.pushgateway.
		cmd.Env = append(cmd.Env, "HRSYNC_METRICS_PUSHGATEWAY=http://pusher:pw-s3cr3t@"+closed)
		res := runExec(cmd)
		if res.code != 0 {
			t.Fatalf("exit %d, want 0 (nothing to do; the push is not the run's outcome)\n%s", res.code, res)
		}
		if !strings.Contains(res.stderr, "metrics not pushed") || !strings.Contains(res.stderr, closed) {
			t.Errorf("no warning naming the Pushgateway:\n%s", res.stderr)
		}
		if strings.Contains(res.stderr+res.stdout, "pw-s3cr3t") {
			t.Errorf("the password reached the output:\n%s", res)
		}
		if last := lastLine(t, res); last.ExitCode != 0 || last.Outcome != "ok" {
			t.Errorf("the last line is %+v, want the run's own (ok, 0)", last)
		}
		want(t, "hrsync_runs_total", gwSeries("people", "outcome", "ok"), 1) // nothing reached the real one
	})
}

// goVersionOf is the goversion label of the pushed build info.
func goVersionOf(t *testing.T, gw *metricstest.Pushgateway) string {
	t.Helper()
	for _, m := range gw.Families(t)["hrsync_build_info"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "goversion" {
				return l.GetValue()
			}
		}
	}
	t.Fatal("no hrsync_build_info pushed")
	return ""
}

func TestE2EDaemonMetricsFromTheFirstScrape(t *testing.T) {
	t.Parallel()
	e := newPersonalizeEnv(t)
	before := time.Now()
	// Four new hires whose personalization fails on every call: each waits
	// for a retry (pending).
	e.dropFile("hires.csv", csvExport(newHires(4)))
	e.mustRun(0, "run", "people")
	e.emu.addFault(t, fault{Operation: "personalizeCollection", Status: 500})
	e.mustRun(4, "run", "personalize")
	e.emu.clearFaults(t)

	// A file waiting, two hours old, and a link to an older file outside
	// the folder: the link's own time counts, the target is never read.
	waiting := e.dropFile("next.csv", csvExport(genPeople(100, 102)))
	twoHours := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(waiting, twoHours, twoHours); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(e.dir, "old.csv")
	if err := os.WriteFile(outside, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	tenDays := time.Now().Add(-240 * time.Hour)
	if err := os.Chtimes(outside, tenDays, tenDays); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(e.drop, "link.csv")); err != nil {
		t.Fatal(err)
	}

	e.scheduleDaemon("@yearly") // no tick while the test runs
	d := e.startDaemon()
	scrape := func(t *testing.T, name string, labels ...string) float64 {
		t.Helper()
		return d.scrape(t, name, labels...)
	}
	has := func(t *testing.T, name string, labels ...string) {
		t.Helper()
		line := name + "{"
		body := d.metricsText(t)
		for l := range strings.Lines(body) {
			if !strings.HasPrefix(l, line) {
				continue
			}
			all := true
			for _, kv := range labels {
				k, v, _ := strings.Cut(kv, "=")
				all = all && strings.Contains(l, k+`="`+v+`"`)
			}
			if all {
				return
			}
		}
		t.Errorf("no series %s%v on the first scrape", name, labels)
	}

	step(t, "the first scrape has every series", func(t *testing.T) {
		has(t, "hrsync_build_info", "version="+binaryVersion(t))
		if v := scrape(t, "hrsync_build_info"); v != 1 {
			t.Errorf("build info = %v, want 1", v)
		}
		for _, job := range []string{"people", "personalize", "orders"} {
			for _, o := range []string{"ok", "attention", "locked", "interrupted", "safeguard", "failed"} {
				has(t, "hrsync_runs_total", "job="+job, "tenant="+tenantName, "outcome="+o)
				has(t, "hrsync_last_outcome", "job="+job, "tenant="+tenantName, "outcome="+o)
			}
			for _, name := range []string{"hrsync_runs_skipped_total", "hrsync_run_panics_total", "hrsync_people_created_total",
				"hrsync_grants_applied_total", "hrsync_grants_held", "hrsync_rows_rejected_total"} {
				has(t, name, "job="+job, "tenant="+tenantName)
			}
		}
		if v := scrape(t, "hrsync_runs_total"); v != 0 {
			t.Errorf("runs counted before any tick: %v", v)
		}
	})
	step(t, "the time of the last success comes from the store", func(t *testing.T) {
		// people ended ok and personalize attention before the daemon
		// started; orders never ran.
		for _, job := range []string{"people", "personalize"} {
			v := scrape(t, "hrsync_last_success_timestamp_seconds", "job="+job, "tenant="+tenantName)
			if v < float64(before.Unix()) || v > float64(time.Now().Unix()+1) {
				t.Errorf("%s: last success = %v, want the time of the run before the daemon started", job, v)
			}
		}
		for job, outcome := range map[string]string{"people": "ok", "personalize": "attention"} {
			v := scrape(t, "hrsync_last_run_timestamp_seconds", "job="+job, "tenant="+tenantName, "outcome="+outcome)
			if v < float64(before.Unix()) || v > float64(time.Now().Unix()+1) {
				t.Errorf("%s: last %s run = %v, want the time of the run before the daemon started", job, outcome, v)
			}
		}
		if strings.Contains(d.metricsText(t), `hrsync_last_run_timestamp_seconds{job="orders"`) {
			t.Error("a job that never ran has a time of its last run")
		}
		if strings.Contains(d.metricsText(t), `hrsync_last_success_timestamp_seconds{job="orders"`) {
			t.Error("a job that never succeeded has a time of the last success")
		}
		has(t, "hrsync_grants_held", "job=people", "tenant="+tenantName)
	})
	step(t, "the files waiting, before any tick", func(t *testing.T) {
		if v := scrape(t, "hrsync_dropfolder_files_waiting", "tenant="+tenantName); v != 2 {
			t.Errorf("files waiting = %v, want 2 (the export and the link)", v)
		}
		age := scrape(t, "hrsync_dropfolder_oldest_file_age_seconds", "tenant="+tenantName)
		if age < 7200 || age > 7200+600 {
			t.Errorf("oldest age = %vs, want about two hours (the link's own time, not its target's ten days)", age)
		}
	})
	step(t, "the personalizations and orders waiting in the store", func(t *testing.T) {
		if v := scrape(t, "hrsync_personalizations_pending", "tenant="+tenantName); v != 4 {
			t.Errorf("personalizations pending = %v, want 4 (each waiting for a retry)", v)
		}
		has(t, "hrsync_personalizations_failed", "tenant="+tenantName)
		if v := scrape(t, "hrsync_personalizations_failed", "tenant="+tenantName); v != 0 {
			t.Errorf("personalizations failed = %v, want 0", v)
		}
		has(t, "hrsync_orders_not_polled", "tenant="+tenantName)
	})
	step(t, "a drop folder that vanished is an error, not a broken /metrics", func(t *testing.T) {
		if err := os.Rename(e.drop, e.drop+".moved"); err != nil {
			t.Fatal(err)
		}
		body := d.metricsText(t) // fails the test unless /metrics answers 200
		if strings.Contains(body, "hrsync_dropfolder_files_waiting{") {
			t.Errorf("gauges of a folder that cannot be listed:\n%s", body)
		}
		if v := scrape(t, "hrsync_metrics_collect_errors_total", "source=dropfolder", "tenant="+tenantName); v < 1 {
			t.Errorf("collect errors = %v, want at least 1", v)
		}
		if v := scrape(t, "hrsync_personalizations_pending", "tenant="+tenantName); v != 4 {
			t.Errorf("the store's gauges went with the folder: pending = %v", v)
		}
		if err := os.Rename(e.drop+".moved", e.drop); err != nil {
			t.Fatal(err)
		}
	})
	if code := d.stop(t); code != 0 {
		t.Errorf("daemon exit %d\n%s", code, d.stderr)
	}
}
