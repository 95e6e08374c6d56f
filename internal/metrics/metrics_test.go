package metrics

import (
	"errors"
	"strings"
	"testing"
	"time"

	"hrsync/apiclient"
	"hrsync/internal/metrics/metricstest"
)

// value returns the value of the sample of name whose labels include want,
// and whether it exists.
func value(t *testing.T, m *Metrics, name string, want map[string]string) (float64, bool) {
	t.Helper()
	return metricstest.Value(t, m.Registry(), name, want)
}

func TestMetrics(t *testing.T) {
	t.Run("two sets never collide", func(t *testing.T) {
		a, b := New(), New()
		a.RunSkipped("people", "acme")
		if v, _ := value(t, b, "hrsync_runs_skipped_total", nil); v != 0 {
			t.Errorf("a skip counted in one set shows in another: %v", v)
		}
	})
	t.Run("runs", func(t *testing.T) {
		m := New()
		at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		m.RunStarted("people", "acme")
		if v, _ := value(t, m, "hrsync_runs_in_progress", map[string]string{"job": "people"}); v != 1 {
			t.Errorf("in progress = %v, want 1", v)
		}
		m.RunFinished("people", "acme", "ok", 2*time.Second, at)
		m.RunStarted("people", "acme")
		m.RunFinished("people", "acme", "failed", time.Second, at.Add(time.Hour))
		if v, _ := value(t, m, "hrsync_runs_in_progress", map[string]string{"job": "people"}); v != 0 {
			t.Errorf("in progress = %v, want 0", v)
		}
		for outcome, want := range map[string]float64{"ok": 1, "failed": 1} {
			if v, _ := value(t, m, "hrsync_runs_total", map[string]string{"job": "people", "tenant": "acme", "outcome": outcome}); v != want {
				t.Errorf("runs %s = %v, want %v", outcome, v, want)
			}
		}
		if v, _ := value(t, m, "hrsync_run_duration_seconds", map[string]string{"job": "people"}); v != 2 {
			t.Errorf("durations observed = %v, want 2", v)
		}
		// A failed run leaves the time of the last success alone.
		if v, _ := value(t, m, "hrsync_last_success_timestamp_seconds", map[string]string{"job": "people", "tenant": "acme"}); v != float64(at.Unix()) {
			t.Errorf("last success = %v, want %v", v, at.Unix())
		}
	})
	t.Run("timestamps never go back", func(t *testing.T) {
		m := New()
		at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		acme := map[string]string{"job": "people", "tenant": "acme"}
		lastRun := func(outcome string) (float64, bool) {
			return value(t, m, "hrsync_last_run_timestamp_seconds", map[string]string{"job": "people", "tenant": "acme", "outcome": outcome})
		}
		// A cycle recorded in memory at 12:00; then a restart's seed, or a
		// replica's clock, brings an older time: it is ignored.
		m.RunStarted("people", "acme")
		m.RunFinished("people", "acme", "ok", time.Second, at)
		m.SetLastSuccess("people", "acme", at.Add(-3*time.Hour))
		m.SetLastRun("people", "acme", "ok", at.Add(-3*time.Hour))
		m.RunStarted("people", "acme")
		m.RunFinished("people", "acme", "attention", time.Second, at.Add(-time.Minute))
		if v, _ := value(t, m, "hrsync_last_success_timestamp_seconds", acme); v != float64(at.Unix()) {
			t.Errorf("last success = %v, want %v: an older time lowered it", v, at.Unix())
		}
		if v, _ := lastRun("ok"); v != float64(at.Unix()) {
			t.Errorf("last ok run = %v, want %v", v, at.Unix())
		}
		// Each outcome keeps its own time: a failure later than the last
		// success is visible beside it.
		m.RunStarted("people", "acme")
		m.RunFinished("people", "acme", "failed", time.Second, at.Add(time.Hour))
		if v, _ := lastRun("failed"); v != float64(at.Add(time.Hour).Unix()) {
			t.Errorf("last failed run = %v, want %v", v, at.Add(time.Hour).Unix())
		}
		if v, _ := lastRun("attention"); v != float64(at.Add(-time.Minute).Unix()) {
			t.Errorf("last attention run = %v, want %v", v, at.Add(-time.Minute).Unix())
		}
		if v, _ := value(t, m, "hrsync_last_success_timestamp_seconds", acme); v != float64(at.Unix()) {
			t.Errorf("last success after a failure = %v, want %v", v, at.Unix())
		}
		// A later seed (the store knows of a success by another replica)
		// raises it.
		m.SetLastSuccess("people", "acme", at.Add(2*time.Hour))
		if v, _ := value(t, m, "hrsync_last_success_timestamp_seconds", acme); v != float64(at.Add(2*time.Hour).Unix()) {
			t.Errorf("last success after a later seed = %v, want %v", v, at.Add(2*time.Hour).Unix())
		}
		if _, ok := lastRun("safeguard"); ok {
			t.Error("an outcome that never happened has a last-run time (0 would read as 1970)")
		}
	})
	t.Run("counts", func(t *testing.T) {
		m := New()
		m.ObserveCounts("people", "acme", map[string]int{CountCreated: 3, CountGrantsApplied: 3, CountRejected: 2, "unchanged": 40})
		m.ObserveCounts("people", "acme", map[string]int{CountCreated: 1})
		m.SetGrantsHeld("people", "acme", 4)
		m.SetGrantsHeld("people", "acme", 2)
		for _, c := range []struct {
			name string
			want float64
		}{{"hrsync_people_created_total", 4}, {"hrsync_grants_applied_total", 3}, {"hrsync_rows_rejected_total", 2}, {"hrsync_grants_held", 2}} {
			if v, _ := value(t, m, c.name, map[string]string{"tenant": "acme"}); v != c.want {
				t.Errorf("%s = %v, want %v", c.name, v, c.want)
			}
		}
	})
	t.Run("rule grants by tenant, rule and result", func(t *testing.T) {
		m := New()
		m.ObserveRuleGrants("grants", "acme", RuleGrants{Rule: "birthday", Applied: 3, Held: 1})
		m.ObserveRuleGrants("grants", "acme", RuleGrants{Rule: "birthday", Applied: 2, Skipped: 4})
		m.ObserveRuleGrants("grants", "acme", RuleGrants{Rule: "winter"})
		for _, c := range []struct {
			rule, result string
			want         float64
		}{{"birthday", "applied", 5}, {"birthday", "held", 1}, {"birthday", "skipped", 4}, {"winter", "applied", 0}} {
			v, ok := value(t, m, "hrsync_rule_grants_total", map[string]string{"job": "grants", "tenant": "acme", "rule": c.rule, "result": c.result})
			if !ok || v != c.want {
				t.Errorf("%s %s = %v (present %v), want %v", c.rule, c.result, v, ok, c.want)
			}
		}
	})
	t.Run("orders by status replaces the tenant's statuses", func(t *testing.T) {
		m := New()
		m.SetOrdersByStatus("orders", "acme", map[string]int{"Processing": 3, "Shipped": 1})
		m.SetOrdersByStatus("orders", "beta", map[string]int{"Processing": 7})
		m.SetOrdersByStatus("orders", "acme", map[string]int{"Shipped": 4})
		if _, ok := value(t, m, "hrsync_orders", map[string]string{"tenant": "acme", "status": "Processing"}); ok {
			t.Error("a status absent from the new counts is still there")
		}
		if v, _ := value(t, m, "hrsync_orders", map[string]string{"tenant": "acme", "status": "Shipped"}); v != 4 {
			t.Errorf("acme shipped = %v, want 4", v)
		}
		if v, _ := value(t, m, "hrsync_orders", map[string]string{"tenant": "beta", "status": "Processing"}); v != 7 {
			t.Errorf("beta processing = %v, want 7 (another tenant is untouched)", v)
		}
	})
	t.Run("observer", func(t *testing.T) {
		m := New()
		obs := m.Observer()
		obs.OnCall(apiclient.OpCreatePeople, 201, 30*time.Millisecond, nil)
		obs.OnCall(apiclient.OpCreatePeople, 503, 10*time.Millisecond, errors.New("unavailable"))
		obs.OnCall(apiclient.OpListOrders, 0, time.Second, errors.New("connection refused"))
		obs.OnRetry(apiclient.OpCreatePeople, 2, time.Second)
		obs.OnRateLimitWait(apiclient.OpGetProduct, 250*time.Millisecond)
		obs.OnRateLimitWait(apiclient.OpGetProduct, 250*time.Millisecond)
		for _, c := range []struct {
			name   string
			labels map[string]string
			want   float64
		}{
			{"hrsync_api_calls_total", map[string]string{"endpoint": "createPeople", "status": "201"}, 1},
			{"hrsync_api_calls_total", map[string]string{"endpoint": "createPeople", "status": "503"}, 1},
			{"hrsync_api_calls_total", map[string]string{"endpoint": "listOrders", "status": "0"}, 1},
			{"hrsync_api_call_duration_seconds", map[string]string{"endpoint": "createPeople"}, 2},
			{"hrsync_api_retries_total", map[string]string{"endpoint": "createPeople"}, 1},
			{"hrsync_api_rate_limit_waits_total", map[string]string{"endpoint": "getProduct"}, 2},
			{"hrsync_api_rate_limit_wait_seconds_total", map[string]string{"endpoint": "getProduct"}, 0.5},
		} {
			if v, _ := value(t, m, c.name, c.labels); v != c.want {
				t.Errorf("%s%v = %v, want %v", c.name, c.labels, v, c.want)
			}
		}
	})
	t.Run("handler serves the exposition format", func(t *testing.T) {
		m := New()
		m.ObserveCounts("people", "acme", map[string]int{CountCreated: 5})
		body := scrape(t, m)
		if !strings.Contains(body, `hrsync_people_created_total{job="people",tenant="acme"} 5`) {
			t.Errorf("/metrics lacks the people counter:\n%.2000s", body)
		}
		if !strings.Contains(body, "go_goroutines") {
			t.Error("/metrics lacks the Go runtime collector")
		}
	})
}
