package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"hrsync/model"
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

// OpenOrder is an order whose status is still polled.
type OpenOrder struct {
	OrderID      string
	CollectionID string
	PlacedAt     time.Time
}

// OpenOrders lists the tenant's orders that are neither final nor stopped,
// oldest first.
func (s *Store) OpenOrders(ctx context.Context, tenant string) ([]OpenOrder, error) {
	rows, err := s.r.QueryContext(ctx, s.r.Rebind(`SELECT order_id, collection_id, placed_at FROM orders
		WHERE tenant = ? AND NOT is_final AND NOT polling_stopped ORDER BY placed_at, order_id`), tenant)
	if err != nil {
		return nil, fmt.Errorf("open orders: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []OpenOrder
	for rows.Next() {
		var (
			o      OpenOrder
			placed dbTime
		)
		if err := rows.Scan(&o.OrderID, &o.CollectionID, &placed); err != nil {
			return nil, fmt.Errorf("open orders: %w", err)
		}
		o.PlacedAt = placed.Time
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("open orders: %w", err)
	}
	return out, nil
}

// StopPolling flags the named orders of the tenant as no longer polled and
// returns how many were newly flagged.
func (s *Store) StopPolling(ctx context.Context, tenant string, orderIDs []string, at time.Time) (int, error) {
	var n int64
	err := s.inTx(ctx, "stop polling", func(tx *sqlx.Tx) error {
		return s.db.ForKeys(orderIDs, func(cond string, args []any) error {
			r, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE orders SET polling_stopped = TRUE, polling_stopped_at = ?,
				updated_at = ? WHERE tenant = ? AND NOT polling_stopped AND NOT is_final AND order_id `+cond),
				append([]any{ts(at), ts(at), tenant}, args...)...)
			if err != nil {
				return fmt.Errorf("update orders: %w", err)
			}
			k, err := r.RowsAffected()
			n += k
			return err
		})
	})
	return int(n), err
}

// Shipment is one parcel of a line item.
type Shipment struct {
	TrackingNumber string `json:"trackingNumber"`
	TrackingURL    string `json:"trackingUrl"`
}

// LineObservation is a line item's status as one poll saw it.
type LineObservation struct {
	LineItemID     string
	Status         string
	TrackingURL    string
	TrackingNumber string
	Shipments      []Shipment
}

// OrderObservation is an order's status as one poll saw it.
type OrderObservation struct {
	OrderID string
	Status  string
	Lines   []LineObservation
}

// StatusResult counts what ApplyOrderStatuses changed.
type StatusResult struct {
	// OrdersChanged counts the orders whose status changed (one history row each).
	OrdersChanged int `json:"ordersChanged"`
	// LinesChanged counts the line items whose status changed (one history row each).
	LinesChanged int `json:"linesChanged"`
	// TrackingChanged counts the line items whose current tracking changed.
	TrackingChanged int `json:"trackingChanged"`
	// NewShipments counts the parcels seen for the first time.
	NewShipments int `json:"newShipments"`
	// BecameFinal counts the orders that became final.
	BecameFinal int `json:"becameFinal"`
	// UnknownLines counts the polled line items the orders list never showed
	// (they are skipped).
	UnknownLines int `json:"unknownLines"`
	// Written counts every row inserted or updated.
	Written int `json:"written"`
}

type storedLine struct {
	status, trackingURL, trackingNumber string
	hasStatus                           bool
}

type storedOrder struct {
	status    sql.NullString
	shipped   bool
	final     bool
	lines     map[string]*storedLine
	shipments map[[2]string]bool // line id, tracking number
}

// ApplyOrderStatuses records what one poll saw, observed at at, in one
// transaction: every change of an order's or a line item's status becomes
// a history row, new parcels are added to shipments, the current status and
// tracking are updated, and an order that is Shipped with no line item open
// becomes final. What did not change is not written.
func (s *Store) ApplyOrderStatuses(ctx context.Context, tenant string, obs []OrderObservation, at time.Time) (StatusResult, error) {
	var res StatusResult
	if len(obs) == 0 {
		return res, nil
	}
	at = ts(at)
	ids := make([]string, 0, len(obs))
	for _, o := range obs {
		ids = append(ids, o.OrderID)
	}
	err := s.inTx(ctx, "apply order statuses", func(tx *sqlx.Tx) error {
		cur, err := s.loadOrderState(ctx, tx, tenant, ids)
		if err != nil {
			return err
		}
		var (
			orderHist, lineHist, ships [][]any
			orderUpd, lineUpd          [][]any
		)
		for _, o := range obs {
			st, ok := cur[o.OrderID]
			if !ok {
				continue
			}
			for _, l := range o.Lines {
				sl, ok := st.lines[l.LineItemID]
				if !ok {
					res.UnknownLines++
					continue
				}
				statusChanged := !sl.hasStatus || sl.status != l.Status
				trackChanged := sl.trackingURL != l.TrackingURL || sl.trackingNumber != l.TrackingNumber
				if statusChanged {
					var prev any
					if sl.hasStatus {
						prev = sl.status
					}
					lineHist = append(lineHist, []any{tenant, o.OrderID, l.LineItemID, at, l.Status, prev})
					res.LinesChanged++
				} else if trackChanged {
					res.TrackingChanged++
				}
				if statusChanged || trackChanged {
					lineUpd = append(lineUpd, []any{l.Status, l.TrackingURL, l.TrackingNumber, statusChanged, at, at, tenant, o.OrderID, l.LineItemID})
					sl.status, sl.hasStatus, sl.trackingURL, sl.trackingNumber = l.Status, true, l.TrackingURL, l.TrackingNumber
				}
				seen := map[string]bool{}
				for _, p := range l.Shipments {
					k := [2]string{l.LineItemID, p.TrackingNumber}
					if st.shipments[k] || seen[p.TrackingNumber] {
						continue
					}
					seen[p.TrackingNumber] = true
					st.shipments[k] = true
					ships = append(ships, []any{tenant, o.OrderID, l.LineItemID, p.TrackingNumber, p.TrackingURL, at})
				}
			}
			statuses := make([]string, 0, len(st.lines))
			for _, sl := range st.lines {
				statuses = append(statuses, sl.status)
			}
			final := model.OrderFinal(o.Status, statuses)
			statusChanged := !st.status.Valid || st.status.String != o.Status
			if statusChanged {
				var prev any
				if st.status.Valid {
					prev = st.status.String
				}
				orderHist = append(orderHist, []any{tenant, o.OrderID, at, o.Status, prev})
				res.OrdersChanged++
			}
			if final && !st.final {
				res.BecameFinal++
			}
			if statusChanged || final != st.final {
				shipped := !st.shipped && o.Status == model.OrderStatusShipped
				orderUpd = append(orderUpd, []any{o.Status, statusChanged, at, shipped, at, final, at, tenant, o.OrderID})
			}
		}
		if err := s.bulkRows(ctx, tx, "order_status_history",
			[]string{"tenant", "order_id", "observed_at", "status", "previous_status"}, "", orderHist); err != nil {
			return err
		}
		if err := s.execEach(ctx, tx, `UPDATE orders SET status = ?,
			status_observed_at = CASE WHEN ? THEN ? ELSE status_observed_at END,
			shipped_at = CASE WHEN ? THEN ? ELSE shipped_at END,
			is_final = ?, updated_at = ? WHERE tenant = ? AND order_id = ?`, orderUpd); err != nil {
			return fmt.Errorf("update orders: %w", err)
		}
		if err := s.execEach(ctx, tx, `UPDATE order_line_items SET status = ?, tracking_url = ?, tracking_number = ?,
			status_observed_at = CASE WHEN ? THEN ? ELSE status_observed_at END, updated_at = ?
			WHERE tenant = ? AND order_id = ? AND line_item_id = ?`, lineUpd); err != nil {
			return fmt.Errorf("update line items: %w", err)
		}
		if err := s.bulkRows(ctx, tx, "line_item_status_history",
			[]string{"tenant", "order_id", "line_item_id", "observed_at", "status", "previous_status"}, "", lineHist); err != nil {
			return err
		}
		if err := s.bulkRows(ctx, tx, "shipments",
			[]string{"tenant", "order_id", "line_item_id", "tracking_number", "tracking_url", "first_seen_at"},
			"ON CONFLICT (tenant, order_id, line_item_id, tracking_number) DO NOTHING", ships); err != nil {
			return err
		}
		res.NewShipments = len(ships)
		res.Written = len(orderHist) + len(lineHist) + len(ships) + len(orderUpd) + len(lineUpd)
		return nil
	})
	if err != nil {
		return StatusResult{}, err
	}
	return res, nil
}

// bulkRows writes prepared rows with bulkInsert.
func (s *Store) bulkRows(ctx context.Context, tx *sqlx.Tx, table string, cols []string, conflict string, rows [][]any) error {
	return s.db.BulkInsert(ctx, tx, table, cols, conflict, len(rows), func(i int) []any { return rows[i] })
}

// execEach runs one prepared statement once per argument list.
func (s *Store) execEach(ctx context.Context, tx *sqlx.Tx, query string, argLists [][]any) error {
	if len(argLists) == 0 {
		return nil
	}
	st, err := tx.PreparexContext(ctx, tx.Rebind(query))
	if err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	defer func() { _ = st.Close() }()
	for _, args := range argLists {
		if _, err := st.ExecContext(ctx, args...); err != nil {
			return err
		}
	}
	return nil
}

// loadOrderState reads the current status, line items and shipments of the
// named orders.
func (s *Store) loadOrderState(ctx context.Context, tx *sqlx.Tx, tenant string, ids []string) (map[string]*storedOrder, error) {
	cur := make(map[string]*storedOrder, len(ids))
	err := s.db.ForKeys(ids, func(cond string, args []any) error {
		all := append([]any{tenant}, args...)
		if err := queryEach(ctx, tx, `SELECT order_id, status, shipped_at IS NOT NULL, is_final FROM orders
			WHERE tenant = ? AND order_id `+cond, all, func(r *sql.Rows) error {
			var (
				id string
				o  = &storedOrder{lines: map[string]*storedLine{}, shipments: map[[2]string]bool{}}
			)
			if err := r.Scan(&id, &o.status, &o.shipped, &o.final); err != nil {
				return err
			}
			cur[id] = o
			return nil
		}); err != nil {
			return fmt.Errorf("read orders: %w", err)
		}
		if err := queryEach(ctx, tx, `SELECT order_id, line_item_id, status, tracking_url, tracking_number
			FROM order_line_items WHERE tenant = ? AND order_id `+cond, all, func(r *sql.Rows) error {
			var (
				oid, lid string
				status   sql.NullString
				l        storedLine
			)
			if err := r.Scan(&oid, &lid, &status, &l.trackingURL, &l.trackingNumber); err != nil {
				return err
			}
			l.status, l.hasStatus = status.String, status.Valid
			if o := cur[oid]; o != nil {
				o.lines[lid] = &l
			}
			return nil
		}); err != nil {
			return fmt.Errorf("read line items: %w", err)
		}
		if err := queryEach(ctx, tx, `SELECT order_id, line_item_id, tracking_number FROM shipments
			WHERE tenant = ? AND order_id `+cond, all, func(r *sql.Rows) error {
			var oid, lid, num string
			if err := r.Scan(&oid, &lid, &num); err != nil {
				return err
			}
			if o := cur[oid]; o != nil {
				o.shipments[[2]string{lid, num}] = true
			}
			return nil
		}); err != nil {
			return fmt.Errorf("read shipments: %w", err)
		}
		return nil
	})
	return cur, err
}

// queryEach runs a query ("?" placeholders) and calls fn for each row.
func queryEach(ctx context.Context, q sqlx.QueryerContext, query string, args []any, fn func(*sql.Rows) error) error {
	rows, err := q.QueryContext(ctx, sqlx.Rebind(sqlx.BindType(driverName(q)), query), args...)
	if err != nil {
		return err
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// driverName is the sqlx driver name behind q.
func driverName(q sqlx.QueryerContext) string {
	switch x := q.(type) {
	case *sqlx.Tx:
		return x.DriverName()
	case *sqlx.DB:
		return x.DriverName()
	}
	return ""
}

// OrdersWatermark returns the last day the tenant's orders were listed up
// to; ok is false before the first successful run.
func (s *Store) OrdersWatermark(ctx context.Context, tenant string) (day time.Time, ok bool, err error) {
	var d dbTime
	err = s.r.QueryRowxContext(ctx, s.r.Rebind("SELECT last_day FROM orders_watermarks WHERE tenant = ?"), tenant).Scan(&d)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("read orders watermark: %w", err)
	}
	return d.date(), true, nil
}

// SetOrdersWatermark records day (a calendar day) as the tenant's
// watermark; the same day again writes nothing.
func (s *Store) SetOrdersWatermark(ctx context.Context, tenant string, day time.Time) error {
	return s.inTx(ctx, "set orders watermark", func(tx *sqlx.Tx) error {
		_, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO orders_watermarks (tenant, last_day, updated_at) VALUES (?, ?, ?)
			ON CONFLICT (tenant) DO UPDATE SET last_day = excluded.last_day, updated_at = excluded.updated_at
			WHERE orders_watermarks.last_day <> excluded.last_day`), tenant, day.UTC().Format(time.DateOnly), s.stamp())
		return err
	})
}

// ProductRef names a product to look up.
type ProductRef struct {
	CollectionID string
	ProductID    string
}

// ProductsDue lists the products seen in the tenant's line items that have
// never been read, or were last read before staleBefore.
func (s *Store) ProductsDue(ctx context.Context, tenant string, staleBefore time.Time) ([]ProductRef, error) {
	var out []ProductRef
	err := queryEach(ctx, s.r, `SELECT li.product_id, MIN(o.collection_id) FROM order_line_items li
		JOIN orders o ON o.tenant = li.tenant AND o.order_id = li.order_id
		LEFT JOIN products p ON p.tenant = li.tenant AND p.product_id = li.product_id
		WHERE li.tenant = ? AND li.product_id <> '' AND (p.product_id IS NULL OR p.checked_at < ?)
		GROUP BY li.product_id ORDER BY li.product_id`, []any{tenant, ts(staleBefore)}, func(r *sql.Rows) error {
		var p ProductRef
		if err := r.Scan(&p.ProductID, &p.CollectionID); err != nil {
			return err
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("products due: %w", err)
	}
	return out, nil
}

// ProductRow is a product as read from the platform.
type ProductRow struct {
	ProductID      string
	CollectionID   string
	Title          string
	Brand          *string
	Model          *string
	Status         string
	CreationStatus string
	InStock        bool
	Discontinued   bool
	MinPrice       *float64
	MaxPrice       *float64
	CountryCode    string
	Language       string
	Tags           []string
	// Raw is the whole product document (JSON).
	Raw string
}

// productCols are the columns SaveProducts writes.
func productCols() []string {
	return []string{
		"tenant", "product_id", "collection_id", "title", "brand", "model", "status", "creation_status",
		"is_in_stock", "is_discontinued", "min_price", "max_price", "country_code", "language", "raw",
		"checked_at", "updated_at",
	}
}

// productUpsert is SaveProducts' ON CONFLICT clause: content changes move
// updated_at and checked_at together.
func productUpsert() string {
	return strings.Replace(changedUpsert("products", []string{"tenant", "product_id"},
		[]string{"collection_id", "title", "brand", "model", "status", "creation_status", "is_in_stock",
			"is_discontinued", "min_price", "max_price", "country_code", "language", "raw"}),
		", updated_at = excluded.updated_at", ", updated_at = excluded.updated_at, checked_at = excluded.checked_at", 1)
}

// SaveProducts records products read at at, in one transaction: changed
// content (and tags) is written with a new updated_at; an unchanged product
// only gets its checked_at moved. It returns how many products changed.
func (s *Store) SaveProducts(ctx context.Context, tenant string, rows []ProductRow, at time.Time) (int, error) {
	at = ts(at)
	var changed int64
	err := s.inTx(ctx, "save products", func(tx *sqlx.Tx) error {
		cols := productCols()
		vals := make([]any, len(cols))
		n, err := s.db.UpsertCounted(ctx, tx, "products", cols, productUpsert(), len(rows), func(i int) []any {
			p := rows[i]
			vals[0], vals[1], vals[2], vals[3], vals[4] = tenant, p.ProductID, p.CollectionID, p.Title, ptrVal(p.Brand)
			vals[5], vals[6], vals[7], vals[8], vals[9] = ptrVal(p.Model), p.Status, p.CreationStatus, p.InStock, p.Discontinued
			vals[10], vals[11], vals[12], vals[13], vals[14] = nullFloat(p.MinPrice), nullFloat(p.MaxPrice), p.CountryCode, p.Language, p.Raw
			vals[15], vals[16] = at, at
			return vals
		})
		if err != nil {
			return err
		}
		changed = n
		ids := make([]string, 0, len(rows))
		for _, p := range rows {
			ids = append(ids, p.ProductID)
		}
		if err := s.db.ForKeys(ids, func(cond string, args []any) error {
			_, err := tx.ExecContext(ctx, tx.Rebind("UPDATE products SET checked_at = ? WHERE tenant = ? AND checked_at <> ? AND product_id "+cond),
				append([]any{at, tenant, at}, args...)...)
			return err
		}); err != nil {
			return fmt.Errorf("update checked_at: %w", err)
		}
		return s.syncTags(ctx, tx, tenant, rows)
	})
	return int(changed), err
}

func ptrVal(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

// syncTags rewrites the tags of the products whose tag set changed.
func (s *Store) syncTags(ctx context.Context, tx *sqlx.Tx, tenant string, rows []ProductRow) error {
	ids := make([]string, 0, len(rows))
	for _, p := range rows {
		ids = append(ids, p.ProductID)
	}
	have := map[string][]string{}
	if err := s.db.ForKeys(ids, func(cond string, args []any) error {
		return queryEach(ctx, tx, "SELECT product_id, tag FROM product_tags WHERE tenant = ? AND product_id "+cond+" ORDER BY product_id, tag",
			append([]any{tenant}, args...), func(r *sql.Rows) error {
				var id, tag string
				if err := r.Scan(&id, &tag); err != nil {
					return err
				}
				have[id] = append(have[id], tag)
				return nil
			})
	}); err != nil {
		return fmt.Errorf("read tags: %w", err)
	}
	var (
		stale []string
		add   [][]any
	)
	for _, p := range rows {
		want := slices.Compact(slices.Sorted(slices.Values(p.Tags)))
		want = slices.DeleteFunc(want, func(t string) bool { return t == "" })
		if slices.Equal(want, have[p.ProductID]) {
			continue
		}
		stale = append(stale, p.ProductID)
		for _, t := range want {
			add = append(add, []any{tenant, p.ProductID, t})
		}
	}
	if err := s.db.ForKeys(stale, func(cond string, args []any) error {
		_, err := tx.ExecContext(ctx, tx.Rebind("DELETE FROM product_tags WHERE tenant = ? AND product_id "+cond), append([]any{tenant}, args...)...)
		return err
	}); err != nil {
		return fmt.Errorf("delete tags: %w", err)
	}
	return s.bulkRows(ctx, tx, "product_tags", []string{"tenant", "product_id", "tag"}, "", add)
}

// OrderDetail is what the reporting tables hold for one order.
type OrderDetail struct {
	OrderID         string                `json:"orderId"`
	CollectionID    string                `json:"collectionId"`
	OrderNumber     string                `json:"orderNumber"`
	ExternalID      string                `json:"externalId"`
	PlacedAt        time.Time             `json:"placedAt"`
	Status          string                `json:"status"`
	ShippedAt       *time.Time            `json:"shippedAt,omitempty"`
	Final           bool                  `json:"final"`
	PollingStopped  bool                  `json:"pollingStopped"`
	FirstSeenAt     time.Time             `json:"firstSeenAt"`
	UpdatedAt       time.Time             `json:"updatedAt"`
	Lines           []LineDetail          `json:"lines"`
	History         []StatusChange        `json:"history"`
	LineHistory     []StatusChange        `json:"lineHistory"`
	ShipmentsByLine map[string][]Shipment `json:"shipments"`
}

// LineDetail is one line item of an OrderDetail.
type LineDetail struct {
	LineItemID     string  `json:"lineItemId"`
	ProductID      string  `json:"productId"`
	Title          string  `json:"title"`
	Quantity       float64 `json:"quantity"`
	Price          float64 `json:"price"`
	Status         string  `json:"status"`
	TrackingNumber string  `json:"trackingNumber"`
	TrackingURL    string  `json:"trackingUrl"`
}

// StatusChange is one row of a status history.
type StatusChange struct {
	LineItemID string    `json:"lineItemId,omitempty"`
	ObservedAt time.Time `json:"observedAt"`
	Status     string    `json:"status"`
	Previous   string    `json:"previous,omitempty"`
}

// Order reads what the tables hold for one of the tenant's orders, in one
// read transaction; ok is false when there is no such order.
func (s *Store) Order(ctx context.Context, tenant, orderID string) (d OrderDetail, ok bool, err error) {
	err = s.inReadTx(ctx, "read order", func(tx *sqlx.Tx) error {
		var (
			ext, status                 sql.NullString
			placed, shipped, first, upd dbTime
		)
		row := tx.QueryRowxContext(ctx, tx.Rebind(`SELECT order_id, collection_id, order_number, external_id, placed_at,
			status, shipped_at, is_final, polling_stopped, first_seen_at, updated_at FROM orders WHERE tenant = ? AND order_id = ?`), tenant, orderID)
		err := row.Scan(&d.OrderID, &d.CollectionID, &d.OrderNumber, &ext, &placed, &status, &shipped, &d.Final,
			&d.PollingStopped, &first, &upd)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		ok = true
		d.ExternalID, d.Status, d.PlacedAt, d.FirstSeenAt, d.UpdatedAt = ext.String, status.String, placed.Time, first.Time, upd.Time
		if !shipped.IsZero() {
			t := shipped.Time
			d.ShippedAt = &t
		}
		args := []any{tenant, orderID}
		if err := queryEach(ctx, tx, `SELECT line_item_id, product_id, title, quantity, price, COALESCE(status, ''),
			tracking_number, tracking_url FROM order_line_items WHERE tenant = ? AND order_id = ? ORDER BY line_item_id`, args,
			func(r *sql.Rows) error {
				var l LineDetail
				if err := r.Scan(&l.LineItemID, &l.ProductID, &l.Title, &l.Quantity, &l.Price, &l.Status, &l.TrackingNumber, &l.TrackingURL); err != nil {
					return err
				}
				d.Lines = append(d.Lines, l)
				return nil
			}); err != nil {
			return fmt.Errorf("read line items: %w", err)
		}
		if err := queryEach(ctx, tx, `SELECT observed_at, status, COALESCE(previous_status, '') FROM order_status_history
			WHERE tenant = ? AND order_id = ? ORDER BY observed_at`, args, func(r *sql.Rows) error {
			var (
				c  StatusChange
				at dbTime
			)
			if err := r.Scan(&at, &c.Status, &c.Previous); err != nil {
				return err
			}
			c.ObservedAt = at.Time
			d.History = append(d.History, c)
			return nil
		}); err != nil {
			return fmt.Errorf("read history: %w", err)
		}
		if err := queryEach(ctx, tx, `SELECT line_item_id, observed_at, status, COALESCE(previous_status, '')
			FROM line_item_status_history WHERE tenant = ? AND order_id = ? ORDER BY observed_at, line_item_id`, args, func(r *sql.Rows) error {
			var (
				c  StatusChange
				at dbTime
			)
			if err := r.Scan(&c.LineItemID, &at, &c.Status, &c.Previous); err != nil {
				return err
			}
			c.ObservedAt = at.Time
			d.LineHistory = append(d.LineHistory, c)
			return nil
		}); err != nil {
			return fmt.Errorf("read line history: %w", err)
		}
		d.ShipmentsByLine = map[string][]Shipment{}
		return queryEach(ctx, tx, `SELECT line_item_id, tracking_number, tracking_url FROM shipments
			WHERE tenant = ? AND order_id = ? ORDER BY line_item_id, first_seen_at, tracking_number`, args, func(r *sql.Rows) error {
			var (
				lid string
				p   Shipment
			)
			if err := r.Scan(&lid, &p.TrackingNumber, &p.TrackingURL); err != nil {
				return err
			}
			d.ShipmentsByLine[lid] = append(d.ShipmentsByLine[lid], p)
			return nil
		})
	})
	if err != nil || !ok {
		return OrderDetail{}, false, err
	}
	return d, true, nil
}

// OrdersByStatus counts the tenant's orders by their last polled status
// ("" for orders not polled yet).
func (s *Store) OrdersByStatus(ctx context.Context, tenant string) (map[string]int, error) {
	out := map[string]int{}
	err := queryEach(ctx, s.r, "SELECT COALESCE(status, ''), COUNT(*) FROM orders WHERE tenant = ? GROUP BY COALESCE(status, '')",
		[]any{tenant}, func(r *sql.Rows) error {
			var (
				st string
				n  int
			)
			if err := r.Scan(&st, &n); err != nil {
				return err
			}
			out[st] = n
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("count orders by status: %w", err)
	}
	return out, nil
}
