package drivertest

import (
	"database/sql"
	"fmt"
	"slices"
	"testing"
	"time"

	"hrsync/store"
)

func ptrF(f float64) *float64 { return &f }
func ptrS(s string) *string   { return &s }

// testOrder is order n of person ext, placed on day (March 2025) with lines lines.
func testOrder(n int, ext string, day int, lines int) store.OrderRow {
	o := store.OrderRow{
		OrderID:      fmt.Sprintf("o%04d", n),
		CollectionID: "c1",
		OrderNumber:  fmt.Sprintf("#%d", 1000+n),
		ExternalID:   ext,
		PlacedAt:     at(day, n%60),
	}
	for i := range lines {
		o.Lines = append(o.Lines, store.LineItemRow{
			LineItemID: fmt.Sprintf("o%04d-l%d", n, i), ProductID: fmt.Sprintf("p%d", i%2), VariantID: "v1",
			Title: "Item", ProductTitle: "Product", VariantTitle: "Black", Quantity: float64(1 + i), Price: 12.5,
			RetailPrice: 20, ImageURL: "https://img.example.test/1.png", ImageAspectRatio: ptrF(1.5),
			Personalizations: `{"name": {"first": "X"}}`, Sha: "abc",
		})
	}
	return o
}

// tableStamp summarizes a table: row count and newest updated_at (or
// first_seen_at / observed_at), so a test can tell whether anything was written.
func tableStamp(t *testing.T, db *sql.DB, table, col string) string {
	t.Helper()
	var (
		n   int
		max sql.NullString
	)
	if err := db.QueryRowContext(ctx(t), "SELECT COUNT(*), CAST(MAX("+col+") AS TEXT) FROM "+table).Scan(&n, &max); err != nil {
		t.Fatalf("stamp %s: %v", table, err)
	}
	return fmt.Sprintf("%d/%s", n, max.String)
}

func stamps(t *testing.T, db *sql.DB) []string {
	t.Helper()
	return []string{
		tableStamp(t, db, "orders", "updated_at"),
		tableStamp(t, db, "order_line_items", "updated_at"),
		tableStamp(t, db, "shipments", "first_seen_at"),
		tableStamp(t, db, "order_status_history", "observed_at"),
		tableStamp(t, db, "line_item_status_history", "observed_at"),
		tableStamp(t, db, "products", "updated_at"),
		tableStamp(t, db, "orders_watermarks", "updated_at"),
	}
}

func testOrders(t *testing.T, d Backend) {
	eachBackend(t, d, func(t *testing.T, b backend) {
		s := b.open(t)
		raw := b.raw(t)
		must(t, s.SavePeople(ctx(t), "acme", []store.PersonRow{person("e1", 1), person("e2", 2)}))
		orders := []store.OrderRow{testOrder(1, "e1", 3, 2), testOrder(2, "e2", 4, 3), testOrder(3, "", 5, 1)}

		t.Run("first upsert writes every row", func(t *testing.T) {
			res, err := s.UpsertOrders(ctx(t), "acme", orders)
			must(t, err)
			if res.Orders != 3 || res.LineItems != 6 {
				t.Fatalf("written = %+v, want 3 orders and 6 lines", res)
			}
		})
		t.Run("the same orders again write nothing", func(t *testing.T) {
			before := stamps(t, raw)
			res, err := s.UpsertOrders(ctx(t), "acme", orders)
			must(t, err)
			if res.Orders != 0 || res.LineItems != 0 {
				t.Fatalf("written = %+v on an unchanged list", res)
			}
			if after := stamps(t, raw); !slices.Equal(before, after) {
				t.Fatalf("tables changed: %v -> %v", before, after)
			}
		})
		t.Run("a changed line is written alone", func(t *testing.T) {
			changed := slices.Clone(orders)
			changed[1] = testOrder(2, "e2", 4, 3)
			changed[1].Lines[2].Price = 13
			res, err := s.UpsertOrders(ctx(t), "acme", changed)
			must(t, err)
			if res.Orders != 0 || res.LineItems != 1 {
				t.Fatalf("written = %+v, want one line", res)
			}
			orders = changed
		})
		t.Run("an order listed twice is refused", func(t *testing.T) {
			if _, err := s.UpsertOrders(ctx(t), "acme", []store.OrderRow{orders[0], orders[0]}); err == nil {
				t.Fatal("no error")
			}
		})
		t.Run("open orders are every order before a poll", func(t *testing.T) {
			open, err := s.OpenOrders(ctx(t), "acme")
			must(t, err)
			if len(open) != 3 || open[0].OrderID != "o0001" || !open[0].PlacedAt.Equal(orders[0].PlacedAt) {
				t.Fatalf("open = %+v", open)
			}
		})

		poll1 := at(11, 0)
		t.Run("first poll records the first statuses in history", func(t *testing.T) {
			res, err := s.ApplyOrderStatuses(ctx(t), "acme", []store.OrderObservation{
				{OrderID: "o0001", Status: "Placed", Lines: []store.LineObservation{
					{LineItemID: "o0001-l0", Status: "processing"}, {LineItemID: "o0001-l1", Status: "processing"},
					{LineItemID: "unknown", Status: "processing"},
				}},
			}, poll1)
			must(t, err)
			if res.OrdersChanged != 1 || res.LinesChanged != 2 || res.UnknownLines != 1 || res.BecameFinal != 0 {
				t.Fatalf("result = %+v", res)
			}
			d, ok, err := s.Order(ctx(t), "acme", "o0001")
			must(t, err)
			if !ok || d.Status != "Placed" || d.ExternalID != "e1" || len(d.History) != 1 || d.History[0].Previous != "" ||
				!d.History[0].ObservedAt.Equal(poll1) || len(d.LineHistory) != 2 {
				t.Fatalf("order = %+v", d)
			}
		})
		poll2 := at(12, 0)
		t.Run("shipped in two parcels with a canceled line becomes final", func(t *testing.T) {
			obs := []store.OrderObservation{{OrderID: "o0001", Status: "Shipped", Lines: []store.LineObservation{
				{LineItemID: "o0001-l0", Status: "shipped", TrackingNumber: "T2", TrackingURL: "https://t.test/T2",
					Shipments: []store.Shipment{{TrackingNumber: "T1", TrackingURL: "https://t.test/T1"}, {TrackingNumber: "T2", TrackingURL: "https://t.test/T2"}}},
				{LineItemID: "o0001-l1", Status: "canceled"},
			}}}
			res, err := s.ApplyOrderStatuses(ctx(t), "acme", obs, poll2)
			must(t, err)
			if res.OrdersChanged != 1 || res.LinesChanged != 2 || res.NewShipments != 2 || res.BecameFinal != 1 {
				t.Fatalf("result = %+v", res)
			}
			d, _, err := s.Order(ctx(t), "acme", "o0001")
			must(t, err)
			if !d.Final || d.ShippedAt == nil || !d.ShippedAt.Equal(poll2) || len(d.History) != 2 ||
				d.History[1].Previous != "Placed" || len(d.ShipmentsByLine["o0001-l0"]) != 2 || d.Lines[0].TrackingNumber != "T2" {
				t.Fatalf("order = %+v", d)
			}
			t.Run("the same answer again writes nothing", func(t *testing.T) {
				before := stamps(t, raw)
				res, err := s.ApplyOrderStatuses(ctx(t), "acme", obs, at(13, 0))
				must(t, err)
				if res.Written != 0 {
					t.Fatalf("written = %+v", res)
				}
				if after := stamps(t, raw); !slices.Equal(before, after) {
					t.Fatalf("tables changed: %v -> %v", before, after)
				}
			})
			open, err := s.OpenOrders(ctx(t), "acme")
			must(t, err)
			if len(open) != 2 || open[0].OrderID != "o0002" {
				t.Fatalf("open = %+v", open)
			}
		})
		t.Run("shipped with a line still open is not final", func(t *testing.T) {
			res, err := s.ApplyOrderStatuses(ctx(t), "acme", []store.OrderObservation{{OrderID: "o0003", Status: "Shipped",
				Lines: []store.LineObservation{{LineItemID: "o0003-l0", Status: "processing"}}}}, poll2)
			must(t, err)
			if res.BecameFinal != 0 {
				t.Fatalf("result = %+v", res)
			}
		})
		t.Run("stop polling flags old orders once", func(t *testing.T) {
			n, err := s.StopPolling(ctx(t), "acme", []string{"o0002", "o0001"}, at(14, 0))
			must(t, err)
			if n != 1 {
				t.Fatalf("flagged %d, want 1 (o0001 is final)", n)
			}
			n, err = s.StopPolling(ctx(t), "acme", []string{"o0002"}, at(15, 0))
			must(t, err)
			if n != 0 {
				t.Fatalf("flagged %d again", n)
			}
			d, _, err := s.Order(ctx(t), "acme", "o0002")
			must(t, err)
			if !d.PollingStopped {
				t.Fatalf("o0002 not flagged: %+v", d)
			}
			open, err := s.OpenOrders(ctx(t), "acme")
			must(t, err)
			if len(open) != 1 || open[0].OrderID != "o0003" {
				t.Fatalf("open = %+v", open)
			}
			b, err := s.Backlog(ctx(t), "acme")
			must(t, err)
			if b.OrdersNotPolled != 1 {
				t.Fatalf("backlog = %+v, want 1 order no longer polled (o0002; o0001 is final, o0003 still polled)", b)
			}
			if b, err := s.Backlog(ctx(t), "other"); err != nil || b != (store.Backlog{}) {
				t.Fatalf("another tenant's backlog = %+v, %v", b, err)
			}
		})
		t.Run("watermark", func(t *testing.T) {
			_, ok, err := s.OrdersWatermark(ctx(t), "acme")
			must(t, err)
			if ok {
				t.Fatal("watermark before any run")
			}
			day := time.Date(2025, 3, 20, 0, 0, 0, 0, time.UTC)
			must(t, s.SetOrdersWatermark(ctx(t), "acme", day))
			before := stamps(t, raw)
			must(t, s.SetOrdersWatermark(ctx(t), "acme", day))
			if after := stamps(t, raw); !slices.Equal(before, after) {
				t.Fatalf("same watermark rewritten: %v -> %v", before, after)
			}
			got, ok, err := s.OrdersWatermark(ctx(t), "acme")
			must(t, err)
			if !ok || !got.Equal(day) {
				t.Fatalf("watermark = %v, %v", got, ok)
			}
		})
		t.Run("products are due once, then after the refresh", func(t *testing.T) {
			due, err := s.ProductsDue(ctx(t), "acme", at(1, 0))
			must(t, err)
			if len(due) != 2 || due[0].ProductID != "p0" || due[0].CollectionID != "c1" {
				t.Fatalf("due = %+v", due)
			}
			read := at(16, 0)
			rows := []store.ProductRow{
				{ProductID: "p0", CollectionID: "c1", Title: "Bottle", Brand: ptrS("Acme"), Status: "Active", CreationStatus: "Done",
					InStock: true, MinPrice: ptrF(24), MaxPrice: ptrF(26), CountryCode: "CA", Language: "fr-CA",
					Tags: []string{"drinkware", "eco"}, Raw: `{"id": "p0"}`},
				{ProductID: "p1", CollectionID: "c1", Title: "Hoodie", Status: "Draft", CreationStatus: "Pending", Raw: `{"id": "p1"}`},
			}
			n, err := s.SaveProducts(ctx(t), "acme", rows, read)
			must(t, err)
			if n != 2 {
				t.Fatalf("changed = %d", n)
			}
			due, err = s.ProductsDue(ctx(t), "acme", read.Add(-time.Hour))
			must(t, err)
			if len(due) != 0 {
				t.Fatalf("due right after a read: %+v", due)
			}
			due, err = s.ProductsDue(ctx(t), "acme", read.Add(time.Hour))
			must(t, err)
			if len(due) != 2 {
				t.Fatalf("due after the refresh: %+v", due)
			}
			t.Run("an unchanged product only moves checked_at", func(t *testing.T) {
				before := tableStamp(t, raw, "products", "updated_at")
				n, err := s.SaveProducts(ctx(t), "acme", rows, read.Add(2*time.Hour))
				must(t, err)
				if n != 0 {
					t.Fatalf("changed = %d", n)
				}
				if after := tableStamp(t, raw, "products", "updated_at"); after != before {
					t.Fatalf("updated_at moved: %s -> %s", before, after)
				}
				due, err := s.ProductsDue(ctx(t), "acme", read.Add(time.Hour))
				must(t, err)
				if len(due) != 0 {
					t.Fatalf("checked_at not moved: due %+v", due)
				}
			})
			t.Run("tags follow the product", func(t *testing.T) {
				rows[0].Tags = []string{"eco"}
				_, err := s.SaveProducts(ctx(t), "acme", rows, read.Add(3*time.Hour))
				must(t, err)
				var n int
				must(t, raw.QueryRowContext(ctx(t), "SELECT COUNT(*) FROM product_tags WHERE product_id = 'p0'").Scan(&n))
				if n != 1 {
					t.Fatalf("tags = %d", n)
				}
			})
		})
		t.Run("an unknown order is not found", func(t *testing.T) {
			_, ok, err := s.Order(ctx(t), "acme", "nope")
			must(t, err)
			if ok {
				t.Fatal("found")
			}
		})
	})
}
