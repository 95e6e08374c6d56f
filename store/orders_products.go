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
)

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
