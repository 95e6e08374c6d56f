package drivertest

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"hrsync/store"
)

// TestOrdersIngestSplit checks UpsertOrders' two paths (new orders copied
// straight in, stored ones merged set-wise) in one batch, and the check
// that stands for the foreign key from orders to people.
func testOrdersIngestSplit(t *testing.T, d Backend) {
	eachBackend(t, d, func(t *testing.T, b backend) {
		s := b.open(t)
		raw := b.raw(t)
		must(t, s.SavePeople(ctx(t), "acme", []store.PersonRow{person("e1", 1), person("e2", 2)}))
		first := []store.OrderRow{testOrder(1, "e1", 3, 2), testOrder(2, "e2", 4, 1)}
		_, err := s.UpsertOrders(ctx(t), "acme", first)
		must(t, err)
		var seen1 string
		must(t, raw.QueryRowContext(ctx(t), "SELECT CAST(first_seen_at AS TEXT) FROM orders WHERE order_id = 'o0001'").Scan(&seen1))

		mixed := []store.OrderRow{testOrder(1, "e1", 3, 3), testOrder(2, "e2", 4, 1), testOrder(3, "e1", 5, 3)}
		mixed[0].Lines[0].Title = "Renamed"
		t.Run("new, changed and unchanged rows in one batch", func(t *testing.T) {
			res, err := s.UpsertOrders(ctx(t), "acme", mixed)
			must(t, err)
			// o0003 and its 3 lines are new; o0001 gains line l2 and its l0 changed; o0002 is the same.
			if res.Orders != 1 || res.LineItems != 5 {
				t.Fatalf("written = %+v, want 1 order and 5 lines", res)
			}
			d, ok, err := s.Order(ctx(t), "acme", "o0001")
			must(t, err)
			if !ok || len(d.Lines) != 3 || d.Lines[0].Title != "Renamed" {
				t.Fatalf("order o0001 = %+v", d)
			}
			var seen string
			must(t, raw.QueryRowContext(ctx(t), "SELECT CAST(first_seen_at AS TEXT) FROM orders WHERE order_id = 'o0001'").Scan(&seen))
			if seen != seen1 {
				t.Fatalf("first_seen_at moved from %s to %s", seen1, seen)
			}
		})
		t.Run("the same batch again writes nothing", func(t *testing.T) {
			before := stamps(t, raw)
			res, err := s.UpsertOrders(ctx(t), "acme", mixed)
			must(t, err)
			if res.Orders != 0 || res.LineItems != 0 {
				t.Fatalf("written = %+v on an unchanged list", res)
			}
			if after := stamps(t, raw); !slices.Equal(before, after) {
				t.Fatalf("tables changed: %v -> %v", before, after)
			}
		})
		t.Run("a changed order column is written alone", func(t *testing.T) {
			changed := slices.Clone(mixed)
			changed[1] = testOrder(2, "e1", 4, 1)
			res, err := s.UpsertOrders(ctx(t), "acme", changed)
			must(t, err)
			if res.Orders != 1 || res.LineItems != 0 {
				t.Fatalf("written = %+v, want one order", res)
			}
			d, _, err := s.Order(ctx(t), "acme", "o0002")
			must(t, err)
			if d.ExternalID != "e1" {
				t.Fatalf("o0002 person = %q, want e1", d.ExternalID)
			}
		})
		t.Run("an order of a person not stored is refused and nothing is written", func(t *testing.T) {
			before := stamps(t, raw)
			batch := []store.OrderRow{testOrder(4, "e1", 6, 1), testOrder(5, "ghost", 6, 1)}
			_, err := s.UpsertOrders(ctx(t), "acme", batch)
			if !errors.Is(err, store.ErrUnknownPerson) {
				t.Fatalf("error = %v, want ErrUnknownPerson", err)
			}
			if !strings.Contains(err.Error(), "o0005") || !strings.Contains(err.Error(), "ghost") {
				t.Fatalf("error %q does not name the order and the person", err)
			}
			if after := stamps(t, raw); !slices.Equal(before, after) {
				t.Fatalf("tables changed: %v -> %v", before, after)
			}
		})
		t.Run("a person of another tenant is not a person of this one", func(t *testing.T) {
			must(t, s.SavePeople(ctx(t), "other", []store.PersonRow{person("x1", 3)}))
			_, err := s.UpsertOrders(ctx(t), "acme", []store.OrderRow{testOrder(6, "x1", 6, 1)})
			if !errors.Is(err, store.ErrUnknownPerson) {
				t.Fatalf("error = %v, want ErrUnknownPerson", err)
			}
		})
		t.Run("every line item has its order and every order its person", func(t *testing.T) {
			var lines, orders int
			must(t, raw.QueryRowContext(ctx(t), `SELECT COUNT(*) FROM order_line_items li
				WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.tenant = li.tenant AND o.order_id = li.order_id)`).Scan(&lines))
			must(t, raw.QueryRowContext(ctx(t), `SELECT COUNT(*) FROM orders o WHERE o.external_id IS NOT NULL
				AND NOT EXISTS (SELECT 1 FROM people p WHERE p.tenant = o.tenant AND p.external_id = o.external_id)`).Scan(&orders))
			if lines != 0 || orders != 0 {
				t.Fatalf("%d line items without their order, %d orders without their person", lines, orders)
			}
		})
	})
}
