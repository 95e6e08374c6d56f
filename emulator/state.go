package emulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"

	"hrsync/api"
	"hrsync/emulator/personalization"
)

// idNamespace is the UUID namespace of the ids the emulator derives
// (people, orders, line items), so that the same inputs give the same ids.
const idNamespace = "6f1c3a52-8f0e-4b7a-9d43-2a4a0c8e5b10"

func derivedID(parts ...string) string {
	return uuid.NewSHA1(uuid.MustParse(idNamespace), []byte(strings.Join(parts, "\x00"))).String()
}

// Line item statuses the emulator uses. The spec shows only "canceled";
// UpdateLineItem accepts any string.
const (
	LineProcessing = "processing"
	LineShipped    = "shipped"
	LineCanceled   = "canceled"
)

// Person is a person of a company as the emulator holds them.
type Person struct {
	ID         string  `json:"id"`
	ExternalID string  `json:"externalId,omitempty"`
	Email      string  `json:"email,omitempty"`
	FirstName  string  `json:"firstName"`
	LastName   string  `json:"lastName"`
	Department string  `json:"department,omitempty"`
	Location   string  `json:"location,omitempty"`
	StartDate  string  `json:"startDate,omitempty"`
	BirthDate  string  `json:"birthDate,omitempty"`
	Balance    float64 `json:"balance"`
	// EmailsSent counts the create calls that named this person with
	// shouldSendEmail true.
	EmailsSent int `json:"emailsSent"`
	// Grants lists every balance the person received, oldest first.
	Grants []Grant `json:"grants"`
}

// Grant is one application of a balance to one person.
type Grant struct {
	// Source is "addBalance" (the person's own field), "amount" (the
	// request's) or "dataset" (the built-in starting balance).
	Source          string    `json:"source"`
	Amount          float64   `json:"amount"`
	IdempotencyKey  string    `json:"idempotencyKey,omitempty"`
	ShouldSendEmail bool      `json:"shouldSendEmail"`
	At              time.Time `json:"at"`
}

// Shipment is one parcel of a line item.
type Shipment struct {
	TrackingURL    string `json:"trackingUrl"`
	TrackingNumber string `json:"trackingNumber"`
}

// LineItem is one line of an order.
type LineItem struct {
	ID               string                     `json:"id"`
	ProductID        string                     `json:"productId"`
	VariantID        string                     `json:"variantId"`
	Title            string                     `json:"title"`
	ProductTitle     string                     `json:"productTitle"`
	VariantTitle     string                     `json:"variantTitle"`
	Quantity         int                        `json:"quantity"`
	Price            float64                    `json:"price"`
	RetailPrice      float64                    `json:"retailPrice"`
	ImageURL         string                     `json:"imageUrl,omitempty"`
	ImageAspectRatio float64                    `json:"imageAspectRatio,omitempty"`
	Status           string                     `json:"status"`
	TrackingURL      string                     `json:"trackingUrl,omitempty"`
	TrackingNumber   string                     `json:"trackingNumber,omitempty"`
	Shipments        []Shipment                 `json:"shipments"`
	Personalization  *api.PersonalizationFields `json:"personalization,omitempty"`
	Sha              string                     `json:"sha,omitempty"`
}

// Order is an order as the emulator holds it.
type Order struct {
	ID           string               `json:"id"`
	Number       string               `json:"orderNumber"`
	CompanyID    string               `json:"companyId"`
	CollectionID string               `json:"collectionId"`
	UserID       string               `json:"userId"`
	CreatedAt    time.Time            `json:"createdAt"`
	Status       api.OrderStatusValue `json:"status"`
	LineItems    []LineItem           `json:"lineItems"`
}

// PlaceOrder asks for an order to be placed for a person.
type PlaceOrder struct {
	// ID is the order's id; empty means one is derived from the company and
	// the order number.
	ID string `json:"id,omitempty"`
	// CompanyID defaults to the built-in dataset's company.
	CompanyID    string `json:"companyId,omitempty"`
	CollectionID string `json:"collectionId"`
	// The person, by platform id (UserID) or by ExternalID.
	UserID     string `json:"userId,omitempty"`
	ExternalID string `json:"externalId,omitempty"`
	// CreatedAt defaults to the emulator's clock.
	CreatedAt *time.Time `json:"createdAt,omitempty"`
	// Status defaults to Placed.
	Status api.OrderStatusValue `json:"status,omitempty"`
	Lines  []PlaceOrderLine     `json:"lines"`
}

// PlaceOrderLine is one line of a PlaceOrder. VariantID defaults to the
// product's first variant, Quantity to 1.
type PlaceOrderLine struct {
	ProductID string `json:"productId"`
	VariantID string `json:"variantId,omitempty"`
	Quantity  int    `json:"quantity,omitempty"`
}

// LineItemUpdate changes a line item; nil fields are left as they are.
// A Shipment is appended to the line's shipments and becomes its tracking.
type LineItemUpdate struct {
	Status         *string   `json:"status,omitempty"`
	TrackingURL    *string   `json:"trackingUrl,omitempty"`
	TrackingNumber *string   `json:"trackingNumber,omitempty"`
	Shipment       *Shipment `json:"shipment,omitempty"`
}

// PersonalizationRecord is a personalization the emulator has processed.
type PersonalizationRecord struct {
	Sha          string    `json:"sha"`
	CollectionID string    `json:"collectionId"`
	DoneAt       time.Time `json:"doneAt"`
}

// CompanyState is one company's people and orders.
type CompanyState struct {
	ID     string   `json:"id"`
	People []Person `json:"people"`
	Orders []Order  `json:"orders"`
}

// State is a copy of everything the emulator holds that calls can change.
type State struct {
	Companies        []CompanyState          `json:"companies"`
	Personalizations []PersonalizationRecord `json:"personalizations"`
}

type company struct {
	id         string
	people     []*Person
	byID       map[string]*Person
	byExternal map[string]*Person
	byEmail    map[string]*Person // lower-cased e-mail
	orders     []*Order
	nextNumber int
	idem       map[string][]byte // Idempotency-Key -> the 201 answer's body
}

type state struct {
	companies    map[string]*company
	companyOrder []string
	orders       map[string]*Order
	personalized map[string]PersonalizationRecord // by sha
}

func newState(cat *catalog, now time.Time) *state {
	st := &state{
		companies:    map[string]*company{},
		orders:       map[string]*Order{},
		personalized: map[string]PersonalizationRecord{},
	}
	c := st.company(DatasetCompanyID)
	for _, p := range datasetPeople() {
		if p.Balance != 0 {
			p.Grants = []Grant{{Source: "dataset", Amount: p.Balance, At: now}}
		}
		if p.Grants == nil {
			p.Grants = []Grant{}
		}
		c.add(p)
	}
	for _, po := range datasetOrders() {
		if _, aerr := st.placeOrder(cat, po, now); aerr != nil {
			panic(fmt.Sprintf("emulator: built-in dataset: %v", aerr))
		}
	}
	ship := func(orderID string, line int, number string) {
		o := st.orders[orderID]
		li := &o.LineItems[line]
		s := Shipment{TrackingURL: "https://tracking.example.com/" + number, TrackingNumber: number}
		li.Shipments = append(li.Shipments, s)
		li.TrackingURL, li.TrackingNumber, li.Status = s.TrackingURL, s.TrackingNumber, LineShipped
	}
	ship(OrderPartiallyShippedID, 0, "1Z999AA10000000031")
	st.orders[OrderPartiallyShippedID].LineItems[2].Status = LineCanceled
	ship(OrderShippedID, 0, "1Z999AA10000000041")
	ship(OrderShippedID, 0, "1Z999AA10000000042")
	return st
}

// company returns the company with id, creating it empty on first use:
// any company a token is given exists.
func (st *state) company(id string) *company {
	c, ok := st.companies[id]
	if !ok {
		c = &company{
			id: id, byID: map[string]*Person{}, byExternal: map[string]*Person{}, byEmail: map[string]*Person{},
			nextNumber: 1001, idem: map[string][]byte{},
		}
		st.companies[id] = c
		st.companyOrder = append(st.companyOrder, id)
	}
	return c
}

func (c *company) add(p *Person) {
	c.people = append(c.people, p)
	c.byID[p.ID] = p
	c.index(p)
}

func (c *company) index(p *Person) {
	if p.ExternalID != "" {
		c.byExternal[p.ExternalID] = p
	}
	if p.Email != "" {
		if _, taken := c.byEmail[strings.ToLower(p.Email)]; !taken {
			c.byEmail[strings.ToLower(p.Email)] = p
		}
	}
}

func (st *state) placeOrder(cat *catalog, po PlaceOrder, now time.Time) (*Order, *apiError) {
	if po.CompanyID == "" {
		po.CompanyID = DatasetCompanyID
	}
	c := st.company(po.CompanyID)
	if _, ok := cat.collections[po.CollectionID]; !ok {
		return nil, errNotFound("collection %q not found", po.CollectionID)
	}
	var who *Person
	switch {
	case po.UserID != "":
		who = c.byID[po.UserID]
	case po.ExternalID != "":
		who = c.byExternal[po.ExternalID]
	default:
		return nil, errInvalid("userId or externalId is required")
	}
	if who == nil {
		return nil, errNotFound("person not found in company %s", po.CompanyID)
	}
	if len(po.Lines) == 0 {
		return nil, errInvalid("lines: want at least one line")
	}
	if po.Status == "" {
		po.Status = api.OrderStatusValuePlaced
	}
	if !po.Status.Valid() {
		return nil, errInvalid("status %q: want Placed, Pending, Partially Shipped or Shipped", po.Status)
	}
	created := now
	if po.CreatedAt != nil {
		created = *po.CreatedAt
	}
	number := fmt.Sprintf("#%d", c.nextNumber)
	if po.ID == "" {
		po.ID = derivedID(c.id, "order", number)
	} else if _, err := uuid.Parse(po.ID); err != nil {
		return nil, errInvalid("id %q: want a UUID", po.ID)
	}
	if _, taken := st.orders[po.ID]; taken {
		return nil, &apiError{status: http.StatusConflict, code: "conflict", msg: fmt.Sprintf("order %s exists", po.ID)}
	}
	o := &Order{
		ID: po.ID, Number: number, CompanyID: c.id, CollectionID: po.CollectionID, UserID: who.ID,
		CreatedAt: created.UTC(), Status: po.Status, LineItems: []LineItem{},
	}
	coll := cat.collections[po.CollectionID]
	for i, l := range po.Lines {
		p, ok := cat.products[l.ProductID]
		if !ok || p.CollectionID != po.CollectionID {
			return nil, errNotFound("lines[%d]: product %q not found in collection", i, l.ProductID)
		}
		v := &p.Variants[0]
		if l.VariantID != "" {
			if v = p.variant(l.VariantID); v == nil {
				return nil, errNotFound("lines[%d]: variant %q not found in product", i, l.VariantID)
			}
		}
		if l.Quantity == 0 {
			l.Quantity = 1
		}
		if l.Quantity < 0 {
			return nil, errInvalid("lines[%d].quantity: want >= 1", i)
		}
		title := p.Text["en-US"].Title
		li := LineItem{
			ID: derivedID(o.ID, "line", fmt.Sprint(i)), ProductID: p.ID, VariantID: v.ID,
			ProductTitle: title, VariantTitle: p.variantTitle(v, "en-US"),
			Quantity: l.Quantity, Price: v.Price, RetailPrice: v.RetailPrice,
			Status: LineProcessing, Shipments: []Shipment{},
		}
		li.Title = li.ProductTitle
		if li.VariantTitle != "" {
			li.Title += " - " + li.VariantTitle
		}
		if len(v.Images) > 0 {
			li.ImageURL, li.ImageAspectRatio = v.Images[0].URL, v.Images[0].Width/v.Images[0].Height
		}
		if coll.Personalizable && p.Personalized {
			src := sourceOf(who)
			if fields, err := personalization.Derive(src, created); err == nil {
				li.Personalization = &fields
				li.Sha = personalization.Sha(coll.ID, src)
			}
		}
		o.LineItems = append(o.LineItems, li)
	}
	c.nextNumber++
	c.orders = append(c.orders, o)
	st.orders[o.ID] = o
	return o, nil
}

// clone deep-copies a value of the emulator's own JSON-friendly types.
func clone[T any](v T) T {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("emulator: clone: %v", err))
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		panic(fmt.Sprintf("emulator: clone: %v", err))
	}
	return out
}

// State returns a copy of every company's people (with balances and
// grants) and orders, and of the processed personalizations.
func (e *Emulator) State() State {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := State{Companies: []CompanyState{}, Personalizations: []PersonalizationRecord{}}
	for _, id := range e.st.companyOrder {
		c := e.st.companies[id]
		cs := CompanyState{ID: id, People: []Person{}, Orders: []Order{}}
		for _, p := range c.people {
			cs.People = append(cs.People, clone(*p))
		}
		for _, o := range c.orders {
			cs.Orders = append(cs.Orders, clone(*o))
		}
		out.Companies = append(out.Companies, cs)
	}
	for _, rec := range e.st.personalized {
		out.Personalizations = append(out.Personalizations, rec)
	}
	sort.Slice(out.Personalizations, func(i, j int) bool { return out.Personalizations[i].Sha < out.Personalizations[j].Sha })
	return out
}

// Person returns a copy of a company's person found by platform id or by
// externalId.
func (e *Emulator) Person(companyID, idOrExternalID string) (Person, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, ok := e.st.companies[companyID]
	if !ok {
		return Person{}, false
	}
	p := c.byID[idOrExternalID]
	if p == nil {
		p = c.byExternal[idOrExternalID]
	}
	if p == nil {
		return Person{}, false
	}
	return clone(*p), true
}

// PlaceOrder places an order for a person and returns it. Line items start
// "processing"; a personalized product in a personalizable collection gets
// the person's personalization as of the order's time.
func (e *Emulator) PlaceOrder(po PlaceOrder) (Order, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	o, aerr := e.st.placeOrder(e.catalog, po, e.opts.Clock())
	if aerr != nil {
		return Order{}, aerr
	}
	return clone(*o), nil
}

// SetOrderStatus sets an order's status.
func (e *Emulator) SetOrderStatus(orderID string, status api.OrderStatusValue) (Order, error) {
	if !status.Valid() {
		return Order{}, errInvalid("status %q: want Placed, Pending, Partially Shipped or Shipped", status)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	o, ok := e.st.orders[orderID]
	if !ok {
		return Order{}, errNotFound("order %q not found", orderID)
	}
	o.Status = status
	return clone(*o), nil
}

// UpdateLineItem changes a line item's status and tracking, and may add a
// shipment to it.
func (e *Emulator) UpdateLineItem(orderID, lineID string, u LineItemUpdate) (Order, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	o, ok := e.st.orders[orderID]
	if !ok {
		return Order{}, errNotFound("order %q not found", orderID)
	}
	for i := range o.LineItems {
		li := &o.LineItems[i]
		if li.ID != lineID {
			continue
		}
		if u.Status != nil {
			li.Status = *u.Status
		}
		if u.TrackingURL != nil {
			li.TrackingURL = *u.TrackingURL
		}
		if u.TrackingNumber != nil {
			li.TrackingNumber = *u.TrackingNumber
		}
		if u.Shipment != nil {
			li.Shipments = append(li.Shipments, *u.Shipment)
			li.TrackingURL, li.TrackingNumber = u.Shipment.TrackingURL, u.Shipment.TrackingNumber
		}
		return clone(*o), nil
	}
	return Order{}, errNotFound("line item %q not found in order", lineID)
}

// DatasetInfo names the built-in dataset's ids.
type DatasetInfo struct {
	CompanyID   string              `json:"companyId"`
	Collections []DatasetCollection `json:"collections"`
	Products    []DatasetProduct    `json:"products"`
	People      []DatasetPerson     `json:"people"`
	Orders      []DatasetOrder      `json:"orders"`
	Locales     []string            `json:"locales"`
}

// DatasetCollection is one collection of the dataset.
type DatasetCollection struct {
	ID             string `json:"id"`
	Title          string `json:"title"`
	Personalizable bool   `json:"personalizable"`
}

// DatasetProduct is one product of the dataset.
type DatasetProduct struct {
	ID           string   `json:"id"`
	CollectionID string   `json:"collectionId"`
	Title        string   `json:"title"`
	VariantIDs   []string `json:"variantIds"`
}

// DatasetPerson is one person of the dataset's company.
type DatasetPerson struct {
	ID         string `json:"id"`
	ExternalID string `json:"externalId"`
}

// DatasetOrder is one order of the dataset's company.
type DatasetOrder struct {
	ID           string               `json:"id"`
	CollectionID string               `json:"collectionId"`
	Status       api.OrderStatusValue `json:"status"`
}

// Dataset describes the built-in dataset (as loaded at start or reset).
func (e *Emulator) Dataset() DatasetInfo {
	info := DatasetInfo{CompanyID: DatasetCompanyID, Locales: Locales()}
	for _, id := range e.catalog.order {
		c := e.catalog.collections[id]
		info.Collections = append(info.Collections, DatasetCollection(c))
	}
	for _, id := range e.catalog.productIDs {
		p := e.catalog.products[id]
		dp := DatasetProduct{ID: p.ID, CollectionID: p.CollectionID, Title: p.Text["en-US"].Title}
		for _, v := range p.Variants {
			dp.VariantIDs = append(dp.VariantIDs, v.ID)
		}
		info.Products = append(info.Products, dp)
	}
	for _, p := range datasetPeople() {
		info.People = append(info.People, DatasetPerson{ID: p.ID, ExternalID: p.ExternalID})
	}
	for _, o := range datasetOrders() {
		status := o.Status
		if status == "" {
			status = api.OrderStatusValuePlaced
		}
		info.Orders = append(info.Orders, DatasetOrder{ID: o.ID, CollectionID: o.CollectionID, Status: status})
	}
	return info
}
