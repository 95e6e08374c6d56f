package notify_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"hrsync/internal/metrics"
	"hrsync/internal/notify"
)

func sampleEvent() notify.Event {
	return notify.Event{Job: "people", Tenant: "acme", Outcome: "safeguard",
		Cause:  "employees.csv: a safeguard stopped the run before any call",
		Next:   "once you have checked the export, run it once past the safeguards: hrsync run people ...",
		Counts: map[string]int{"new": 2, "departed": 30, "unchanged": 0},
		Files:  []notify.File{{Name: "employees.csv", Outcome: "safeguard", ArchivedAs: "failed/employees.csv"}},
		Stops:  []string{"employees.csv: 30 of 100 active people would be marked departed"},
		Held:   []string{"P00017"}, MoreHeld: 3,
		Rejections: []notify.Rejection{{File: "employees.csv", Line: 4, Column: "email", Reason: "not a valid e-mail address"}}, MoreRejections: 1,
		At: time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC)}
}

func TestText(t *testing.T) {
	text := notify.Text(sampleEvent())
	for _, want := range []string{
		"hrsync people acme: safeguard (employees.csv)\n",
		"What happened: employees.csv: a safeguard stopped",
		"Next step: once you have checked the export",
		"- employees.csv: 30 of 100 active people would be marked departed",
		"- employees.csv: safeguard, archived as failed/employees.csv",
		"- employees.csv line 4, email: not a valid e-mail address",
		"- and 1 more (see the reports)",
		"Waiting for confirmation (they may already exist on the platform; their grant waits): P00017 and 3 more",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	for _, bad := range []string{"Counts", "departed=30", "new=2"} {
		if strings.Contains(text, bad) {
			t.Errorf("text holds the counter %q:\n%s", bad, text)
		}
	}
}

func TestPayloads(t *testing.T) {
	e := sampleEvent()
	for _, c := range []struct {
		format string
		check  func(t *testing.T, v map[string]any)
	}{
		{notify.FormatGeneric, func(t *testing.T, v map[string]any) {
			if v["outcome"] != "safeguard" || v["tenant"] != "acme" || v["title"] == nil || v["text"] == nil {
				t.Errorf("generic payload %v", v)
			}
		}},
		{notify.FormatSlack, func(t *testing.T, v map[string]any) {
			if len(v) != 1 || !strings.HasPrefix(v["text"].(string), "hrsync people acme: safeguard") {
				t.Errorf("slack payload %v", v)
			}
		}},
		{notify.FormatTeams, func(t *testing.T, v map[string]any) {
			att := v["attachments"].([]any)[0].(map[string]any)
			card := att["content"].(map[string]any)
			if v["type"] != "message" || att["contentType"] != "application/vnd.microsoft.card.adaptive" || card["type"] != "AdaptiveCard" {
				t.Errorf("teams payload %v", v)
			}
		}},
	} {
		t.Run(c.format, func(t *testing.T) {
			b, err := notify.Payload(c.format, e)
			if err != nil {
				t.Fatal(err)
			}
			var v map[string]any
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatal(err)
			}
			c.check(t, v)
		})
	}
	if _, err := notify.Payload("pager", e); err == nil {
		t.Error("an unknown format is accepted")
	}
}

// TestSendRetriesAndCounts: a delivery is tried again after a 503 and
// counted as sent; a 400 is not tried again and is counted as failed; an
// endpoint down for every try is given up after the attempts.
func TestSendRetriesAndCounts(t *testing.T) {
	var flakyHits, refusedHits, downHits atomic.Int32
	serve := func(hits *atomic.Int32, status func(n int32) int) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(status(hits.Add(1)))
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	flaky := serve(&flakyHits, func(n int32) int {
		if n == 1 {
			return http.StatusServiceUnavailable
		}
		return http.StatusNoContent
	})
	refused := serve(&refusedHits, func(int32) int { return http.StatusBadRequest })
	down := serve(&downHits, func(int32) int { return http.StatusBadGateway })

	m := metrics.New()
	n := notify.New(notify.Options{Attempts: 3, Backoff: time.Millisecond, Timeout: time.Second, Counter: m})
	n.Add("acme", &notify.Webhook{URL: flaky, Format: notify.FormatSlack})
	n.Add("acme", &notify.Webhook{URL: refused})
	n.Add("acme", &notify.Webhook{URL: down, Format: notify.FormatTeams})
	if failed := n.Send(t.Context(), sampleEvent()); failed != 2 {
		t.Errorf("Send gave up %d deliveries, want 2", failed)
	}
	if flakyHits.Load() != 2 || refusedHits.Load() != 1 || downHits.Load() != 3 {
		t.Errorf("tries: flaky %d (want 2), refused %d (want 1), down %d (want 3)", flakyHits.Load(), refusedHits.Load(), downHits.Load())
	}
	got := counted(t, m)
	want := map[string]float64{
		"failed teams": 1, "failed webhook": 1, "sent slack": 1,
	}
	if len(got) != len(want) {
		t.Errorf("counted %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("counted %v, want %v", got, want)
			break
		}
	}
	t.Run("a cancelled context still sends, once", func(t *testing.T) {
		before := downHits.Load()
		ctx, cancel := context.WithCancel(t.Context())
		cancel() // a daemon shutting down
		if failed := n.Send(ctx, sampleEvent()); failed != 2 {
			t.Errorf("Send gave up %d deliveries, want 2", failed)
		}
		if got := downHits.Load() - before; got != 1 {
			t.Errorf("the endpoint down got %d tries after the cancel, want 1", got)
		}
	})
	if n.Send(t.Context(), notify.Event{Tenant: "other"}) != 0 {
		t.Error("a tenant without channels failed a delivery")
	}
}

// counted reads the notification counters of tenant acme from the
// registry: "sent slack" -> 1.
func counted(t *testing.T, m *metrics.Metrics) map[string]float64 {
	t.Helper()
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		result, ok := strings.CutPrefix(f.GetName(), "hrsync_notifications_")
		if !ok {
			continue
		}
		result = strings.TrimSuffix(result, "_total")
		for _, mt := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range mt.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["tenant"] == "acme" {
				out[result+" "+labels["channel"]] += mt.GetCounter().GetValue()
			}
		}
	}
	return out
}
