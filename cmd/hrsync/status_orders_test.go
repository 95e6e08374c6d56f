package main

import (
	"path/filepath"
	"testing"
	"time"

	"hrsync/config"
	"hrsync/store"
)

// TestStatusOrdersPolling checks the ordersPolling column of `hrsync
// status` against a real SQLite store: the orders neither final nor
// stopped, per tenant.
func TestStatusOrdersPolling(t *testing.T) {
	ctx := t.Context()
	st, err := store.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "state.db"), store.Options{Migrate: true})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	day := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	if err := st.SavePeople(ctx, "acme", []store.PersonRow{{ExternalID: "e1", Email: "e1@example.test",
		FirstSeenAt: day, LastSeenAt: day}}); err != nil {
		t.Fatalf("save people: %v", err)
	}
	var orders []store.OrderRow
	for i, id := range []string{"o1", "o2", "o3", "o4"} {
		orders = append(orders, store.OrderRow{OrderID: id, CollectionID: "c1", ExternalID: "e1",
			PlacedAt: day.Add(time.Duration(i) * time.Hour),
			Lines:    []store.LineItemRow{{LineItemID: id + "-l1", ProductID: "p1", Quantity: 1, Price: 10}}})
	}
	if _, err := st.UpsertOrders(ctx, "acme", orders); err != nil {
		t.Fatalf("upsert orders: %v", err)
	}
	tenants := []config.Tenant{{Name: "acme"}, {Name: "globex"}}
	polling := func(t *testing.T) map[string]*int {
		t.Helper()
		rep, err := buildStatus(ctx, st, tenants)
		if err != nil {
			t.Fatalf("status: %v", err)
		}
		out := map[string]*int{}
		for _, tn := range rep.Tenants {
			out[tn.Name] = tn.OrdersPolling
		}
		return out
	}
	want := func(t *testing.T, got map[string]*int, tenant string, n int) {
		t.Helper()
		if got[tenant] == nil || *got[tenant] != n {
			t.Fatalf("%s: ordersPolling = %v, want %d", tenant, got[tenant], n)
		}
	}

	t.Run("every listed order is polled, a tenant without orders counts zero", func(t *testing.T) {
		got := polling(t)
		want(t, got, "acme", 4)
		want(t, got, "globex", 0)
	})
	t.Run("final and stopped orders are no longer counted", func(t *testing.T) {
		_, err := st.ApplyOrderStatuses(ctx, "acme", []store.OrderObservation{{OrderID: "o1", Status: "Shipped",
			Lines: []store.LineObservation{{LineItemID: "o1-l1", Status: "shipped"}}}}, day.Add(48*time.Hour))
		if err != nil {
			t.Fatalf("apply statuses: %v", err)
		}
		if _, err := st.StopPolling(ctx, "acme", []string{"o2"}, day.Add(72*time.Hour)); err != nil {
			t.Fatalf("stop polling: %v", err)
		}
		want(t, polling(t), "acme", 2)
	})
}
