package apiclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"hrsync/api"
	"hrsync/internal/contract"
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
		list, err := c.ListOrders(ctx, collUUID, companyID, []string{"u1", "u2", "u3", "u4", "u5"}, d, d.AddDate(0, 0, 2))
		if err != nil {
			t.Fatalf("ListOrders: %v", err)
		}
		got := list.Orders
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
		list, err := c.ListOrders(ctx, collUUID, "", nil, d, d.AddDate(0, 0, 9))
		if err != nil || len(list.Orders) != 2 || len(seen) != 1 {
			t.Fatalf("%d orders, %d requests, err %v", len(list.Orders), len(seen), err)
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
		list, err := c.ListOrders(ctx, collUUID, companyID, []string{"u1", "u2"}, d, d.AddDate(0, 0, 2))
		if err != nil {
			t.Fatalf("ListOrders: %v", err)
		}
		got := list.Orders
		if len(got) != 1 {
			t.Errorf("%d orders, want the one order deduplicated", len(got))
		}
		// The complete answers for days 2 and 3 hold the order of day 1.
		if list.OutsideWindow != 4 {
			t.Errorf("%d rows outside their request's days, want 4", list.OutsideWindow)
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

func TestListOrdersAnswersThatMakeNoSense(t *testing.T) {
	first := time.Date(2025, 5, 10, 0, 0, 0, 0, time.UTC)
	last := first.AddDate(0, 0, 2)
	east := time.FixedZone("UTC+2", 2*3600)

	t.Run("rows placed outside the days asked for are left out and counted", func(t *testing.T) {
		rows := []api.Order{
			order("before", first.Add(-time.Nanosecond)),                   // 9 May, 23:59:59.999 UTC
			order("first", first),                                          // 10 May, 00:00 UTC
			order("last", last.Add(day-time.Second)),                       // 12 May, 23:59:59 UTC
			order("after", last.Add(day)),                                  // 13 May, 00:00 UTC
			order("east-before", time.Date(2025, 5, 10, 1, 0, 0, 0, east)), // 9 May, 23:00 UTC
			order("east-last", time.Date(2025, 5, 13, 1, 0, 0, 0, east)),   // 12 May, 23:00 UTC
			{Id: sp("undated")},                                            // no creation time: kept for the caller to judge
		}
		var seen []api.OrdersQuery
		srv := serveChecked(t, ordersHandler(t, rows, func(api.OrdersQuery) *float64 { n := float64(len(rows)); return &n }, &seen))
		c, _ := newTestClient(t, srv.URL, nil)
		list, err := c.ListOrders(context.Background(), collUUID, companyID, []string{"u1"}, first, last)
		if err != nil {
			t.Fatalf("ListOrders: %v", err)
		}
		var ids []string
		for _, o := range list.Orders {
			ids = append(ids, *o.Id)
		}
		if want := []string{"undated", "first", "east-last", "last"}; !slices.Equal(ids, want) {
			t.Errorf("orders %v, want %v", ids, want)
		}
		if list.OutsideWindow != 3 || list.CountBelowRows != 0 || len(seen) != 1 {
			t.Errorf("outside %d, count below %d, %d requests; want 3, 0, 1", list.OutsideWindow, list.CountBelowRows, len(seen))
		}
	})
	t.Run("a count below the rows returned is logged and the rows kept", func(t *testing.T) {
		rows := []api.Order{order("o-1", first), order("o-2", first.Add(time.Hour)), order("o-3", last)}
		var seen []api.OrdersQuery
		srv := serveChecked(t, ordersHandler(t, rows, func(api.OrdersQuery) *float64 { n := 1.0; return &n }, &seen))
		core, logs := observer.New(zap.InfoLevel)
		c, _ := newTestClient(t, srv.URL, func(c *Config) { c.Logger = zap.New(core) })
		ctx := WithLogFields(context.Background(), zap.String("run", "run-7"))
		list, err := c.ListOrders(ctx, collUUID, companyID, []string{"u1"}, first, last)
		if err != nil {
			t.Fatalf("ListOrders: %v", err)
		}
		if len(list.Orders) != 3 || list.CountBelowRows != 1 || list.OutsideWindow != 0 || len(seen) != 1 {
			t.Errorf("%d orders, count below %d, outside %d, %d requests; want 3, 1, 0, 1",
				len(list.Orders), list.CountBelowRows, list.OutsideWindow, len(seen))
		}
		warns := logs.FilterLevelExact(zap.WarnLevel).All()
		if len(warns) != 1 {
			t.Fatalf("%d warnings, want 1", len(warns))
		}
		f := warns[0].ContextMap()
		if !strings.Contains(warns[0].Message, "count is below the rows") || f["count"] != 1.0 || f["rows"] != int64(3) ||
			f["firstDay"] != "2025-05-10" || f["lastDay"] != "2025-05-12" || f["run"] != "run-7" {
			t.Errorf("warning %q %v", warns[0].Message, f)
		}
	})
}

func TestOrderStatusForAnotherOrder(t *testing.T) {
	const other = "0ddba11e-0000-4000-8000-000000000001"
	status := func(id string) string {
		return `{"id":"` + id + `","createdAt":"2025-01-02T03:04:05Z","status":"Shipped","lineItems":[]}`
	}
	t.Run("is a bad response, not retried", func(t *testing.T) {
		var hits atomic.Int32
		srv := serveChecked(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
			hits.Add(1)
			writeJSON(w, http.StatusOK, status(other))
		})
		c, _ := newTestClient(t, srv.URL, nil)
		st, err := c.GetOrderStatus(context.Background(), collUUID, orderUUID, companyID)
		e := mustError(t, err)
		if st != nil || !errors.Is(err, ErrBadResponse) || e.Status != http.StatusOK || e.Retryable || hits.Load() != 1 {
			t.Fatalf("status %v, error %v after %d requests", st, err, hits.Load())
		}
		if !strings.Contains(err.Error(), other) || !strings.Contains(err.Error(), orderUUID) {
			t.Errorf("error %q does not name both orders", err)
		}
	})
	t.Run("an answer without an id is one too", func(t *testing.T) {
		srv, _ := serve(t, func(w http.ResponseWriter, _ *http.Request, _ int) { writeJSON(w, http.StatusOK, status("")) })
		c, _ := newTestClient(t, srv.URL, nil)
		_, err := c.GetOrderStatus(context.Background(), collUUID, orderUUID, companyID)
		if !errors.Is(err, ErrBadResponse) {
			t.Fatalf("error %v, want a bad response", err)
		}
	})
	t.Run("the same id in capitals is the same order", func(t *testing.T) {
		srv := serveChecked(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
			writeJSON(w, http.StatusOK, status(strings.ToUpper(orderUUID)))
		})
		c, _ := newTestClient(t, srv.URL, nil)
		st, err := c.GetOrderStatus(context.Background(), collUUID, orderUUID, companyID)
		if err != nil || st.Status != api.OrderStatusValueShipped {
			t.Fatalf("status %v, error %v", st, err)
		}
	})
}

func sp(s string) *string { return &s }

// serveChecked starts a loopback server of h whose requests and answers are
// checked against the contract: the answers that make no sense are still
// the contract's shapes, so only the client's own checks can catch them.
func serveChecked(t *testing.T, h func(w http.ResponseWriter, r *http.Request, attempt int)) *httptest.Server {
	t.Helper()
	v, err := contract.New()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h(w, r, 1) }),
		func(err error) { t.Errorf("contract: %v", err) }))
	t.Cleanup(srv.Close)
	return srv
}
