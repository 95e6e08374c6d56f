package orders

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"hrsync/api"
	"hrsync/apiclient"
	"hrsync/emulator"
	"hrsync/internal/contract"
	"hrsync/model"
	"hrsync/store"
)

// answerRewrite changes one answer of the emulator: the decoded body of a
// success answer to the request r, to be encoded again.
type answerRewrite func(r *http.Request, body []byte) any

// rewritingWorld is a world whose emulator's answers pass through rw (when
// it returns non-nil) and then the contract validator, and whose job logs
// to logs.
func rewritingWorld(t *testing.T, rw answerRewrite) (*world, *observer.ObservedLogs, func() *Job) {
	t.Helper()
	w := newWorld(t, 4)
	v, err := contract.New()
	if err != nil {
		t.Fatal(err)
	}
	h := http.HandlerFunc(func(out http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		w.emu.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if rec.Code == http.StatusOK {
			if changed := rw(r, body); changed != nil {
				if body, err = json.Marshal(changed); err != nil {
					t.Errorf("encode rewritten answer: %v", err)
				}
			}
		}
		maps.Copy(out.Header(), rec.Header())
		out.Header().Del("Content-Length")
		out.WriteHeader(rec.Code)
		_, _ = out.Write(body)
	})
	srv := httptest.NewServer(v.Middleware(h, func(err error) { t.Errorf("contract: %v", err) }))
	t.Cleanup(srv.Close)
	core, logs := observer.New(zap.InfoLevel)
	w.client, err = apiclient.New(apiclient.Config{
		BaseURL: srv.URL, Token: testToken, RatePerSecond: 100000, Burst: 10000,
		MaxConcurrency: 4, MaxAttempts: 1, Timeout: 30 * time.Second, Logger: zap.New(core),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.client.CloseIdleConnections)
	if err := w.st.SavePeople(t.Context(), "acme", []store.PersonRow{
		{ExternalID: "E1001", Email: "e1001@example.test", RemoteID: emulator.PersonJamesID},
		{ExternalID: "E1002", Email: "e1002@example.test", RemoteID: emulator.PersonJeanLucID},
	}); err != nil {
		t.Fatal(err)
	}
	job := func() *Job {
		j, err := New(Options{
			Tenant: "acme", CompanyID: emulator.DatasetCompanyID, CollectionID: emulator.PlainCollectionID,
			BackfillDays: 30, UserIDsChunk: 10, PollConcurrency: 2,
		}, w.st, w.client, zap.New(core))
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	return w, logs, job
}

func isList(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/orders/get") }

func decodePage(t *testing.T, body []byte) api.OrdersPage {
	t.Helper()
	var page api.OrdersPage
	if err := json.Unmarshal(body, &page); err != nil || page.Data == nil {
		t.Fatalf("emulator's orders answer: %v", err)
	}
	return page
}

func warned(logs *observer.ObservedLogs, text string) []observer.LoggedEntry {
	return logs.FilterLevelExact(zap.WarnLevel).FilterMessageSnippet(text).All()
}

func TestListedOrdersOutsideTheDaysAreIgnored(t *testing.T) {
	const stray = "0ddba11e-0000-4000-8000-00000000000a"
	// Every list answer carries one more order, placed 60 days ago, with a
	// count that matches the rows.
	w, logs, job := rewritingWorld(t, func(r *http.Request, body []byte) any {
		if !isList(r) {
			return nil
		}
		page := decodePage(t, body)
		old := time.Now().UTC().AddDate(0, 0, -60)
		id, ext := stray, "E1001"
		rows := append(*page.Data, api.Order{Id: &id, CreatedAt: &old, ExternalId: &ext})
		n := float64(len(rows))
		return api.OrdersPage{Data: &rows, Count: &n}
	})
	in := w.place(t, "E1001", time.Now().Add(-time.Hour))

	rep, err := job().RunOnce(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Listed != 1 || rep.OutsideWindow != 1 || rep.CountBelowRows != 0 || rep.Outcome() != model.OutcomeOK {
		t.Fatalf("report = %+v", rep)
	}
	if _, ok, err := w.st.Order(t.Context(), "acme", in.ID); err != nil || !ok {
		t.Fatalf("order in the window not stored: %v", err)
	}
	if _, ok, err := w.st.Order(t.Context(), "acme", stray); err != nil || ok {
		t.Fatalf("order outside the window stored (found %v, %v)", ok, err)
	}
	if c := rep.Counts(); c["outsideWindow"] != 1 {
		t.Errorf("counts %v, want outsideWindow 1", c)
	}
	if ws := warned(logs, "outside the days asked for"); len(ws) != 1 || ws[0].ContextMap()["orders"] != int64(1) {
		t.Errorf("warnings %v, want one naming 1 order", ws)
	}
}

func TestListedCountBelowTheRowsIsLogged(t *testing.T) {
	w, logs, job := rewritingWorld(t, func(r *http.Request, body []byte) any {
		if !isList(r) {
			return nil
		}
		page := decodePage(t, body)
		zero := 0.0
		return api.OrdersPage{Data: page.Data, Count: &zero}
	})
	w.place(t, "E1001", time.Now().Add(-time.Hour))
	w.place(t, "E1002", time.Now().Add(-2*time.Hour))

	rep, err := job().RunOnce(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Listed != 2 || rep.CountBelowRows != 1 || rep.Counts()["countBelowRows"] != 1 {
		t.Fatalf("report = %+v", rep)
	}
	ws := warned(logs, "count is below the rows")
	if len(ws) != 1 {
		t.Fatalf("%d warnings about the count, want 1", len(ws))
	}
	if f := ws[0].ContextMap(); f["count"] != 0.0 || f["rows"] != int64(2) {
		t.Errorf("warning fields %v", f)
	}
}

func TestStatusAnswerForAnotherOrderIsAnErrorForThatOrder(t *testing.T) {
	var shipped, placed emulator.Order
	// The status of the placed order is answered with the shipped order's.
	w, logs, job := rewritingWorld(t, func(r *http.Request, body []byte) any {
		if !strings.HasSuffix(r.URL.Path, "/orders/"+placed.ID) {
			return nil
		}
		var st api.OrderStatus
		if err := json.Unmarshal(body, &st); err != nil {
			t.Errorf("emulator's status answer: %v", err)
		}
		st.Id, st.Status = shipped.ID, api.OrderStatusValueShipped
		return st
	})
	shipped = w.place(t, "E1001", time.Now().Add(-time.Hour))
	placed = w.place(t, "E1002", time.Now().Add(-2*time.Hour))
	if _, err := w.emu.SetOrderStatus(shipped.ID, api.OrderStatusValueShipped); err != nil {
		t.Fatal(err)
	}

	rep, err := job().RunOnce(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Polled != 1 || rep.PollErrors != 1 || rep.Outcome() != model.OutcomeAttention {
		t.Fatalf("report = %+v", rep)
	}
	if len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0], placed.ID) || !strings.Contains(rep.Errors[0], "bad response") {
		t.Errorf("errors %q do not name the order asked for", rep.Errors)
	}
	got, _, err := w.st.Order(t.Context(), "acme", shipped.ID)
	if err != nil || got.Status != string(api.OrderStatusValueShipped) {
		t.Errorf("the other order: status %q, %v; want Shipped", got.Status, err)
	}
	got, _, err = w.st.Order(t.Context(), "acme", placed.ID)
	if err != nil || got.Status == string(api.OrderStatusValueShipped) || len(got.History) != 0 {
		t.Errorf("the order answered for another: status %q, history %v, %v; want it untouched", got.Status, got.History, err)
	}
	if ws := warned(logs, "order status calls failed"); len(ws) != 1 || ws[0].ContextMap()["orders"] != int64(1) {
		t.Errorf("warnings %v, want one naming 1 order", ws)
	}
}
