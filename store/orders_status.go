package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"hrsync/model"
)

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
	if len(obs) == 0 {
		return StatusResult{}, nil
	}
	ids := make([]string, 0, len(obs))
	for _, o := range obs {
		ids = append(ids, o.OrderID)
	}
	var res StatusResult
	err := s.inTx(ctx, "apply order statuses", func(tx *sqlx.Tx) error {
		cur, err := s.loadOrderState(ctx, tx, tenant, ids)
		if err != nil {
			return err
		}
		d := statusDiff{tenant: tenant, at: ts(at)}
		for _, o := range obs {
			if st, ok := cur[o.OrderID]; ok {
				d.observe(st, o)
			}
		}
		if err := s.writeStatusDiff(ctx, tx, &d); err != nil {
			return err
		}
		res = d.res
		return nil
	})
	if err != nil {
		return StatusResult{}, err
	}
	return res, nil
}

// statusDiff is what one poll changes: the rows to write, and their counts.
type statusDiff struct {
	tenant                     string
	at                         time.Time
	orderHist, lineHist, ships [][]any
	orderUpd, lineUpd          [][]any
	res                        StatusResult
}

// observe compares one order as polled with its stored state, and queues
// the changes of its lines, its shipments and itself.
func (d *statusDiff) observe(st *storedOrder, o OrderObservation) {
	for _, l := range o.Lines {
		sl, ok := st.lines[l.LineItemID]
		if !ok {
			d.res.UnknownLines++
			continue
		}
		d.line(o.OrderID, sl, l)
		d.shipments(st, o.OrderID, l)
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
		d.orderHist = append(d.orderHist, []any{d.tenant, o.OrderID, d.at, o.Status, prev})
		d.res.OrdersChanged++
	}
	if final && !st.final {
		d.res.BecameFinal++
	}
	if statusChanged || final != st.final {
		shipped := !st.shipped && o.Status == model.OrderStatusShipped
		d.orderUpd = append(d.orderUpd, []any{o.Status, statusChanged, d.at, shipped, d.at, final, d.at, d.tenant, o.OrderID})
	}
}

// line queues the changes of one polled line item, and updates its stored
// state so that the order's finality sees it.
func (d *statusDiff) line(orderID string, sl *storedLine, l LineObservation) {
	statusChanged := !sl.hasStatus || sl.status != l.Status
	trackChanged := sl.trackingURL != l.TrackingURL || sl.trackingNumber != l.TrackingNumber
	if statusChanged {
		var prev any
		if sl.hasStatus {
			prev = sl.status
		}
		d.lineHist = append(d.lineHist, []any{d.tenant, orderID, l.LineItemID, d.at, l.Status, prev})
		d.res.LinesChanged++
	} else if trackChanged {
		d.res.TrackingChanged++
	}
	if statusChanged || trackChanged {
		d.lineUpd = append(d.lineUpd, []any{l.Status, l.TrackingURL, l.TrackingNumber, statusChanged, d.at, d.at, d.tenant, orderID, l.LineItemID})
		sl.status, sl.hasStatus, sl.trackingURL, sl.trackingNumber = l.Status, true, l.TrackingURL, l.TrackingNumber
	}
}

// shipments queues the parcels of a polled line item not stored yet.
func (d *statusDiff) shipments(st *storedOrder, orderID string, l LineObservation) {
	seen := map[string]bool{}
	for _, p := range l.Shipments {
		k := [2]string{l.LineItemID, p.TrackingNumber}
		if st.shipments[k] || seen[p.TrackingNumber] {
			continue
		}
		seen[p.TrackingNumber] = true
		st.shipments[k] = true
		d.ships = append(d.ships, []any{d.tenant, orderID, l.LineItemID, p.TrackingNumber, p.TrackingURL, d.at})
	}
}

// writeStatusDiff writes a poll's changes within tx and counts them.
func (s *Store) writeStatusDiff(ctx context.Context, tx *sqlx.Tx, d *statusDiff) error {
	if err := s.bulkRows(ctx, tx, "order_status_history",
		[]string{"tenant", "order_id", "observed_at", "status", "previous_status"}, "", d.orderHist); err != nil {
		return err
	}
	if err := s.execEach(ctx, tx, `UPDATE orders SET status = ?,
		status_observed_at = CASE WHEN ? THEN ? ELSE status_observed_at END,
		shipped_at = CASE WHEN ? THEN ? ELSE shipped_at END,
		is_final = ?, updated_at = ? WHERE tenant = ? AND order_id = ?`, d.orderUpd); err != nil {
		return fmt.Errorf("update orders: %w", err)
	}
	if err := s.execEach(ctx, tx, `UPDATE order_line_items SET status = ?, tracking_url = ?, tracking_number = ?,
		status_observed_at = CASE WHEN ? THEN ? ELSE status_observed_at END, updated_at = ?
		WHERE tenant = ? AND order_id = ? AND line_item_id = ?`, d.lineUpd); err != nil {
		return fmt.Errorf("update line items: %w", err)
	}
	if err := s.bulkRows(ctx, tx, "line_item_status_history",
		[]string{"tenant", "order_id", "line_item_id", "observed_at", "status", "previous_status"}, "", d.lineHist); err != nil {
		return err
	}
	if err := s.bulkRows(ctx, tx, "shipments",
		[]string{"tenant", "order_id", "line_item_id", "tracking_number", "tracking_url", "first_seen_at"},
		"ON CONFLICT (tenant, order_id, line_item_id, tracking_number) DO NOTHING", d.ships); err != nil {
		return err
	}
	d.res.NewShipments = len(d.ships)
	d.res.Written = len(d.orderHist) + len(d.lineHist) + len(d.ships) + len(d.orderUpd) + len(d.lineUpd)
	return nil
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
