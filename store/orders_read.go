package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

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
		return readOrderDetails(ctx, tx, tenant, orderID, &d)
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

// readOrderDetails reads an order's line items, status histories and
// shipments into d, within tx.
func readOrderDetails(ctx context.Context, tx *sqlx.Tx, tenant, orderID string, d *OrderDetail) error {
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
}
