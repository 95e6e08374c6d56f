package main_test

// End-to-end test of the orders job: the real binary against the emulator
// as a process, the worker's SQLite state read between runs.

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// Ids of the emulator's built-in dataset (docs/emulator.md).
const (
	notebookProduct = "30000000-0000-4000-8000-000000000003"
	datasetPerson   = "E1001" // exists at the platform, never synced by hrsync
)

// emuOrder is an order as the emulator's test endpoints answer it.
type emuOrder struct {
	ID        string `json:"id"`
	LineItems []struct {
		ID string `json:"id"`
	} `json:"lineItems"`
}

type placeLine struct {
	ProductID string `json:"productId"`
	Quantity  int    `json:"quantity,omitempty"`
}

func (m *emulatorProc) placeOrder(t *testing.T, collection, externalID string, createdAt time.Time, lines ...placeLine) emuOrder {
	t.Helper()
	var o emuOrder
	m.do(t, http.MethodPost, "/_emulator/orders", map[string]any{
		"collectionId": collection, "externalId": externalID, "createdAt": createdAt.UTC().Format(time.RFC3339), "lines": lines,
	}, &o)
	if o.ID == "" || len(o.LineItems) != len(lines) {
		t.Fatalf("placed order = %+v", o)
	}
	return o
}

func (m *emulatorProc) setOrderStatus(t *testing.T, orderID, status string) {
	t.Helper()
	m.do(t, http.MethodPatch, "/_emulator/orders/"+orderID, map[string]string{"status": status}, nil)
}

func (m *emulatorProc) setLineStatus(t *testing.T, orderID, lineID, status string) {
	t.Helper()
	m.do(t, http.MethodPatch, "/_emulator/orders/"+orderID+"/lines/"+lineID, map[string]string{"status": status}, nil)
}

func (m *emulatorProc) ship(t *testing.T, orderID, lineID, tracking string) {
	t.Helper()
	m.do(t, http.MethodPost, "/_emulator/orders/"+orderID+"/lines/"+lineID+"/shipments",
		map[string]string{"trackingNumber": tracking, "trackingUrl": "https://track.example.test/" + tracking}, nil)
}

// strings1 runs a query on the worker's state and returns its first column.
func (e *env) strings1(query string, args ...any) []string {
	e.t.Helper()
	rows, err := e.stateDB().QueryContext(e.t.Context(), query, args...)
	if err != nil {
		e.t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// snapshot summarizes every reporting table: rows and newest write time.
func (e *env) snapshot() []string {
	e.t.Helper()
	var out []string
	for _, q := range []string{
		"SELECT COUNT(*) || '/' || COALESCE(MAX(updated_at), '') FROM orders",
		"SELECT COUNT(*) || '/' || COALESCE(MAX(updated_at), '') FROM order_line_items",
		"SELECT COUNT(*) || '/' || COALESCE(MAX(first_seen_at), '') FROM shipments",
		"SELECT COUNT(*) || '/' || COALESCE(MAX(observed_at), '') FROM order_status_history",
		"SELECT COUNT(*) || '/' || COALESCE(MAX(observed_at), '') FROM line_item_status_history",
		"SELECT COUNT(*) || '/' || COALESCE(MAX(updated_at), '') FROM products",
		"SELECT COUNT(*) || '/' || COALESCE(MAX(updated_at), '') FROM orders_watermarks",
	} {
		out = append(out, e.strings1(q)...)
	}
	return out
}

// lastOrdersRun returns the counts of the newest orders run and its outcome.
func (e *env) lastOrdersRun() (map[string]int, string) {
	e.t.Helper()
	var counts, outcome string
	if err := e.stateDB().QueryRowContext(e.t.Context(),
		"SELECT counts, outcome FROM runs WHERE job = 'orders' ORDER BY started_at DESC LIMIT 1").Scan(&counts, &outcome); err != nil {
		e.t.Fatal(err)
	}
	var m map[string]int
	if err := json.Unmarshal([]byte(counts), &m); err != nil {
		e.t.Fatal(err)
	}
	return m, outcome
}

func TestOrdersEndToEnd(t *testing.T) {
	e := newEnv(t, configOptions{})
	e.dropFile("people.csv", csvExport(genPeople(0, 6)))
	e.mustRun(0, "run", "people")
	if n := e.count("SELECT COUNT(*) FROM people WHERE remote_id IS NOT NULL"); n != 6 {
		t.Fatalf("%d people synced, want 6", n)
	}

	now := time.Now().UTC()
	// The order followed through its life: three lines of the notebook.
	main := e.emu.placeOrder(t, e.coll, "P00001", now.Add(-time.Hour),
		placeLine{ProductID: notebookProduct, Quantity: 2}, placeLine{ProductID: notebookProduct}, placeLine{ProductID: notebookProduct, Quantity: 3})
	shipTwice, canceled, shipOnce := main.LineItems[0].ID, main.LineItems[1].ID, main.LineItems[2].ID
	// Another synced person's order, placed yesterday, that stays Placed.
	other := e.emu.placeOrder(t, e.coll, "P00002", now.AddDate(0, 0, -1), placeLine{ProductID: notebookProduct})
	// Not there: a person hrsync did not sync, and an order before the backfill window (30 days).
	stranger := e.emu.placeOrder(t, e.coll, datasetPerson, now.Add(-time.Hour), placeLine{ProductID: notebookProduct})
	old := e.emu.placeOrder(t, e.coll, "P00003", now.AddDate(0, 0, -40), placeLine{ProductID: notebookProduct})

	status := func(t *testing.T, id string) string {
		t.Helper()
		got := e.in(t).strings1("SELECT COALESCE(status, '') FROM orders WHERE order_id = ?", id)
		if len(got) != 1 {
			t.Fatalf("order %s: %d rows", id, len(got))
		}
		return got[0]
	}
	history := func(t *testing.T) []string {
		t.Helper()
		return e.in(t).strings1("SELECT status FROM order_status_history WHERE order_id = ? ORDER BY observed_at", main.ID)
	}
	lineStatus := func(t *testing.T, line string) string {
		t.Helper()
		got := e.in(t).strings1("SELECT COALESCE(status, '') FROM order_line_items WHERE line_item_id = ?", line)
		if len(got) != 1 {
			t.Fatalf("line %s: %d rows", line, len(got))
		}
		return got[0]
	}

	t.Run("first run: the synced people's orders in the window, Placed", func(t *testing.T) {
		e := e.in(t)
		res := e.mustRun(0, "run", "orders")
		if !strings.Contains(res.stdout, "listed=2") {
			t.Errorf("report does not say listed=2:\n%s", res.stdout)
		}
		ids := e.strings1("SELECT order_id FROM orders ORDER BY order_id")
		want := []string{main.ID, other.ID}
		slices.Sort(want)
		if !slices.Equal(ids, want) {
			t.Fatalf("orders = %v, want %v (not %s of an unsynced person, nor %s outside the window)", ids, want, stranger.ID, old.ID)
		}
		if s := status(t, main.ID); s != "Placed" {
			t.Fatalf("status = %q", s)
		}
		if h := history(t); !slices.Equal(h, []string{"Placed"}) {
			t.Fatalf("history = %v", h)
		}
		if got := e.strings1("SELECT external_id FROM orders WHERE order_id = ?", main.ID); !slices.Equal(got, []string{"P00001"}) {
			t.Fatalf("person = %v", got)
		}
		if n := e.count("SELECT COUNT(*) FROM order_line_items WHERE order_id = ? AND status = 'processing'", main.ID); n != 3 {
			t.Fatalf("%d processing lines, want 3", n)
		}
		if n := e.count("SELECT COUNT(*) FROM products WHERE product_id = ? AND title <> '' AND raw LIKE '%variants%'", notebookProduct); n != 1 {
			t.Fatalf("product row missing or without its document")
		}
	})

	t.Run("Pending", func(t *testing.T) {
		e := e.in(t)
		e.emu.setOrderStatus(t, main.ID, "Pending")
		e.mustRun(0, "run", "orders")
		if s := status(t, main.ID); s != "Pending" {
			t.Fatalf("status = %q", s)
		}
		if h := history(t); !slices.Equal(h, []string{"Placed", "Pending"}) {
			t.Fatalf("history = %v", h)
		}
	})

	t.Run("Partially Shipped: one parcel, one line canceled", func(t *testing.T) {
		e := e.in(t)
		e.emu.ship(t, main.ID, shipTwice, "PARCEL-1")
		e.emu.setLineStatus(t, main.ID, shipTwice, "shipped")
		e.emu.setLineStatus(t, main.ID, canceled, "canceled")
		e.emu.setOrderStatus(t, main.ID, "Partially Shipped")
		e.mustRun(0, "run", "orders")
		if s := status(t, main.ID); s != "Partially Shipped" {
			t.Fatalf("status = %q", s)
		}
		if h := history(t); !slices.Equal(h, []string{"Placed", "Pending", "Partially Shipped"}) {
			t.Fatalf("history = %v", h)
		}
		if s := lineStatus(t, canceled); s != "canceled" {
			t.Fatalf("canceled line status = %q", s)
		}
		if got := e.strings1("SELECT tracking_number FROM shipments WHERE line_item_id = ?", shipTwice); !slices.Equal(got, []string{"PARCEL-1"}) {
			t.Fatalf("shipments = %v", got)
		}
	})

	t.Run("Shipped: the second parcel, the last line; the order is final", func(t *testing.T) {
		e := e.in(t)
		e.emu.ship(t, main.ID, shipTwice, "PARCEL-2")
		e.emu.ship(t, main.ID, shipOnce, "PARCEL-3")
		e.emu.setLineStatus(t, main.ID, shipOnce, "shipped")
		e.emu.setOrderStatus(t, main.ID, "Shipped")
		e.mustRun(0, "run", "orders")
		if s := status(t, main.ID); s != "Shipped" {
			t.Fatalf("status = %q", s)
		}
		if h := history(t); !slices.Equal(h, []string{"Placed", "Pending", "Partially Shipped", "Shipped"}) {
			t.Fatalf("history = %v", h)
		}
		if got := e.strings1("SELECT tracking_number FROM shipments WHERE line_item_id = ? ORDER BY tracking_number", shipTwice); !slices.Equal(got, []string{"PARCEL-1", "PARCEL-2"}) {
			t.Fatalf("both parcels not kept: %v", got)
		}
		if n := e.count("SELECT COUNT(*) FROM orders WHERE order_id = ? AND is_final = 1 AND shipped_at IS NOT NULL", main.ID); n != 1 {
			t.Fatal("order not final")
		}
		lineHist := e.strings1(`SELECT status FROM line_item_status_history WHERE line_item_id = ? ORDER BY observed_at`, shipTwice)
		if !slices.Equal(lineHist, []string{"processing", "shipped"}) {
			t.Fatalf("line history = %v", lineHist)
		}
		if s := status(t, other.ID); s != "Placed" {
			t.Fatalf("other order status = %q", s)
		}
	})

	t.Run("a rerun with no change writes nothing but its run record", func(t *testing.T) {
		e := e.in(t)
		before := e.snapshot()
		runsBefore := e.count("SELECT COUNT(*) FROM runs WHERE job = 'orders'")
		e.emu.clearRequests(t)
		e.mustRun(0, "run", "orders")
		if after := e.snapshot(); !slices.Equal(before, after) {
			t.Fatalf("reporting tables changed:\n%v\n%v", before, after)
		}
		if n := e.count("SELECT COUNT(*) FROM runs WHERE job = 'orders'"); n != runsBefore+1 {
			t.Fatalf("orders runs = %d, want %d", n, runsBefore+1)
		}
		counts, outcome := e.lastOrdersRun()
		if outcome != "ok" || counts["written"] != 0 || counts["polled"] != 1 {
			t.Fatalf("run = %s %v, want ok, nothing written, only the open order polled", outcome, counts)
		}
		log := e.emu.requests(t)
		if n := countOp(log, "getOrderStatus"); n != 1 {
			t.Fatalf("%d status calls, want 1 (the final order is not polled)", n)
		}
		if n := countOp(log, "getProduct"); n != 0 {
			t.Fatalf("%d product calls, want 0 (read once until productRefresh)", n)
		}
	})

	t.Run("orders show", func(t *testing.T) {
		e := e.in(t)
		res := e.mustRun(0, "orders", "show", main.ID, "--json")
		var d struct {
			Status    string `json:"status"`
			Final     bool   `json:"final"`
			History   []struct{ Status string }
			Shipments map[string][]struct {
				TrackingNumber string `json:"trackingNumber"`
			} `json:"shipments"`
		}
		if err := json.Unmarshal([]byte(res.stdout), &d); err != nil {
			t.Fatalf("decode: %v\n%s", err, res)
		}
		if d.Status != "Shipped" || !d.Final || len(d.History) != 4 || len(d.Shipments[shipTwice]) != 2 {
			t.Fatalf("show = %+v", d)
		}
		text := e.mustRun(0, "orders", "show", main.ID)
		for _, want := range []string{"Shipped", "PARCEL-1, PARCEL-2", "Partially Shipped -> Shipped"} {
			if !strings.Contains(text.stdout, want) {
				t.Errorf("show does not print %q:\n%s", want, text.stdout)
			}
		}
		if res := e.run("orders", "show", stranger.ID); res.code != 1 {
			t.Fatalf("an order not held: %s", res)
		}
	})

	t.Run("product get", func(t *testing.T) {
		e := e.in(t)
		res := e.mustRun(0, "product", "get", e.coll, notebookProduct, "--lang", "fr-FR", "--json")
		var p struct {
			ID    string `json:"id"`
			Title string `json:"title"`
		}
		if err := json.Unmarshal([]byte(res.stdout), &p); err != nil {
			t.Fatalf("decode: %v\n%s", err, res)
		}
		if p.ID != notebookProduct || p.Title == "" {
			t.Fatalf("product = %+v", p)
		}
		text := e.mustRun(0, "product", "get", e.coll, notebookProduct)
		if !strings.Contains(text.stdout, "variants:") || !strings.Contains(text.stdout, p.ID) {
			t.Fatalf("readable output:\n%s", text.stdout)
		}
		if res := e.run("product", "get", e.coll, "not-a-uuid"); res.code != 2 {
			t.Fatalf("a bad product id: %s", res)
		}
	})
}
