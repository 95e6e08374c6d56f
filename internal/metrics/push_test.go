package metrics_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"hrsync/internal/metrics"
	"hrsync/internal/metrics/metricstest"
)

// known are the jobs, tenants and outcomes of the push tests.
var known = metrics.Known{Jobs: []string{"people", "orders"}, Tenants: []string{"acme", "beta"},
	Outcomes: []string{"ok", "attention", "failed"}}

// oneRun is the metrics of one process that ran one cycle of people for acme.
func oneRun(outcome string, created int, at time.Time) *metrics.Metrics {
	m := metrics.New()
	m.Init("v1.2.3", known)
	m.RunStarted("people", "acme")
	m.RunFinished("people", "acme", outcome, 2*time.Second, at)
	m.ObserveCounts("people", "acme", map[string]int{metrics.CountCreated: created})
	return m
}

func TestPushCarriesCountersAcrossRuns(t *testing.T) {
	gw := metricstest.Start(t)
	group := map[string]string{"job": "people", "tenant": "acme"}
	with := func(extra ...string) map[string]string {
		out := map[string]string{"job": "people", "tenant": "acme"}
		for i := 0; i+1 < len(extra); i += 2 {
			out[extra[i]] = extra[i+1]
		}
		return out
	}
	want := func(name string, labels map[string]string, want float64) {
		t.Helper()
		v, ok := gw.Value(t, name, labels)
		if !ok || v != want {
			t.Errorf("%s%v = %v (present %v), want %v", name, labels, v, ok, want)
		}
	}
	opts := metrics.PushOptions{URL: gw.URL, Timeout: 20 * time.Second}
	t1 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

	if err := oneRun("ok", 3, t1).Push(t.Context(), opts, []metrics.Group{{Job: "people", Tenant: "acme"}}); err != nil {
		t.Fatalf("first push: %v", err)
	}
	want("hrsync_runs_total", with("outcome", "ok"), 1)
	want("hrsync_runs_total", with("outcome", "failed"), 0)
	want("hrsync_last_outcome", with("outcome", "ok"), 1)
	want("hrsync_last_outcome", with("outcome", "failed"), 0)
	want("hrsync_people_created_total", group, 3)
	want("hrsync_last_success_timestamp_seconds", group, float64(t1.Unix()))
	want("hrsync_build_info", with("version", "v1.2.3", "goversion", goVersion(t, gw)), 1)
	if _, ok := gw.Value(t, "hrsync_runs_total", map[string]string{"job": "orders", "tenant": "acme", "outcome": "ok"}); ok {
		t.Error("a group that did not run (orders) was pushed")
	}

	// A second process: its counters start at zero, the pushed ones go on.
	if err := oneRun("failed", 0, t1.Add(time.Hour)).Push(t.Context(), opts, []metrics.Group{{Job: "people", Tenant: "acme"}}); err != nil {
		t.Fatalf("second push: %v", err)
	}
	want("hrsync_runs_total", with("outcome", "ok"), 1)
	want("hrsync_runs_total", with("outcome", "failed"), 1)
	want("hrsync_last_outcome", with("outcome", "ok"), 0)
	want("hrsync_last_outcome", with("outcome", "failed"), 1)
	want("hrsync_people_created_total", group, 3)
	want("hrsync_run_duration_seconds", group, 2) // two observations
	// The failed run kept the time of the last success.
	want("hrsync_last_success_timestamp_seconds", group, float64(t1.Unix()))

	// A third: ok again, 2 more people.
	t3 := t1.Add(2 * time.Hour)
	if err := oneRun("ok", 2, t3).Push(t.Context(), opts, []metrics.Group{{Job: "people", Tenant: "acme"}}); err != nil {
		t.Fatalf("third push: %v", err)
	}
	want("hrsync_runs_total", with("outcome", "ok"), 2)
	want("hrsync_people_created_total", group, 5)
	want("hrsync_last_success_timestamp_seconds", group, float64(t3.Unix()))
	want("hrsync_run_duration_seconds", group, 3)

	// A run that carries the drop folder's gauges in its group.
	m := oneRun("ok", 0, t3)
	twoHoursAgo := time.Now().Add(-2 * time.Hour)
	m.WatchFolders([]metrics.Folder{
		{Tenant: "acme", Waiting: func(context.Context) ([]time.Time, error) { return []time.Time{twoHoursAgo}, nil }},
		{Tenant: "beta", Waiting: func(context.Context) ([]time.Time, error) { return nil, nil }},
	}, nil)
	err := m.Push(t.Context(), opts, []metrics.Group{{Job: "people", Tenant: "acme",
		TenantGauges: []string{metrics.NameFilesWaiting, metrics.NameOldestFileAge}}})
	if err != nil {
		t.Fatalf("fourth push: %v", err)
	}
	want(metrics.NameFilesWaiting, group, 1)
	if v, ok := gw.Value(t, metrics.NameOldestFileAge, group); !ok || v < 7200 || v > 7200+600 {
		t.Errorf("oldest file age = %v (present %v), want two hours", v, ok)
	}
	if _, ok := gw.Value(t, metrics.NameFilesWaiting, map[string]string{"job": "people", "tenant": "beta"}); ok {
		t.Error("another tenant's gauge was pushed in acme's group")
	}
}

// goVersion is the goversion label the pushed build info carries.
func goVersion(t *testing.T, gw *metricstest.Pushgateway) string {
	t.Helper()
	for _, m := range gw.Families(t)["hrsync_build_info"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "goversion" && strings.HasPrefix(l.GetValue(), "go") {
				return l.GetValue()
			}
		}
	}
	t.Fatal("no hrsync_build_info with a goversion label was pushed")
	return ""
}

func TestPushFailure(t *testing.T) {
	var (
		mu   sync.Mutex
		auth []string
	)
	// A Pushgateway that is down: every request gets 503.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	push := func(token string) error {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		return oneRun("ok", 1, time.Now()).Push(ctx, metrics.PushOptions{URL: "http://pusher:s3cr3t-pw@" + addr, BearerToken: token,
			Attempts: 3, Backoff: 10 * time.Millisecond}, []metrics.Group{{Job: "people", Tenant: "acme"}})
	}
	t.Run("basic auth from the address, tried three times, no password in the error", func(t *testing.T) {
		mu.Lock()
		auth = nil
		mu.Unlock()
		err := push("")
		if err == nil {
			t.Fatal("a push to a Pushgateway that answers 503 succeeded")
		}
		if strings.Contains(err.Error(), "s3cr3t-pw") {
			t.Errorf("the error names the password: %v", err)
		}
		if !strings.Contains(err.Error(), addr) {
			t.Errorf("the error does not name the pushgateway's address: %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		wantAuth := "Basic " + base64.StdEncoding.EncodeToString([]byte("pusher:s3cr3t-pw"))
		if len(auth) != 3 {
			t.Fatalf("%d requests, want 3 tries of the read (nothing pushed when the groups cannot be read)", len(auth))
		}
		for _, a := range auth {
			if a != wantAuth {
				t.Errorf("Authorization = %q, want basic auth from the address", a)
			}
		}
	})
	t.Run("a bearer token wins over the address's credentials", func(t *testing.T) {
		mu.Lock()
		auth = nil
		mu.Unlock()
		err := push("t0ken-value")
		if err == nil || strings.Contains(err.Error(), "t0ken-value") {
			t.Fatalf("err = %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(auth) == 0 || auth[0] != "Bearer t0ken-value" {
			t.Errorf("Authorization = %q, want the bearer token", auth)
		}
	})
	if got := metrics.RedactURL("http://pusher:s3cr3t-pw@" + addr); strings.Contains(got, "s3cr3t-pw") {
		t.Errorf("RedactURL = %q", got)
	}
}

// TestPushKeepsAShardsAttentionAfterItsRetry is a CronJob shard of two
// tenants: the first try ends attention for acme and failed for beta (exit
// 1), the Job's retry ends ok for both (exit 0). Each tenant's group keeps
// the time of its last attention and failed runs, so an alert sees them
// whatever the scrapes between the two pushes.
func TestPushKeepsAShardsAttentionAfterItsRetry(t *testing.T) {
	gw := metricstest.Start(t)
	opts := metrics.PushOptions{URL: gw.URL, Timeout: 20 * time.Second}
	groups := []metrics.Group{{Job: "people", Tenant: "acme"}, {Job: "people", Tenant: "beta"}}
	try := func(at time.Time, outcomes map[string]string) {
		t.Helper()
		m := metrics.New()
		m.Init("v1.2.3", known)
		for _, tenant := range []string{"acme", "beta"} {
			m.RunStarted("people", tenant)
			m.RunFinished("people", tenant, outcomes[tenant], time.Second, at)
		}
		if err := m.Push(t.Context(), opts, groups); err != nil {
			t.Fatalf("push: %v", err)
		}
	}
	first := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	retry := first.Add(20 * time.Second)
	try(first, map[string]string{"acme": "attention", "beta": "failed"})
	try(retry, map[string]string{"acme": "ok", "beta": "ok"})

	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"hrsync_last_run_timestamp_seconds", map[string]string{"job": "people", "tenant": "acme", "outcome": "attention"}, float64(first.Unix())},
		{"hrsync_last_run_timestamp_seconds", map[string]string{"job": "people", "tenant": "acme", "outcome": "ok"}, float64(retry.Unix())},
		{"hrsync_last_run_timestamp_seconds", map[string]string{"job": "people", "tenant": "beta", "outcome": "failed"}, float64(first.Unix())},
		{"hrsync_runs_total", map[string]string{"job": "people", "tenant": "acme", "outcome": "attention"}, 1},
		{"hrsync_runs_total", map[string]string{"job": "people", "tenant": "acme", "outcome": "ok"}, 1},
		{"hrsync_runs_total", map[string]string{"job": "people", "tenant": "beta", "outcome": "failed"}, 1},
		{"hrsync_last_outcome", map[string]string{"job": "people", "tenant": "acme", "outcome": "ok"}, 1},
		{"hrsync_last_success_timestamp_seconds", map[string]string{"job": "people", "tenant": "acme"}, float64(retry.Unix())},
	} {
		if v, ok := gw.Value(t, c.name, c.labels); !ok || v != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, v, ok, c.want)
		}
	}
	if _, ok := gw.Value(t, "hrsync_last_run_timestamp_seconds", map[string]string{"job": "people", "tenant": "beta", "outcome": "attention"}); ok {
		t.Error("beta never needed attention, yet has a time for it")
	}
}
