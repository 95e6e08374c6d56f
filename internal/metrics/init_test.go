package metrics

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// scrape serves m's /metrics once and returns the body.
func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

func TestInitCreatesEverySeriesAtZero(t *testing.T) {
	m := New()
	m.Init("v9.9.9", Known{Jobs: []string{"people", "grants"}, Tenants: []string{"acme", "beta"},
		Outcomes: []string{"ok", "attention", "locked", "safeguard", "failed"},
		Rules:    []Rule{{Job: "grants", Tenant: "acme", Rule: "birthday"}}})
	body := scrape(t, m)
	for _, result := range []string{"applied", "held", "skipped"} {
		line := `hrsync_rule_grants_total{job="grants",result="` + result + `",rule="birthday",tenant="acme"} 0`
		if !strings.Contains(body, line+"\n") {
			t.Errorf("no %s", line)
		}
	}
	if strings.Contains(body, `hrsync_rule_grants_total{job="grants",result="applied",rule="birthday",tenant="beta"}`) {
		t.Error("a rule of acme has series for beta")
	}
	for _, job := range []string{"people", "grants"} {
		for _, tenant := range []string{"acme", "beta"} {
			jt := `job="` + job + `",tenant="` + tenant + `"`
			for _, outcome := range []string{"ok", "attention", "locked", "safeguard", "failed"} {
				for _, name := range []string{"hrsync_runs_total", "hrsync_last_outcome"} {
					line := name + `{job="` + job + `",outcome="` + outcome + `",tenant="` + tenant + `"} 0`
					if !strings.Contains(body, line+"\n") {
						t.Errorf("no %s", line)
					}
				}
			}
			for _, name := range []string{"hrsync_runs_skipped_total", "hrsync_run_panics_total", "hrsync_runs_in_progress",
				"hrsync_people_created_total", "hrsync_grants_applied_total", "hrsync_grants_held", "hrsync_rows_rejected_total",
				"hrsync_run_duration_seconds_count"} {
				if line := name + "{" + jt + "} 0"; !strings.Contains(body, line+"\n") {
					t.Errorf("no %s", line)
				}
			}
		}
		for _, source := range []string{SourceDropFolder, SourceStore} {
			if line := `hrsync_metrics_collect_errors_total{source="` + source + `",tenant="acme"} 0`; !strings.Contains(body, line+"\n") {
				t.Errorf("no %s", line)
			}
		}
	}
	for _, name := range []string{"hrsync_api_retries_total", "hrsync_api_rate_limit_waits_total",
		"hrsync_api_rate_limit_wait_seconds_total", "hrsync_api_call_duration_seconds_count"} {
		if line := name + `{endpoint="createPeople"} 0`; !strings.Contains(body, line+"\n") {
			t.Errorf("no %s", line)
		}
	}
	if !strings.Contains(body, `hrsync_build_info{goversion="go`) || !strings.Contains(body, `version="v9.9.9"} 1`) {
		t.Errorf("no build info:\n%s", grep(body, "build_info"))
	}
	if strings.Contains(body, "hrsync_last_success_timestamp_seconds{") {
		t.Error("the time of the last success exists before any success (0 would read as 1970)")
	}

	t.Run("a run sets its outcome to 1 and the others to 0", func(t *testing.T) {
		m.RunFinished("people", "acme", "attention", time.Second, time.Now())
		m.RunFinished("people", "acme", "ok", time.Second, time.Now())
		body := scrape(t, m)
		for outcome, want := range map[string]string{"ok": "1", "attention": "0", "failed": "0"} {
			line := `hrsync_last_outcome{job="people",outcome="` + outcome + `",tenant="acme"} ` + want
			if !strings.Contains(body, line+"\n") {
				t.Errorf("no %s in\n%s", line, grep(body, "last_outcome"))
			}
		}
	})
}

// grep keeps the lines of body that contain s.
func grep(body, s string) string {
	var out []string
	for line := range strings.Lines(body) {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "")
}

func TestScrapeTimeGauges(t *testing.T) {
	now := time.Now()
	broken := errors.New("folder gone")
	var logged []string
	m := New()
	m.WatchFolders([]Folder{
		{Tenant: "acme", Waiting: func(context.Context) ([]time.Time, error) {
			return []time.Time{now.Add(-time.Minute), now.Add(-time.Hour)}, nil
		}},
		{Tenant: "empty", Waiting: func(context.Context) ([]time.Time, error) { return nil, nil }},
		{Tenant: "gone", Waiting: func(context.Context) ([]time.Time, error) { return nil, broken }},
	}, func(source, tenant string, err error) { logged = append(logged, source+" "+tenant+" "+err.Error()) })
	m.WatchBacklog([]string{"acme", "slow"}, func(ctx context.Context, tenant string) (Backlog, error) {
		if tenant == "slow" {
			<-ctx.Done()
			return Backlog{}, ctx.Err()
		}
		return Backlog{PersonalizationsPending: 4, PersonalizationsFailed: 1, OrdersNotPolled: 2}, nil
	}, 50*time.Millisecond, nil)
	for range 2 {
		body := scrape(t, m)
		for _, line := range []string{
			`hrsync_dropfolder_files_waiting{tenant="acme"} 2`, `hrsync_dropfolder_files_waiting{tenant="empty"} 0`,
			`hrsync_dropfolder_oldest_file_age_seconds{tenant="empty"} 0`,
			`hrsync_personalizations_pending{tenant="acme"} 4`, `hrsync_personalizations_failed{tenant="acme"} 1`,
			`hrsync_orders_not_polled{tenant="acme"} 2`,
		} {
			if !strings.Contains(body, line+"\n") {
				t.Errorf("no %s in\n%s", line, grep(body, "tenant="))
			}
		}
		if age := grep(body, `hrsync_dropfolder_oldest_file_age_seconds{tenant="acme"}`); !strings.HasPrefix(age, `hrsync_dropfolder_oldest_file_age_seconds{tenant="acme"} 36`) {
			t.Errorf("oldest age = %q, want about an hour (36xx s)", age)
		}
		if strings.Contains(body, `tenant="gone"`) && !strings.Contains(body, `hrsync_metrics_collect_errors_total{source="dropfolder",tenant="gone"}`) {
			t.Errorf("a folder that cannot be listed shows gauges:\n%s", grep(body, "gone"))
		}
		if strings.Contains(body, `hrsync_personalizations_pending{tenant="slow"}`) {
			t.Error("a tenant whose query timed out shows gauges")
		}
	}
	// Read after the two scrapes and one more, which the counter may have
	// been collected before.
	_ = scrape(t, m)
	for _, c := range []struct{ source, tenant string }{{SourceDropFolder, "gone"}, {SourceStore, "slow"}} {
		if v := testutil.ToFloat64(m.collectErrors.WithLabelValues(c.source, c.tenant)); v != 3 {
			t.Errorf("collect errors of %s %s = %v, want 3 (one a scrape)", c.source, c.tenant, v)
		}
	}
	if len(logged) != 1 || logged[0] != "dropfolder gone folder gone" {
		t.Errorf("errors told = %q, want the broken folder once over three scrapes", logged)
	}
}
