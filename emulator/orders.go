package emulator

import (
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"hrsync/api"
)

type ordersQueryBody struct {
	CompanyID *string `json:"companyId"`
	Filter    *struct {
		UserIDs   *[]string `json:"userIds"`
		DateRange *struct {
			Start *string `json:"start"`
			End   *string `json:"end"`
		} `json:"dateRange"`
	} `json:"filter"`
}

// ordersQuery is a parsed orders list request. Start and End are UTC
// calendar days (midnight); the zero time means open.
type ordersQuery struct {
	companyID  *string
	userIDs    []string
	start, end time.Time
}

// parseOrdersQuery reads and checks an orders/get body.
func parseOrdersQuery(b []byte) (ordersQuery, *apiError) {
	var body ordersQueryBody
	if aerr := decodeJSON(b, &body, ""); aerr != nil {
		return ordersQuery{}, aerr
	}
	q := ordersQuery{companyID: body.CompanyID}
	if body.Filter == nil {
		return q, nil
	}
	if body.Filter.UserIDs != nil {
		q.userIDs = *body.Filter.UserIDs
	}
	if dr := body.Filter.DateRange; dr != nil {
		var aerr *apiError
		if q.start, aerr = parseDay("filter.dateRange.start", dr.Start); aerr != nil {
			return q, aerr
		}
		if q.end, aerr = parseDay("filter.dateRange.end", dr.End); aerr != nil {
			return q, aerr
		}
		if !q.start.IsZero() && !q.end.IsZero() && q.end.Before(q.start) {
			return q, errInvalid("filter.dateRange: start is after end")
		}
	}
	return q, nil
}

// parseDay reads an RFC 3339 date-time and returns its UTC calendar day.
func parseDay(field string, s *string) (time.Time, *apiError) {
	if s == nil {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, *s)
	if err != nil {
		return time.Time{}, errInvalid("%s: want an RFC 3339 date-time, got %q", field, *s)
	}
	return utcDay(t), nil
}

func utcDay(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

func (q ordersQuery) matches(o *Order) bool {
	if len(q.userIDs) > 0 && !slices.Contains(q.userIDs, o.UserID) {
		return false
	}
	d := utcDay(o.CreatedAt)
	if !q.start.IsZero() && d.Before(q.start) {
		return false
	}
	if !q.end.IsZero() && d.After(q.end) {
		return false
	}
	return true
}

// ListOrders answers the company's orders of the collection that match the
// filter, sorted by createdAt then id, at most OrdersMaxRows of them;
// count is the number that match.
func (h apiHandlers) ListOrders(w http.ResponseWriter, r *http.Request, collectionID api.CollectionIdString) {
	b, aerr := readBody(r)
	if aerr != nil {
		writeAPIError(w, aerr)
		return
	}
	q, aerr := parseOrdersQuery(b)
	if aerr != nil {
		writeAPIError(w, aerr)
		return
	}
	companyID, aerr := resolveCompany(r.Context(), q.companyID)
	if aerr != nil {
		writeAPIError(w, aerr)
		return
	}
	e := h.e
	if _, ok := e.catalog.collections[collectionID]; !ok {
		writeAPIError(w, errNotFound("collection %q not found", collectionID))
		return
	}
	e.mu.Lock()
	c := e.st.company(companyID)
	var matched []*Order
	for _, o := range c.orders {
		if o.CollectionID == collectionID && q.matches(o) {
			matched = append(matched, o)
		}
	}
	sort.SliceStable(matched, func(i, j int) bool {
		if !matched[i].CreatedAt.Equal(matched[j].CreatedAt) {
			return matched[i].CreatedAt.Before(matched[j].CreatedAt)
		}
		return matched[i].ID < matched[j].ID
	})
	count := float64(len(matched))
	if len(matched) > e.opts.OrdersMaxRows {
		matched = matched[:e.opts.OrdersMaxRows]
	}
	data := make([]api.Order, 0, len(matched))
	for _, o := range matched {
		data = append(data, listOrder(o, c.byID[o.UserID]))
	}
	e.mu.Unlock()
	writeJSON(w, http.StatusOK, api.OrdersPage{Data: &data, Count: &count})
}

// listOrder renders an order as the orders list shows it.
func listOrder(o *Order, who *Person) api.Order {
	created := o.CreatedAt
	out := api.Order{Id: ptr(o.ID), CreatedAt: &created, OrderNumber: ptr(o.Number)}
	if who != nil {
		out.ExternalId = ptr(who.ExternalID)
		out.User = &api.OrderUser{ExternalId: ptr(who.ExternalID), Email: ptr(who.Email)}
	}
	lines := make([]api.OrderLineItem, 0, len(o.LineItems))
	for _, li := range o.LineItems {
		ol := api.OrderLineItem{
			Id: ptr(li.ID), Title: ptr(li.Title), Quantity: ptr(float64(li.Quantity)),
			Price: ptr(li.Price), RetailPrice: ptr(li.RetailPrice),
			ProductTitle: ptr(li.ProductTitle), VariantTitle: ptr(li.VariantTitle),
			ProductId: ptr(li.ProductID), VariantId: ptr(li.VariantID),
		}
		if li.ImageURL != "" {
			ol.Image = &api.LineItemImage{Url: ptr(li.ImageURL), AspectRatio: ptr(li.ImageAspectRatio)}
		}
		if li.Personalization != nil {
			ol.Personalizations = ptr(clone(*li.Personalization))
			ol.Sha = ptr(li.Sha)
		}
		lines = append(lines, ol)
	}
	out.OrderLineItems = &lines
	return out
}

// GetOrderStatus answers one order's status and its line items' tracking.
// companyId is required; an order of another company or collection is 404.
func (h apiHandlers) GetOrderStatus(w http.ResponseWriter, r *http.Request, collectionID api.CollectionIdUUID, orderID openapi_types.UUID, params api.GetOrderStatusParams) {
	if strings.TrimSpace(params.CompanyId) == "" {
		writeAPIError(w, errInvalid("companyId is required"))
		return
	}
	companyID, aerr := resolveCompany(r.Context(), &params.CompanyId)
	if aerr != nil {
		writeAPIError(w, aerr)
		return
	}
	e := h.e
	if _, ok := e.catalog.collections[collectionID.String()]; !ok {
		writeAPIError(w, errNotFound("collection %s not found", collectionID))
		return
	}
	e.mu.Lock()
	o, ok := e.st.orders[orderID.String()]
	if !ok || o.CompanyID != companyID || o.CollectionID != collectionID.String() {
		e.mu.Unlock()
		writeAPIError(w, errNotFound("order %s not found", orderID))
		return
	}
	out := api.OrderStatus{Id: o.ID, CreatedAt: o.CreatedAt, Status: o.Status, LineItems: make([]api.StatusLineItem, 0, len(o.LineItems))}
	for _, li := range o.LineItems {
		sl := api.StatusLineItem{Id: ptr(li.ID), Title: ptr(li.Title), Status: ptr(li.Status)}
		if li.TrackingURL != "" {
			sl.TrackingUrl = ptr(li.TrackingURL)
		}
		if li.TrackingNumber != "" {
			sl.TrackingNumber = ptr(li.TrackingNumber)
		}
		ships := make([]api.Shipment, 0, len(li.Shipments))
		for _, s := range li.Shipments {
			ships = append(ships, api.Shipment{TrackingUrl: ptr(s.TrackingURL), TrackingNumber: ptr(s.TrackingNumber)})
		}
		sl.AllShipments = &ships
		out.LineItems = append(out.LineItems, sl)
	}
	e.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func ptr[T any](v T) *T { return &v }
