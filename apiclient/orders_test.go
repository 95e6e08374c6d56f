package apiclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"hrsync/api"
)

func TestChunk(t *testing.T) {
	tests := []struct {
		name string
		ids  []string
		size int
		want string
	}{
		{"none is one unfiltered request", nil, 2, "[[]]"},
		{"fewer than the size", []string{"a"}, 2, "[[a]]"},
		{"exact multiple", []string{"a", "b", "c", "d"}, 2, "[[a b] [c d]]"},
		{"remainder", []string{"a", "b", "c"}, 2, "[[a b] [c]]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fmt.Sprint(chunk(tt.ids, tt.size)); got != tt.want {
				t.Errorf("chunk = %s, want %s", got, tt.want)
			}
		})
	}
	t.Run("chunks do not share capacity", func(t *testing.T) {
		ids := []string{"a", "b", "c"}
		parts := chunk(ids, 2)
		_ = append(parts[0], "x")
		if ids[2] != "c" {
			t.Error("appending to a chunk overwrote the next id")
		}
	})
}

func TestUTCDay(t *testing.T) {
	tests := []struct {
		name string
		in   time.Time
		want string
	}{
		{"UTC midnight", time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), "2024-02-29"},
		{"UTC last second", time.Date(2024, 2, 29, 23, 59, 59, 0, time.UTC), "2024-02-29"},
		{"late evening west of UTC keeps its own date", time.Date(2024, 2, 29, 22, 0, 0, 0, time.FixedZone("W", -5*3600)), "2024-02-29"},
		{"early morning east of UTC keeps its own date", time.Date(2024, 3, 1, 1, 0, 0, 0, time.FixedZone("E", 9*3600)), "2024-03-01"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := utcDay(tt.in)
			if got.Format(time.DateOnly) != tt.want || got.Location() != time.UTC || !got.Equal(got.Truncate(day)) {
				t.Errorf("utcDay = %s", got)
			}
		})
	}
}

// ordersHandler answers orders/get from fixed rows, ignoring the filter.
func ordersHandler(t *testing.T, rows []api.Order, count func(q api.OrdersQuery) *float64, seen *[]api.OrdersQuery) func(http.ResponseWriter, *http.Request, int) {
	return func(w http.ResponseWriter, r *http.Request, _ int) {
		var q api.OrdersQuery
		b, err := io.ReadAll(r.Body)
		if err == nil {
			err = json.Unmarshal(b, &q)
		}
		if err != nil {
			t.Errorf("decode query: %v", err)
		}
		*seen = append(*seen, q)
		out, _ := json.Marshal(api.OrdersPage{Data: &rows, Count: count(q)})
		writeJSON(w, http.StatusOK, string(out))
	}
}

func order(id string, at time.Time) api.Order { return api.Order{Id: &id, CreatedAt: &at} }

func TestListOrdersMerging(t *testing.T) {
	ctx := context.Background()
	d := time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)
	rows := []api.Order{order("o-2", d.Add(2*time.Hour)), order("o-1", d.Add(time.Hour)), {}, order("o-3", d.Add(time.Hour))}

	t.Run("duplicates across user chunks are dropped and the rest sorted", func(t *testing.T) {
		var seen []api.OrdersQuery
		srv, _ := serve(t, ordersHandler(t, rows, func(api.OrdersQuery) *float64 { n := float64(len(rows)); return &n }, &seen))
		c, _ := newTestClient(t, srv.URL, func(c *Config) { c.OrdersUserChunk = 2 })
		got, err := c.ListOrders(ctx, collUUID, companyID, []string{"u1", "u2", "u3", "u4", "u5"}, d, d.AddDate(0, 0, 2))
		if err != nil {
			t.Fatalf("ListOrders: %v", err)
		}
		var ids []string
		for _, o := range got {
			if o.Id == nil {
				ids = append(ids, "<none>")
				continue
			}
			ids = append(ids, *o.Id)
		}
		// Three chunks each return the same rows; the id-less order cannot be
		// matched, so each copy is kept.
		want := []string{"<none>", "<none>", "<none>", "o-1", "o-3", "o-2"}
		if !slices.Equal(ids, want) {
			t.Errorf("ids = %v, want %v", ids, want)
		}
		if len(seen) != 3 {
			t.Fatalf("%d requests, want 3", len(seen))
		}
		for i, q := range seen {
			if len(*q.Filter.UserIds) > 2 || *q.CompanyId != companyID {
				t.Errorf("request %d: %d users, company %q", i, len(*q.Filter.UserIds), *q.CompanyId)
			}
			if got := q.Filter.DateRange.Start.Format(time.RFC3339Nano); got != "2025-05-01T00:00:00Z" {
				t.Errorf("start = %s", got)
			}
			if got := q.Filter.DateRange.End.Format(time.RFC3339Nano); got != "2025-05-03T23:59:59.999999999Z" {
				t.Errorf("end = %s", got)
			}
		}
	})
	t.Run("missing count means the answer is complete", func(t *testing.T) {
		var seen []api.OrdersQuery
		srv, _ := serve(t, ordersHandler(t, rows[:2], func(api.OrdersQuery) *float64 { return nil }, &seen))
		c, _ := newTestClient(t, srv.URL, nil)
		got, err := c.ListOrders(ctx, collUUID, "", nil, d, d.AddDate(0, 0, 9))
		if err != nil || len(got) != 2 || len(seen) != 1 {
			t.Fatalf("%d orders, %d requests, err %v", len(got), len(seen), err)
		}
		if seen[0].CompanyId != nil || seen[0].Filter.UserIds != nil {
			t.Error("empty company or users were sent")
		}
	})
	t.Run("window halves down to a day, then users halve", func(t *testing.T) {
		var seen []api.OrdersQuery
		// Claims one more order than it returns until a request names one
		// user on one day.
		srv, _ := serve(t, ordersHandler(t, rows[:1], func(q api.OrdersQuery) *float64 {
			n := 2.0
			if len(*q.Filter.UserIds) == 1 && q.Filter.DateRange.Start.Add(day-time.Nanosecond).Equal(*q.Filter.DateRange.End) {
				n = 1
			}
			return &n
		}, &seen))
		c, _ := newTestClient(t, srv.URL, nil)
		got, err := c.ListOrders(ctx, collUUID, companyID, []string{"u1", "u2"}, d, d.AddDate(0, 0, 2))
		if err != nil {
			t.Fatalf("ListOrders: %v", err)
		}
		if len(got) != 1 {
			t.Errorf("%d orders, want the one order deduplicated", len(got))
		}
		var trail []string
		for _, q := range seen {
			trail = append(trail, fmt.Sprintf("%s..%s/%d", q.Filter.DateRange.Start.Format("02"), q.Filter.DateRange.End.Format("02"), len(*q.Filter.UserIds)))
		}
		want := []string{
			"01..03/2",
			"01..02/2", "01..01/2", "01..01/1", "01..01/1", "02..02/2", "02..02/1", "02..02/1",
			"03..03/2", "03..03/1", "03..03/1",
		}
		if !slices.Equal(trail, want) {
			t.Errorf("requests %v\nwant     %v", trail, want)
		}
	})
	t.Run("overflow without a user filter is an error", func(t *testing.T) {
		var seen []api.OrdersQuery
		srv, _ := serve(t, ordersHandler(t, rows[:1], func(api.OrdersQuery) *float64 { n := 5.0; return &n }, &seen))
		c, _ := newTestClient(t, srv.URL, nil)
		_, err := c.ListOrders(ctx, collUUID, companyID, nil, d, d)
		e := mustError(t, err)
		if !errors.Is(err, ErrOrdersOverflow) || e.Retryable || e.Status != 200 || len(seen) != 1 {
			t.Errorf("error %v after %d requests", e, len(seen))
		}
	})
}
