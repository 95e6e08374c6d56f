package apiclient

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"time"

	"go.uber.org/zap"

	"hrsync/api"
)

const day = 24 * time.Hour

// OrderList is what ListOrders found.
type OrderList struct {
	// Orders holds each order id once, ordered by creation time and id.
	Orders []api.Order
	// OutsideWindow counts the rows the platform returned although they
	// were placed on a UTC day outside the days the request asked for; they
	// are not in Orders.
	OutsideWindow int
	// CountBelowRows counts the answers whose count was below the number of
	// rows they held (each is logged); their rows are kept.
	CountBelowRows int
}

// ListOrders returns every order of a collection placed by the given users
// from firstDay to lastDay, both days included (POST
// /collection/{id}/orders/get). It is a read.
//
// Days are UTC calendar days: the year, month and day of firstDay and
// lastDay, read in their own location, name the UTC days asked for. An
// empty userIDs sends no user filter; an empty companyID sends none.
//
// The platform's list is not paginated and its count is the total, so
// ListOrders asks again whenever count exceeds the rows returned: it halves
// the date window until it is one day, then halves the user list. If one
// user on one day still has more orders than one answer holds, it returns an
// *Error wrapping ErrOrdersOverflow rather than a list with orders missing.
// userIDs are sent in chunks of at most Config.OrdersUserChunk.
//
// Answers that make no sense are not taken as they are: a row whose
// creation time falls on a UTC day outside the days its request asked for is
// left out and counted (OrderList.OutsideWindow), and a count below the rows
// returned is logged as a warning and counted (OrderList.CountBelowRows).
func (c *Client) ListOrders(ctx context.Context, collectionID, companyID string, userIDs []string, firstDay, lastDay time.Time) (OrderList, error) {
	const op = OpListOrders
	if collectionID == "" {
		return OrderList{}, invalid(op, "collection id is empty")
	}
	first, last := utcDay(firstDay), utcDay(lastDay)
	if last.Before(first) {
		return OrderList{}, invalid(op, "last day %s is before first day %s", last.Format(time.DateOnly), first.Format(time.DateOnly))
	}
	l := &orderLister{c: c, collectionID: collectionID, companyID: companyID, seen: map[string]bool{}}
	for _, users := range chunk(userIDs, c.cfg.OrdersUserChunk) {
		if err := l.collect(ctx, users, first, last); err != nil {
			return OrderList{}, err
		}
	}
	slices.SortStableFunc(l.list.Orders, compareOrders)
	return l.list, nil
}

// orderLister gathers the orders of one ListOrders call.
type orderLister struct {
	c                       *Client
	collectionID, companyID string
	seen                    map[string]bool
	list                    OrderList
}

// collect lists the orders of users from first to last (UTC midnights),
// narrowing the request until every answer is complete.
func (l *orderLister) collect(ctx context.Context, users []string, first, last time.Time) error {
	page, status, err := l.fetch(ctx, users, first, last)
	if err != nil {
		return err
	}
	var rows []api.Order
	if page.Data != nil {
		rows = *page.Data
	}
	total := len(rows)
	if page.Count != nil {
		total = int(math.Ceil(*page.Count))
	}
	if total < len(rows) {
		l.list.CountBelowRows++
		l.c.logger(ctx).Warn("orders list answer: count is below the rows returned; the rows are kept",
			zap.Float64("count", *page.Count), zap.Int("rows", len(rows)), zap.Int("users", len(users)),
			zap.String("firstDay", first.Format(time.DateOnly)), zap.String("lastDay", last.Format(time.DateOnly)))
	}
	if total <= len(rows) {
		l.add(rows, first, last)
		return nil
	}
	if days := int(last.Sub(first)/day) + 1; days > 1 {
		mid := first.AddDate(0, 0, (days-1)/2)
		if err := l.collect(ctx, users, first, mid); err != nil {
			return err
		}
		return l.collect(ctx, users, mid.AddDate(0, 0, 1), last)
	}
	if len(users) > 1 {
		half := len(users) / 2
		if err := l.collect(ctx, users[:half], first, last); err != nil {
			return err
		}
		return l.collect(ctx, users[half:], first, last)
	}
	who := "all users"
	if len(users) == 1 {
		who = "one user"
	}
	return &Error{Op: OpListOrders, Status: status, Outcome: OutcomeApplied, Err: fmt.Errorf(
		"%w: %d of %d orders returned for %s on %s", ErrOrdersOverflow, len(rows), total, who, first.Format(time.DateOnly))}
}

// fetch asks for one window once (with the client's retries).
func (l *orderLister) fetch(ctx context.Context, users []string, first, last time.Time) (*api.OrdersPage, int, error) {
	// The platform compares days only; the end is the last instant of the
	// last day so that a platform comparing instants loses nothing either.
	start, end := first, last.Add(day-time.Nanosecond)
	q := api.OrdersQuery{
		CompanyId: optString(l.companyID),
		Filter:    &api.OrdersFilter{DateRange: &api.DateRange{Start: &start, End: &end}},
	}
	if len(users) > 0 {
		q.Filter.UserIds = &users
	}
	status, body, err := l.c.do(ctx, call{
		op:      OpListOrders,
		timeout: l.c.cfg.Timeout,
		build: func(server string) (*http.Request, error) {
			return api.NewListOrdersRequest(server, l.collectionID, q)
		},
		ok: isOK,
	})
	if err != nil {
		return nil, 0, err
	}
	var page api.OrdersPage
	if err := decode(OpListOrders, status, body, &page); err != nil {
		return nil, 0, err
	}
	return &page, status, nil
}

// add keeps the orders not seen yet that were placed from first to last
// (UTC midnights); an order without an id is always kept, one without a
// creation time too (the caller decides what to do with it). An order
// placed on another day is counted and left out.
func (l *orderLister) add(rows []api.Order, first, last time.Time) {
	for _, o := range rows {
		if o.CreatedAt != nil {
			if d := utcDay(o.CreatedAt.UTC()); d.Before(first) || d.After(last) {
				l.list.OutsideWindow++
				continue
			}
		}
		if o.Id != nil {
			if l.seen[*o.Id] {
				continue
			}
			l.seen[*o.Id] = true
		}
		l.list.Orders = append(l.list.Orders, o)
	}
}

func compareOrders(a, b api.Order) int {
	var ta, tb time.Time
	if a.CreatedAt != nil {
		ta = *a.CreatedAt
	}
	if b.CreatedAt != nil {
		tb = *b.CreatedAt
	}
	if c := ta.Compare(tb); c != 0 {
		return c
	}
	var ia, ib string
	if a.Id != nil {
		ia = *a.Id
	}
	if b.Id != nil {
		ib = *b.Id
	}
	return cmp.Compare(ia, ib)
}

// utcDay returns UTC midnight of t's calendar day, read in t's location.
func utcDay(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// chunk splits ids into slices of at most size; no ids make one empty chunk
// (no user filter).
func chunk(ids []string, size int) [][]string {
	if len(ids) == 0 {
		return [][]string{nil}
	}
	var out [][]string
	for len(ids) > size {
		out = append(out, ids[:size:size])
		ids = ids[size:]
	}
	return append(out, ids)
}
