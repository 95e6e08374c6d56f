package emulator

import (
	"context"
	"net/http"
	"testing"
	"time"

	"hrsync/api"
)

func at(s string) *time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return &t
}

func TestListOrders(t *testing.T) {
	ctx := context.Background()
	list := func(t *testing.T, f *fixture, coll string, q api.OrdersQuery) api.OrdersPage {
		t.Helper()
		resp, err := f.client.ListOrdersWithResponse(ctx, coll, q)
		if err != nil {
			t.Fatal(err)
		}
		if resp.JSON200 == nil {
			t.Fatalf("status %d body %s", resp.StatusCode(), resp.Body)
		}
		return *resp.JSON200
	}
	ids := func(p api.OrdersPage) []string {
		var out []string
		for _, o := range *p.Data {
			out = append(out, *o.Id)
		}
		return out
	}
	place := func(t *testing.T, f *fixture, ext, created string) Order {
		t.Helper()
		o, err := f.emu.PlaceOrder(PlaceOrder{CollectionID: PlainCollectionID, ExternalID: ext, CreatedAt: at(created),
			Lines: []PlaceOrderLine{{ProductID: NotebookProductID}}})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	dayRange := func(start, end string) *api.OrdersFilter {
		return &api.OrdersFilter{DateRange: &api.DateRange{Start: at(start), End: at(end)}}
	}

	t.Run("the dataset's orders with users and line items", func(t *testing.T) {
		f := newFixture(t, nil)
		page := list(t, f, PersonalizableCollectionID, api.OrdersQuery{})
		if *page.Count != 2 || len(*page.Data) != 2 {
			t.Fatalf("count %v rows %d, want 2", *page.Count, len(*page.Data))
		}
		o := (*page.Data)[0]
		if *o.Id != OrderPendingID || *o.User.ExternalId != "E1002" || *o.User.Email != "jean-luc.obrien@example.com" || *o.OrderNumber == "" {
			t.Errorf("first order %+v", o)
		}
		li := (*o.OrderLineItems)[0]
		if *li.ProductId != BottleProductID || *li.VariantId != BottleBlackVariantID || *li.Price != 24 || *li.Quantity != 1 ||
			*li.VariantTitle != "Black" || li.Personalizations == nil || li.Sha == nil || *li.Personalizations.Name.Initials != "JLO" {
			t.Errorf("line item %+v", li)
		}
		// Jean-Luc was born on 29 February 1992; the order is of 20 January 2025.
		if b := li.Personalizations.Birth; *b.Years != 32 || *b.Zodiac != api.Pisces {
			t.Errorf("birth %+v", b)
		}
	})

	t.Run("filter by userIds", func(t *testing.T) {
		f := newFixture(t, nil)
		page := list(t, f, PlainCollectionID, api.OrdersQuery{Filter: &api.OrdersFilter{UserIds: &[]string{PersonZoeID}}})
		if got := ids(page); len(got) != 1 || got[0] != OrderShippedID || *page.Count != 1 {
			t.Errorf("orders %v count %v, want only Zoë's", got, *page.Count)
		}
		page = list(t, f, PlainCollectionID, api.OrdersQuery{Filter: &api.OrdersFilter{UserIds: &[]string{"99999999-0000-4000-8000-000000000000"}}})
		if len(*page.Data) != 0 || *page.Count != 0 {
			t.Errorf("unknown user: %v", ids(page))
		}
	})

	t.Run("date range is inclusive by UTC calendar day", func(t *testing.T) {
		f := newFixture(t, nil)
		before := place(t, f, "E1001", "2025-04-30T23:59:59Z")
		first := place(t, f, "E1001", "2025-05-01T00:00:00Z")
		last := place(t, f, "E1001", "2025-05-03T23:59:59Z")
		after := place(t, f, "E1001", "2025-05-04T00:00:00Z")
		cases := []struct {
			name       string
			start, end string
			want       []string
		}{
			{"times of day ignored", "2025-05-01T15:00:00Z", "2025-05-03T00:00:00Z", []string{first.ID, last.ID}},
			{"one day", "2025-05-03T12:00:00Z", "2025-05-03T12:00:00Z", []string{last.ID}},
			{"edges", "2025-04-30T00:00:00Z", "2025-05-04T00:00:00Z", []string{before.ID, first.ID, last.ID, after.ID}},
			{"offsets convert to UTC", "2025-05-01T01:00:00+02:00", "2025-05-03T20:00:00-05:00", []string{before.ID, first.ID, last.ID, after.ID}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				got := ids(list(t, f, PlainCollectionID, api.OrdersQuery{Filter: dayRange(c.start, c.end)}))
				if len(got) != len(c.want) {
					t.Fatalf("orders %v, want %v", got, c.want)
				}
				for i := range got {
					if got[i] != c.want[i] {
						t.Errorf("order %d = %s, want %s", i, got[i], c.want[i])
					}
				}
			})
		}
	})

	t.Run("sorted by createdAt then id; count is the total when rows are capped", func(t *testing.T) {
		f := newFixture(t, func(o *Options) { o.OrdersMaxRows = 3 })
		for _, c := range []string{"2025-05-02T10:00:00Z", "2025-05-01T10:00:00Z", "2025-05-02T10:00:00Z", "2025-05-01T09:00:00Z"} {
			place(t, f, "E1003", c)
		}
		page := list(t, f, PlainCollectionID, api.OrdersQuery{Filter: &api.OrdersFilter{UserIds: &[]string{PersonAnaID}}})
		if *page.Count != 4 || len(*page.Data) != 3 {
			t.Fatalf("count %v rows %d, want 4 and 3", *page.Count, len(*page.Data))
		}
		data := *page.Data
		for i := 1; i < len(data); i++ {
			a, b := data[i-1], data[i]
			if a.CreatedAt.After(*b.CreatedAt) || (a.CreatedAt.Equal(*b.CreatedAt) && *a.Id > *b.Id) {
				t.Errorf("rows %d and %d out of order: %s %s, %s %s", i-1, i, a.CreatedAt, *a.Id, b.CreatedAt, *b.Id)
			}
		}
		again := list(t, f, PlainCollectionID, api.OrdersQuery{Filter: &api.OrdersFilter{UserIds: &[]string{PersonAnaID}}})
		if mustJSON(t, again) != mustJSON(t, page) {
			t.Errorf("the same query answered differently")
		}
	})

	t.Run("bad filters are 400", func(t *testing.T) {
		f := newFixture(t, nil)
		path := "/api/ext/v1/collection/" + PlainCollectionID + "/orders/get"
		for body, field := range map[string]string{
			`{"filter":{"dateRange":{"start":"2025-05-02"}}}`:                                        "filter.dateRange.start",
			`{"filter":{"dateRange":{"start":"2025-05-02T00:00:00Z","end":"2025-05-01T00:00:00Z"}}}`: "start is after end",
			`{"filter":{"userIds":"abc"}}`:                                                           "filter.userIds",
			`{"companyId":7}`:                                                                        "companyId",
		} {
			status, _, b := f.do(t, "POST", path, tokDataset, body)
			wantError(t, status, b, http.StatusBadRequest, "invalid_input", field)
		}
	})
}

func TestOrderStatus(t *testing.T) {
	ctx := context.Background()
	get := func(t *testing.T, f *fixture, coll, id string) api.OrderStatus {
		t.Helper()
		resp, err := f.client.GetOrderStatusWithResponse(ctx, u(coll), u(id), &api.GetOrderStatusParams{CompanyId: DatasetCompanyID})
		if err != nil {
			t.Fatal(err)
		}
		if resp.JSON200 == nil {
			t.Fatalf("status %d body %s", resp.StatusCode(), resp.Body)
		}
		return *resp.JSON200
	}

	t.Run("every status of the dataset", func(t *testing.T) {
		f := newFixture(t, nil)
		for id, want := range map[string]api.OrderStatusValue{
			OrderPlacedID: api.OrderStatusValuePlaced, OrderPendingID: api.OrderStatusValuePending,
			OrderPartiallyShippedID: api.OrderStatusValuePartiallyShipped, OrderShippedID: api.OrderStatusValueShipped,
		} {
			coll := PlainCollectionID
			if id == OrderPendingID || id == OrderPartiallyShippedID {
				coll = PersonalizableCollectionID
			}
			if got := get(t, f, coll, id); got.Status != want {
				t.Errorf("order %s status %s, want %s", id, got.Status, want)
			}
		}
	})

	t.Run("partially shipped: tracking, and a canceled line", func(t *testing.T) {
		f := newFixture(t, nil)
		o := get(t, f, PersonalizableCollectionID, OrderPartiallyShippedID)
		if len(o.LineItems) != 3 {
			t.Fatalf("line items %+v", o.LineItems)
		}
		shipped, open, canceled := o.LineItems[0], o.LineItems[1], o.LineItems[2]
		if *shipped.Status != LineShipped || *shipped.TrackingNumber != "1Z999AA10000000031" || len(*shipped.AllShipments) != 1 {
			t.Errorf("shipped line %+v", shipped)
		}
		if *open.Status != LineProcessing || open.TrackingNumber != nil || len(*open.AllShipments) != 0 {
			t.Errorf("open line %+v", open)
		}
		if *canceled.Status != "canceled" {
			t.Errorf("canceled line %+v", canceled)
		}
	})

	t.Run("shipped in two parcels", func(t *testing.T) {
		f := newFixture(t, nil)
		li := get(t, f, PlainCollectionID, OrderShippedID).LineItems[0]
		ships := *li.AllShipments
		if len(ships) != 2 || *ships[0].TrackingNumber != "1Z999AA10000000041" || *ships[1].TrackingNumber != "1Z999AA10000000042" {
			t.Errorf("shipments %+v", ships)
		}
		if *li.TrackingNumber != "1Z999AA10000000042" {
			t.Errorf("tracking %s, want the latest parcel", *li.TrackingNumber)
		}
	})

	t.Run("status, tracking and shipments set through the test API show", func(t *testing.T) {
		f := newFixture(t, nil)
		o, err := f.emu.PlaceOrder(PlaceOrder{CollectionID: PersonalizableCollectionID, UserID: PersonAnaID,
			Lines: []PlaceOrderLine{{ProductID: HoodieProductID, VariantID: HoodieSVariantID, Quantity: 2}, {ProductID: BottleProductID}}})
		if err != nil {
			t.Fatal(err)
		}
		if o.CreatedAt != testNow() || o.Status != api.OrderStatusValuePlaced || o.LineItems[1].VariantID != BottleBlackVariantID {
			t.Errorf("placed %+v", o)
		}
		if _, err := f.emu.SetOrderStatus(o.ID, api.OrderStatusValuePartiallyShipped); err != nil {
			t.Fatal(err)
		}
		if _, err := f.emu.UpdateLineItem(o.ID, o.LineItems[0].ID, LineItemUpdate{Status: sp(LineShipped), Shipment: &Shipment{TrackingURL: "https://t.example.com/A", TrackingNumber: "A"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.emu.UpdateLineItem(o.ID, o.LineItems[0].ID, LineItemUpdate{Shipment: &Shipment{TrackingURL: "https://t.example.com/B", TrackingNumber: "B"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.emu.UpdateLineItem(o.ID, o.LineItems[1].ID, LineItemUpdate{Status: sp(LineCanceled)}); err != nil {
			t.Fatal(err)
		}
		got := get(t, f, PersonalizableCollectionID, o.ID)
		if got.Status != api.OrderStatusValuePartiallyShipped || *got.LineItems[0].TrackingNumber != "B" ||
			len(*got.LineItems[0].AllShipments) != 2 || *got.LineItems[1].Status != LineCanceled {
			t.Errorf("status %s", mustJSON(t, got))
		}
	})

	t.Run("Go methods report unknown ids and bad input", func(t *testing.T) {
		f := newFixture(t, nil)
		if _, err := f.emu.SetOrderStatus("nope", api.OrderStatusValueShipped); !isErr(err, ErrNotFound) {
			t.Errorf("unknown order: %v", err)
		}
		if _, err := f.emu.SetOrderStatus(OrderPlacedID, "Lost"); !isErr(err, ErrInvalid) {
			t.Errorf("bad status: %v", err)
		}
		if _, err := f.emu.UpdateLineItem(OrderPlacedID, "nope", LineItemUpdate{}); !isErr(err, ErrNotFound) {
			t.Errorf("unknown line: %v", err)
		}
		if _, err := f.emu.PlaceOrder(PlaceOrder{CollectionID: PlainCollectionID, ExternalID: "nobody", Lines: []PlaceOrderLine{{ProductID: NotebookProductID}}}); !isErr(err, ErrNotFound) {
			t.Errorf("unknown person: %v", err)
		}
		if _, err := f.emu.PlaceOrder(PlaceOrder{CollectionID: PlainCollectionID, ExternalID: "E1001", Lines: []PlaceOrderLine{{ProductID: BottleProductID}}}); !isErr(err, ErrNotFound) {
			t.Errorf("product of another collection: %v", err)
		}
		if _, err := f.emu.PlaceOrder(PlaceOrder{ID: OrderPlacedID, CollectionID: PlainCollectionID, ExternalID: "E1001", Lines: []PlaceOrderLine{{ProductID: NotebookProductID}}}); !isErr(err, ErrConflict) {
			t.Errorf("id in use: %v", err)
		}
	})
}
