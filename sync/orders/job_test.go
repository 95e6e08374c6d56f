package orders

import (
	"context"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"hrsync/apiclient"
	"hrsync/emulator"
	"hrsync/internal/runner"
	"hrsync/model"
	"hrsync/store"
)

const testToken = "orders-test-token"

// world is an in-process emulator served over loopback, a client, and an
// SQLite store.
type world struct {
	emu    *emulator.Emulator
	client *apiclient.Client
	st     *store.Store
}

func newWorld(t testing.TB, concurrency int) *world {
	t.Helper()
	emu, err := emulator.New(emulator.Options{Tokens: map[string][]string{testToken: nil}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(emu)
	t.Cleanup(srv.Close)
	client, err := apiclient.New(apiclient.Config{
		BaseURL: srv.URL, Token: testToken, RatePerSecond: 100000, Burst: 10000,
		MaxConcurrency: concurrency, MaxAttempts: 1, Timeout: 30 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.CloseIdleConnections)
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "state.db"), store.Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return &world{emu: emu, client: client, st: st}
}

func (w *world) job(t testing.TB, now func() time.Time) *Job {
	t.Helper()
	j, err := New(Options{
		Tenant: "acme", CompanyID: emulator.DatasetCompanyID, CollectionID: emulator.PlainCollectionID,
		BackfillDays: 30, OverlapDays: 2, UserIDsChunk: 2, PollConcurrency: 4,
		StopPollingAfter: 90 * 24 * time.Hour, ProductRefresh: 24 * time.Hour, Country: "CA", Language: "fr-FR", Now: now,
	}, w.st, w.client, nil)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func (w *world) place(t testing.TB, externalID string, at time.Time) emulator.Order {
	t.Helper()
	o, err := w.emu.PlaceOrder(emulator.PlaceOrder{CollectionID: emulator.PlainCollectionID, ExternalID: externalID, CreatedAt: &at,
		Lines: []emulator.PlaceOrderLine{{ProductID: emulator.NotebookProductID, Quantity: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func countOp(w *world, op string) int {
	n := 0
	for _, r := range w.emu.Requests() {
		if r.OperationID == op {
			n++
		}
	}
	return n
}

func TestRunOnce(t *testing.T) {
	w := newWorld(t, 4)
	now := time.Now().UTC()
	clock := now
	j := w.job(t, func() time.Time { return clock })
	today := utcDay(now)

	t.Run("no synced person: no orders list call", func(t *testing.T) {
		rep, err := j.RunOnce(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if rep.People != 0 || rep.Listed != 0 || countOp(w, "listOrders") != 0 {
			t.Fatalf("report = %+v, %d list calls", rep, countOp(w, "listOrders"))
		}
	})

	// E1001 and E1002 are synced; E1003 is a platform person hrsync does not know.
	if err := w.st.SavePeople(t.Context(), "acme", []store.PersonRow{
		{ExternalID: "E1001", Email: "e1001@example.test", RemoteID: emulator.PersonJamesID},
		{ExternalID: "E1002", Email: "e1002@example.test", RemoteID: emulator.PersonJeanLucID},
		{ExternalID: "NEW1", Email: "new1@example.test"}, // not created on the platform yet
	}); err != nil {
		t.Fatal(err)
	}
	in := w.place(t, "E1001", now.Add(-time.Hour))
	edge := w.place(t, "E1002", today.AddDate(0, 0, -30)) // the first day of the backfill
	w.place(t, "E1001", today.AddDate(0, 0, -31).Add(23*time.Hour))
	w.place(t, "E1003", now.Add(-time.Hour))

	t.Run("first run backfills orders.backfillDays", func(t *testing.T) {
		rep, err := j.RunOnce(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if rep.FirstDay != today.AddDate(0, 0, -30).Format(time.DateOnly) || rep.LastDay != today.Format(time.DateOnly) {
			t.Fatalf("window %s..%s", rep.FirstDay, rep.LastDay)
		}
		if rep.People != 2 || rep.Listed != 2 || rep.Polled != 2 || rep.ProductsRead != 1 || rep.Outcome() != model.OutcomeOK {
			t.Fatalf("report = %+v", rep)
		}
		for _, id := range []string{in.ID, edge.ID} {
			if _, ok, err := w.st.Order(t.Context(), "acme", id); err != nil || !ok {
				t.Fatalf("order %s not stored: %v", id, err)
			}
		}
		byStatus, err := w.st.OrdersByStatus(t.Context(), "acme")
		if err != nil || byStatus["Placed"] != 2 || len(byStatus) != 1 {
			t.Fatalf("by status = %v, %v", byStatus, err)
		}
	})

	t.Run("later runs start overlapDays before the watermark", func(t *testing.T) {
		clock = now.Add(72 * time.Hour)
		rep, err := j.RunOnce(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if rep.FirstDay != today.AddDate(0, 0, -2).Format(time.DateOnly) || rep.LastDay != today.AddDate(0, 0, 3).Format(time.DateOnly) {
			t.Fatalf("window %s..%s", rep.FirstDay, rep.LastDay)
		}
		// Only the order of today is in the window; the product is read
		// again (older than productRefresh) but has not changed.
		if rep.Listed != 1 || rep.Written != 0 || rep.ProductsRead != 1 || rep.ProductsChanged != 0 {
			t.Fatalf("report = %+v", rep)
		}
	})

	t.Run("failed status calls need attention", func(t *testing.T) {
		f, err := w.emu.AddFault(emulator.Fault{Operation: "getOrderStatus", Status: 500})
		if err != nil {
			t.Fatal(err)
		}
		defer w.emu.RemoveFault(f.ID)
		rep, err := j.RunOnce(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if rep.PollErrors != 2 || rep.Outcome() != model.OutcomeAttention || len(rep.Errors) == 0 {
			t.Fatalf("report = %+v", rep)
		}
	})

	t.Run("orders older than stopPollingAfter are flagged, not polled", func(t *testing.T) {
		clock = now.Add(91 * 24 * time.Hour)
		before := countOp(w, "getOrderStatus")
		rep, err := j.RunOnce(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if rep.StoppedPolling != 2 || rep.Polled != 0 || countOp(w, "getOrderStatus") != before {
			t.Fatalf("report = %+v", rep)
		}
		d, _, err := w.st.Order(t.Context(), "acme", in.ID)
		if err != nil || !d.PollingStopped {
			t.Fatalf("order = %+v, %v", d, err)
		}
	})

	t.Run("a held lock is refused", func(t *testing.T) {
		release, err := w.st.TryLock(t.Context(), "orders-acme")
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = release() }()
		if _, err := j.RunOnce(t.Context()); err == nil {
			t.Fatal("no error while the lock is held")
		}
	})
}

func TestNew(t *testing.T) {
	w := newWorld(t, 1)
	for name, o := range map[string]Options{
		"no tenant":        {CompanyID: "c", CollectionID: "x"},
		"no company":       {Tenant: "t", CollectionID: "x"},
		"negative overlap": {Tenant: "t", CompanyID: "c", CollectionID: "x", OverlapDays: -1},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := New(o, w.st, w.client, nil); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

// TestRunCutShort: a run whose context is cancelled mid-run (the process
// is stopping) is recorded interrupted with the words of a run cut short,
// not failed with a context error.
func TestRunCutShort(t *testing.T) {
	w := newWorld(t, 1)
	if err := w.st.SavePeople(t.Context(), "acme", []store.PersonRow{
		{ExternalID: "E1001", Email: "e1001@example.test", RemoteID: emulator.PersonJamesID},
	}); err != nil {
		t.Fatal(err)
	}
	w.place(t, "E1001", time.Now().Add(-time.Hour))
	ctx, stop := context.WithCancel(t.Context())
	// The stop comes as the run reads its clock, after it recorded its start.
	j := w.job(t, func() time.Time { stop(); return time.Now().UTC() })
	rep, err := j.RunOnce(ctx)
	if !errors.Is(err, runner.ErrCut) || !errors.Is(err, context.Canceled) || rep.Outcome() != model.OutcomeInterrupted {
		t.Fatalf("error %v, outcome %s; want a run cut short", err, rep.Outcome())
	}
	runs, err := w.st.LastRuns(t.Context(), 1)
	if err != nil || len(runs) != 1 || runs[0].Outcome != model.OutcomeInterrupted || runs[0].Error != runner.ErrCut.Error() {
		t.Fatalf("run record %+v (%v), want interrupted with the words of a run cut short", runs, err)
	}
}
