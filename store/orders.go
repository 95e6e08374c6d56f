package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
)

// OrderRow is one order as the platform's orders list shows it.
type OrderRow struct {
	OrderID      string
	CollectionID string
	OrderNumber  string
	// ExternalID names the person who ordered; "" is written as NULL (the
	// platform named no person the store knows).
	ExternalID string
	PlacedAt   time.Time
	Lines      []LineItemRow
}

// LineItemRow is one line of an order as listed.
type LineItemRow struct {
	LineItemID   string
	ProductID    string
	VariantID    string
	Title        string
	ProductTitle string
	VariantTitle string
	Quantity     float64
	Price        float64
	RetailPrice  float64
	ImageURL     string
	// ImageAspectRatio is nil when the line has no image.
	ImageAspectRatio *float64
	// Personalizations is the personalization fields as JSON; "" is NULL.
	Personalizations string
	Sha              string
}

// IngestResult counts the rows an UpsertOrders call inserted or changed;
// rows that were already the same are not counted (nor written).
type IngestResult struct {
	Orders    int `json:"orders"`
	LineItems int `json:"lineItems"`
}

// changedUpsert renders an ON CONFLICT clause that updates set (and
// updated_at) only when one of them differs, so that an unchanged row is
// not written at all.
func changedUpsert(table string, key, set []string) string {
	var b strings.Builder
	b.WriteString("ON CONFLICT (" + strings.Join(key, ", ") + ") DO UPDATE SET ")
	for i, c := range set {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c + " = excluded." + c)
	}
	b.WriteString(", updated_at = excluded.updated_at WHERE ")
	for i, c := range set {
		if i > 0 {
			b.WriteString(" OR ")
		}
		b.WriteString(table + "." + c + " IS DISTINCT FROM excluded." + c)
	}
	return b.String()
}

// orderShape is the shape of orders as UpsertOrders writes them.
func orderShape() RowShape {
	return RowShape{
		Table: "orders",
		Cols: []string{"tenant", "order_id", "collection_id", "order_number", "external_id", "placed_at", "placed_day",
			"placed_month", "first_seen_at", "updated_at"},
		Key: []string{"tenant", "order_id"},
		Set: []string{"collection_id", "order_number", "external_id", "placed_at", "placed_day", "placed_month"},
	}
}

// lineItemShape is the shape of order_line_items as UpsertOrders writes them.
func lineItemShape() RowShape {
	return RowShape{
		Table: "order_line_items",
		Cols: []string{"tenant", "order_id", "line_item_id", "product_id", "variant_id", "title", "product_title",
			"variant_title", "quantity", "price", "retail_price", "image_url", "image_aspect_ratio",
			"personalizations", "sha", "first_seen_at", "updated_at"},
		Key: []string{"tenant", "order_id", "line_item_id"},
		Set: []string{"product_id", "variant_id", "title", "product_title", "variant_title", "quantity", "price",
			"retail_price", "image_url", "image_aspect_ratio", "personalizations", "sha"},
	}
}

// orderBatch is a set of listed orders flattened into the rows of the two
// tables, with the values of one row built on demand (in a reused slice:
// the bulk writers consume a row before asking for the next).
type orderBatch struct {
	tenant string
	now    time.Time
	orders []*OrderRow
	lines  []lineRef
	ov, lv []any
}

// lineRef is a line item with the id of its order.
type lineRef struct {
	order string
	line  *LineItemRow
}

func newOrderBatch(tenant string, now time.Time, orders []*OrderRow) *orderBatch {
	b := &orderBatch{tenant: tenant, now: now, orders: orders,
		ov: make([]any, len(orderShape().Cols)), lv: make([]any, len(lineItemShape().Cols))}
	for _, o := range orders {
		for j := range o.Lines {
			b.lines = append(b.lines, lineRef{o.OrderID, &o.Lines[j]})
		}
	}
	return b
}

// order returns the values of order i in the order of orderShape().Cols.
func (b *orderBatch) order(i int) []any {
	o, v := b.orders[i], b.ov
	placed := ts(o.PlacedAt)
	v[0], v[1], v[2], v[3], v[4] = b.tenant, o.OrderID, o.CollectionID, o.OrderNumber, nullStr(o.ExternalID)
	v[5], v[6], v[7] = placed, placed.Format(time.DateOnly), placed.Format("2006-01")
	v[8], v[9] = b.now, b.now
	return v
}

// line returns the values of line i in the order of lineItemShape().Cols.
func (b *orderBatch) line(i int) []any {
	r, v := b.lines[i], b.lv
	l := r.line
	v[0], v[1], v[2], v[3], v[4] = b.tenant, r.order, l.LineItemID, l.ProductID, l.VariantID
	v[5], v[6], v[7], v[8], v[9] = l.Title, l.ProductTitle, l.VariantTitle, l.Quantity, l.Price
	v[10], v[11], v[12], v[13], v[14] = l.RetailPrice, l.ImageURL, nullFloat(l.ImageAspectRatio), nullStr(l.Personalizations), l.Sha
	v[15], v[16] = b.now, b.now
	return v
}

// UpsertOrders writes orders and their line items as listed, in one
// transaction. Orders not stored yet, and their lines, are new by
// construction (a line is only ever written with its order): they are
// streamed straight into their tables (one COPY per table on PostgreSQL,
// multi-row INSERTs on SQLite), with no conflict handling. Orders already
// stored are compared set-wise with what is stored (on PostgreSQL through a
// temporary copy of the rows, on SQLite with multi-row upserts), and only
// the rows that differ are written, so listing the same orders again writes
// nothing. The polled columns (status, tracking) are never changed here.
//
// The tenant's run lock keeps another writer from adding the same orders
// between the read of the stored ids and the writes.
func (s *Store) UpsertOrders(ctx context.Context, tenant string, orders []OrderRow) (IngestResult, error) {
	var res IngestResult
	if err := checkOrders(orders); err != nil {
		return res, fmt.Errorf("upsert orders: %w", err)
	}
	if len(orders) == 0 {
		return res, nil
	}
	now := s.stamp()
	err := s.inTx(ctx, "upsert orders", func(tx *sqlx.Tx) error {
		if err := s.checkPeople(ctx, tx, tenant, orders); err != nil {
			return err
		}
		known, err := s.knownOrders(ctx, tx, tenant, orders)
		if err != nil {
			return err
		}
		var fresh, stored []*OrderRow
		for i := range orders {
			if known[orders[i].OrderID] {
				stored = append(stored, &orders[i])
			} else {
				fresh = append(fresh, &orders[i])
			}
		}
		ord, lin := orderShape(), lineItemShape()
		if len(fresh) > 0 {
			b := newOrderBatch(tenant, now, fresh)
			if err := s.db.BulkInsert(ctx, tx, ord.Table, ord.Cols, "", len(b.orders), b.order); err != nil {
				return err
			}
			if err := s.db.BulkInsert(ctx, tx, lin.Table, lin.Cols, "", len(b.lines), b.line); err != nil {
				return err
			}
			res.Orders += len(b.orders)
			res.LineItems += len(b.lines)
		}
		if len(stored) > 0 {
			b := newOrderBatch(tenant, now, stored)
			n, err := s.db.MergeRows(ctx, tx, ord, len(b.orders), b.order)
			if err != nil {
				return err
			}
			res.Orders += int(n)
			n, err = s.db.MergeRows(ctx, tx, lin, len(b.lines), b.line)
			if err != nil {
				return err
			}
			res.LineItems += int(n)
		}
		return nil
	})
	return res, err
}

// ErrUnknownPerson is returned (wrapped) by UpsertOrders when an order
// names a person the store does not hold for the tenant.
var ErrUnknownPerson = errors.New("person not in the store")

// checkPeople stands for the foreign key from orders to people: every
// person the orders name must be a stored person of the tenant. It is one
// query for the batch rather than a check per row; on PostgreSQL it locks
// the people it finds FOR KEY SHARE until the transaction ends, as a
// foreign key check would, so that none of them can be deleted meanwhile.
func (s *Store) checkPeople(ctx context.Context, tx *sqlx.Tx, tenant string, orders []OrderRow) error {
	named := map[string]bool{}
	var ids []string
	for _, o := range orders {
		if o.ExternalID != "" && !named[o.ExternalID] {
			named[o.ExternalID] = true
			ids = append(ids, o.ExternalID)
		}
	}
	lock := s.db.ForKeyShare()
	err := s.db.ForKeys(ids, func(cond string, args []any) error {
		return queryEach(ctx, tx, "SELECT external_id FROM people WHERE tenant = ? AND external_id "+cond+lock,
			append([]any{tenant}, args...), func(r *sql.Rows) error {
				var id string
				if err := r.Scan(&id); err != nil {
					return err
				}
				delete(named, id)
				return nil
			})
	})
	if err != nil {
		return fmt.Errorf("read people: %w", err)
	}
	for _, o := range orders { // the first order, in the caller's order, that names a missing person
		if named[o.ExternalID] {
			return fmt.Errorf("order %s: person %s: %w", o.OrderID, o.ExternalID, ErrUnknownPerson)
		}
	}
	return nil
}

// knownOrders returns the ids of orders already stored for the tenant.
func (s *Store) knownOrders(ctx context.Context, tx *sqlx.Tx, tenant string, orders []OrderRow) (map[string]bool, error) {
	ids := make([]string, len(orders))
	for i, o := range orders {
		ids[i] = o.OrderID
	}
	known := map[string]bool{}
	// A tenant's first backfill, the largest batch it ever writes, finds
	// no order stored: one probe spares it a lookup of every id.
	stored := 0
	err := queryEach(ctx, tx, "SELECT 1 FROM orders WHERE tenant = ? LIMIT 1", []any{tenant}, func(*sql.Rows) error {
		stored++
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read known orders: %w", err)
	}
	if stored == 0 {
		return known, nil
	}
	err = s.db.ForKeys(ids, func(cond string, args []any) error {
		return queryEach(ctx, tx, "SELECT order_id FROM orders WHERE tenant = ? AND order_id "+cond, append([]any{tenant}, args...),
			func(r *sql.Rows) error {
				var id string
				if err := r.Scan(&id); err != nil {
					return err
				}
				known[id] = true
				return nil
			})
	})
	if err != nil {
		return nil, fmt.Errorf("read known orders: %w", err)
	}
	return known, nil
}

func checkOrders(orders []OrderRow) error {
	seen := make(map[string]bool, len(orders))
	for _, o := range orders {
		if o.OrderID == "" || o.PlacedAt.IsZero() {
			return errors.New("order without id or creation time")
		}
		if seen[o.OrderID] {
			return fmt.Errorf("order %s listed twice", o.OrderID)
		}
		seen[o.OrderID] = true
		lines := make(map[string]bool, len(o.Lines))
		for _, l := range o.Lines {
			if l.LineItemID == "" {
				return fmt.Errorf("order %s: line item without id", o.OrderID)
			}
			if lines[l.LineItemID] {
				return fmt.Errorf("order %s: line item %s listed twice", o.OrderID, l.LineItemID)
			}
			lines[l.LineItemID] = true
		}
	}
	return nil
}

func nullFloat(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}
