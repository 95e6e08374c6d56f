package apiclient_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"hrsync/api"
	"hrsync/apiclient"
	"hrsync/emulator"
	"hrsync/internal/contract"
)

// These tests run the client against the emulator over a real loopback
// port. The client's transport is wrapped by the contract validator, so
// every request sent and every answer received is checked against
// api/openapi.yaml.

const (
	token      = "tok-contract-7d41e0-SECRET" // sees the emulator's dataset company
	otherToken = "tok-other-company-SECRET"   // sees another company only
	company    = emulator.DatasetCompanyID
)

type fixture struct {
	emu *emulator.Emulator
	srv *httptest.Server
	c   *apiclient.Client

	mu      sync.Mutex
	retries []apiclient.Operation
}

func (f *fixture) retried() []apiclient.Operation {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.retries)
}

// newFixture starts an emulator (no personalize delay unless opts says) and
// a client for it with fast retries.
func newFixture(t *testing.T, opts func(*emulator.Options), cfg func(*apiclient.Config)) *fixture {
	t.Helper()
	o := emulator.Options{
		Tokens:           map[string][]string{token: nil, otherToken: {"other-company"}},
		PersonalizeDelay: &emulator.DelayRange{},
		Seed:             11,
	}
	if opts != nil {
		opts(&o)
	}
	emu, err := emulator.New(o)
	if err != nil {
		t.Fatalf("emulator: %v", err)
	}
	srv := httptest.NewServer(emu)
	t.Cleanup(srv.Close)
	f := &fixture{emu: emu, srv: srv}
	f.c = newClient(t, srv.URL, token, func(c *apiclient.Config) {
		c.Observer = apiclient.ObserverFuncs{Retry: func(op apiclient.Operation, _ int, _ time.Duration) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.retries = append(f.retries, op)
		}}
		if cfg != nil {
			cfg(c)
		}
	})
	return f
}

// newClient returns a client whose transport validates every exchange.
func newClient(t *testing.T, baseURL, tok string, mutate func(*apiclient.Config)) *apiclient.Client {
	t.Helper()
	v, err := contract.New()
	if err != nil {
		t.Fatalf("contract: %v", err)
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(base.CloseIdleConnections)
	cfg := apiclient.Config{
		BaseURL:          baseURL,
		Token:            tok,
		UserAgentVersion: "test",
		HTTPClient:       &http.Client{Transport: v.Transport(base, func(err error) { t.Error(err) })},
		RatePerSecond:    math.Inf(1),
		MaxAttempts:      4,
		BackoffBase:      time.Millisecond,
		BackoffMax:       5 * time.Millisecond,
		MaxRetryAfter:    5 * time.Millisecond,
		Timeout:          5 * time.Second,
	}
	if mutate != nil {
		mutate(&cfg)
	}
	c, err := apiclient.New(cfg)
	if err != nil {
		t.Fatalf("apiclient.New: %v", err)
	}
	return c
}

func (f *fixture) fault(t *testing.T, fl emulator.Fault) {
	t.Helper()
	if _, err := f.emu.AddFault(fl); err != nil {
		t.Fatalf("add fault: %v", err)
	}
}

// requests counts the requests the emulator logged for one operation.
func (f *fixture) requests(op apiclient.Operation) int {
	n := 0
	for _, r := range f.emu.Requests() {
		if r.OperationID == string(op) {
			n++
		}
	}
	return n
}

// grants returns the grants the emulator holds for a person, by externalId.
func (f *fixture) grants(t *testing.T, externalID string) int {
	t.Helper()
	p, ok := f.emu.Person(company, externalID)
	if !ok {
		return 0
	}
	return len(p.Grants)
}

func newPerson(externalID string, balance float64) api.CreatePeopleRequest {
	email := strings.ToLower(externalID) + "@example.test"
	first, last := "Test", "Person"
	return api.CreatePeopleRequest{
		CollectionId: emulator.PlainCollectionID,
		CompanyId:    ptr(company),
		People: []api.InputPerson{{
			ExternalId: &externalID, Email: &email, FirstName: &first, LastName: &last, AddBalance: &balance,
		}},
	}
}

func ptr[T any](v T) *T { return &v }

func retryAfter(s int) *int { return &s }

// checkError asserts err is an *apiclient.Error with no token in any form.
func checkError(t *testing.T, err error) *apiclient.Error {
	t.Helper()
	if err == nil {
		t.Fatal("got no error")
	}
	e, ok := apiclient.AsError(err)
	if !ok {
		t.Fatalf("error %T is not an *apiclient.Error", err)
	}
	for _, s := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
		if strings.Contains(s, token) || strings.Contains(s, otherToken) {
			t.Errorf("error text of %d bytes holds a token", len(s))
		}
	}
	return e
}

func TestContractOperations(t *testing.T) {
	f := newFixture(t, nil, nil)
	ctx := context.Background()

	t.Run("create people", func(t *testing.T) {
		people, err := f.c.CreatePeople(ctx, newPerson("T-100", 10), "key-T-100")
		if err != nil {
			t.Fatalf("CreatePeople: %v", err)
		}
		if len(people) != 1 || people[0].Id == "" {
			t.Fatalf("people = %+v", people)
		}
		p, ok := f.emu.Person(company, "T-100")
		if !ok || p.ID != people[0].Id || p.Balance != 10 || len(p.Grants) != 1 || p.Grants[0].IdempotencyKey != "key-T-100" {
			t.Errorf("emulator holds %+v", p)
		}
	})
	t.Run("idempotency key replayed", func(t *testing.T) {
		first, err := f.c.CreatePeople(ctx, newPerson("T-101", 5), "key-T-101")
		if err != nil {
			t.Fatalf("first CreatePeople: %v", err)
		}
		again, err := f.c.CreatePeople(ctx, newPerson("T-101", 5), "key-T-101")
		if err != nil {
			t.Fatalf("second CreatePeople: %v", err)
		}
		if fmt.Sprint(first) != fmt.Sprint(again) {
			t.Errorf("replayed answer %v differs from %v", again, first)
		}
		if n := f.grants(t, "T-101"); n != 1 {
			t.Errorf("%d grants after a replay, want 1", n)
		}
		keys := 0
		for _, r := range f.emu.Requests() {
			if r.IdempotencyKey == "key-T-101" {
				keys++
			}
		}
		if keys != 2 {
			t.Errorf("the emulator saw the key on %d requests, want 2", keys)
		}
	})
	t.Run("personalize", func(t *testing.T) {
		first, last, dept := "Test", "Person", "Sales"
		start := time.Date(2020, 3, 2, 0, 0, 0, 0, time.UTC)
		req := api.PersonalizeRequest{CompanyId: company, SourceFields: api.SourceFields{
			FirstName: &first, LastName: &last, Department: &dept, StartDate: &start,
		}}
		res, err := f.c.Personalize(ctx, emulator.PersonalizableCollectionID, req)
		if err != nil {
			t.Fatalf("Personalize: %v", err)
		}
		if res.Sha == "" || res.Status != api.ProcessingStatusPending {
			t.Errorf("result: sha %q status %s", res.Sha, res.Status)
		}
		again, err := f.c.Personalize(ctx, emulator.PersonalizableCollectionID, req)
		if err != nil {
			t.Fatalf("second Personalize: %v", err)
		}
		if again.Sha != res.Sha || again.Status != api.ProcessingStatusDone {
			t.Errorf("second result: sha equal %t, status %s", again.Sha == res.Sha, again.Status)
		}
	})
	t.Run("get product", func(t *testing.T) {
		p, err := f.c.GetProduct(ctx, emulator.PersonalizableCollectionID, emulator.BottleProductID,
			apiclient.ProductOptions{AcceptLanguage: "fr-CA, fr;q=0.8", CountryCode: "CA", FirstName: "Test",
				StartDate: time.Date(2020, 3, 2, 0, 0, 0, 0, time.UTC)})
		if err != nil {
			t.Fatalf("GetProduct: %v", err)
		}
		if p.Id != emulator.BottleProductID || p.Title == "" || len(p.Variants) == 0 {
			t.Errorf("product %s %q with %d variants", p.Id, p.Title, len(p.Variants))
		}
	})
	t.Run("get order status", func(t *testing.T) {
		st, err := f.c.GetOrderStatus(ctx, emulator.PlainCollectionID, emulator.OrderShippedID, company)
		if err != nil {
			t.Fatalf("GetOrderStatus: %v", err)
		}
		if st.Id != emulator.OrderShippedID || st.Status != api.OrderStatusValueShipped || len(st.LineItems) == 0 {
			t.Errorf("status %+v", st)
		}
	})
	t.Run("list orders", func(t *testing.T) {
		list, err := f.c.ListOrders(ctx, emulator.PersonalizableCollectionID, company, nil,
			time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC))
		if err != nil {
			t.Fatalf("ListOrders: %v", err)
		}
		orders := list.Orders
		if list.OutsideWindow != 0 || list.CountBelowRows != 0 {
			t.Errorf("the emulator's answers made no sense: %d rows outside the window, %d counts below the rows", list.OutsideWindow, list.CountBelowRows)
		}
		var ids []string
		for _, o := range orders {
			ids = append(ids, *o.Id)
		}
		// The dataset's orders at 23:59:59 and at 00:00:00, in creation order.
		want := []string{emulator.OrderPendingID, emulator.OrderPartiallyShippedID}
		if !slices.Equal(ids, want) {
			t.Errorf("orders %v, want %v", ids, want)
		}
	})
	if len(f.retried()) != 0 {
		t.Errorf("retries without faults: %v", f.retried())
	}
}

func TestContractErrorMapping(t *testing.T) {
	f := newFixture(t, nil, nil)
	ctx := context.Background()
	stranger := newClient(t, f.srv.URL, "tok-unknown-SECRET", nil)
	tests := []struct {
		name       string
		call       func() error
		wantStatus int
		wantCode   string
	}{
		{"400 invalid input", func() error {
			req := newPerson("T-200", -5) // a negative balance is invalid
			_, err := f.c.CreatePeople(ctx, req, "key-T-200")
			return err
		}, 400, "invalid_input"},
		{"401 unknown token", func() error {
			_, err := stranger.GetOrderStatus(ctx, emulator.PlainCollectionID, emulator.OrderShippedID, company)
			return err
		}, 401, "unauthorized"},
		{"403 company not allowed", func() error {
			_, err := f.c.GetOrderStatus(ctx, emulator.PlainCollectionID, emulator.OrderShippedID, "other-company")
			return err
		}, 403, "forbidden"},
		{"404 unknown product", func() error {
			_, err := f.c.GetProduct(ctx, emulator.PlainCollectionID, "30000000-0000-4000-8000-0000000000ff", apiclient.ProductOptions{})
			return err
		}, 404, "not_found"},
		{"422 collection not personalizable", func() error {
			_, err := f.c.Personalize(ctx, emulator.PlainCollectionID, api.PersonalizeRequest{CompanyId: company})
			return err
		}, 422, "not_personalizable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := checkError(t, tt.call())
			if e.Status != tt.wantStatus || e.Code != tt.wantCode || e.Message == "" {
				t.Errorf("status %d code %q message %q; want %d %q", e.Status, e.Code, e.Message, tt.wantStatus, tt.wantCode)
			}
			if e.Outcome != apiclient.OutcomeNotApplied || e.Retryable || e.Attempts != 1 {
				t.Errorf("outcome %s retryable %t attempts %d", e.Outcome, e.Retryable, e.Attempts)
			}
			if !strings.Contains(e.Error(), tt.wantCode) || apiclient.StatusCode(e) != tt.wantStatus {
				t.Errorf("error text %q lacks the code", e.Error())
			}
		})
	}
	if n := f.grants(t, "T-200"); n != 0 {
		t.Errorf("refused create left %d grants", n)
	}
}

func TestContractFaults(t *testing.T) {
	t.Run("429 with Retry-After then success on a read", func(t *testing.T) {
		f := newFixture(t, nil, nil)
		ctx := t.Context()
		f.fault(t, emulator.Fault{Operation: "getProduct", Status: 429, RetryAfter: retryAfter(1), Count: 1})
		if _, err := f.c.GetProduct(ctx, emulator.PlainCollectionID, emulator.NotebookProductID, apiclient.ProductOptions{}); err != nil {
			t.Fatalf("GetProduct: %v", err)
		}
		if n := f.requests(apiclient.OpGetProduct); n != 2 || len(f.retried()) != 1 {
			t.Errorf("%d requests, retries %v", n, f.retried())
		}
	})
	t.Run("429 with Retry-After then success on a write", func(t *testing.T) {
		f := newFixture(t, nil, nil)
		ctx := t.Context()
		f.fault(t, emulator.Fault{Operation: "createPeople", Status: 429, RetryAfter: retryAfter(1), Count: 1})
		if _, err := f.c.CreatePeople(ctx, newPerson("T-300", 10), "key-T-300"); err != nil {
			t.Fatalf("CreatePeople: %v", err)
		}
		if n := f.requests(apiclient.OpCreatePeople); n != 2 || f.grants(t, "T-300") != 1 {
			t.Errorf("%d requests, %d grants", n, f.grants(t, "T-300"))
		}
	})
	t.Run("503 with Retry-After on a write is retried", func(t *testing.T) {
		f := newFixture(t, nil, nil)
		ctx := t.Context()
		f.fault(t, emulator.Fault{Operation: "createPeople", Status: 503, RetryAfter: retryAfter(2), Count: 2})
		if _, err := f.c.CreatePeople(ctx, newPerson("T-301", 10), "key-T-301"); err != nil {
			t.Fatalf("CreatePeople: %v", err)
		}
		if n := f.requests(apiclient.OpCreatePeople); n != 3 || f.grants(t, "T-301") != 1 {
			t.Errorf("%d requests, %d grants", n, f.grants(t, "T-301"))
		}
	})
	t.Run("503 without Retry-After on a write is not retried", func(t *testing.T) {
		f := newFixture(t, nil, nil)
		ctx := t.Context()
		f.fault(t, emulator.Fault{Operation: "createPeople", Status: 503, Count: 1})
		_, err := f.c.CreatePeople(ctx, newPerson("T-302", 10), "key-T-302")
		e := checkError(t, err)
		if e.Outcome != apiclient.OutcomeUnknown || f.requests(apiclient.OpCreatePeople) != 1 {
			t.Errorf("error %v after %d requests", e, f.requests(apiclient.OpCreatePeople))
		}
	})
	t.Run("500 after applying a write: not retried, outcome unknown", func(t *testing.T) {
		f := newFixture(t, nil, nil)
		ctx := t.Context()
		f.fault(t, emulator.Fault{Operation: "createPeople", When: emulator.After, Status: 500, Count: 1})
		_, err := f.c.CreatePeople(ctx, newPerson("T-303", 10), "key-T-303")
		e := checkError(t, err)
		if e.Status != 500 || e.Outcome != apiclient.OutcomeUnknown || !apiclient.IsOutcomeUnknown(err) || e.Attempts != 1 {
			t.Errorf("error %v", e)
		}
		if n := f.requests(apiclient.OpCreatePeople); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
		if n := f.grants(t, "T-303"); n != 1 {
			t.Errorf("the emulator applied %d grants; the fault came after applying, want 1", n)
		}
	})
	t.Run("500 before applying a write: not retried, outcome unknown", func(t *testing.T) {
		f := newFixture(t, nil, nil)
		ctx := t.Context()
		f.fault(t, emulator.Fault{Operation: "createPeople", Status: 500, Count: 1})
		_, err := f.c.CreatePeople(ctx, newPerson("T-304", 10), "key-T-304")
		if e := checkError(t, err); e.Outcome != apiclient.OutcomeUnknown || f.requests(apiclient.OpCreatePeople) != 1 {
			t.Errorf("error %v", e)
		}
		if n := f.grants(t, "T-304"); n != 0 {
			t.Errorf("%d grants", n)
		}
	})
	t.Run("dropped connection after applying a write: not retried, outcome unknown", func(t *testing.T) {
		f := newFixture(t, nil, nil)
		ctx := t.Context()
		// A first call leaves a keep-alive connection that the write reuses:
		// net/http must not replay the write on its own either.
		if _, err := f.c.GetOrderStatus(ctx, emulator.PlainCollectionID, emulator.OrderShippedID, company); err != nil {
			t.Fatalf("warm-up: %v", err)
		}
		f.fault(t, emulator.Fault{Operation: "createPeople", When: emulator.After, Drop: true, Count: 1})
		_, err := f.c.CreatePeople(ctx, newPerson("T-305", 10), "key-T-305")
		e := checkError(t, err)
		if e.Status != 0 || e.Outcome != apiclient.OutcomeUnknown || e.Attempts != 1 || !e.Retryable {
			t.Errorf("error %v (retryable %t)", e, e.Retryable)
		}
		if n := f.requests(apiclient.OpCreatePeople); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
		if n := f.grants(t, "T-305"); n != 1 {
			t.Errorf("%d grants, want 1", n)
		}
	})
	t.Run("dropped connection on a read is retried", func(t *testing.T) {
		f := newFixture(t, nil, nil)
		ctx := t.Context()
		f.fault(t, emulator.Fault{Operation: "getOrderStatus", Drop: true, Count: 2})
		st, err := f.c.GetOrderStatus(ctx, emulator.PlainCollectionID, emulator.OrderPlacedID, company)
		if err != nil {
			t.Fatalf("GetOrderStatus: %v", err)
		}
		if st.Status != api.OrderStatusValuePlaced || f.requests(apiclient.OpGetOrderStatus) != 3 {
			t.Errorf("status %s after %d requests", st.Status, f.requests(apiclient.OpGetOrderStatus))
		}
	})
	t.Run("dropped connection on orders/get is retried", func(t *testing.T) {
		f := newFixture(t, nil, nil)
		ctx := t.Context()
		f.fault(t, emulator.Fault{Operation: "listOrders", Drop: true, Count: 1})
		list, err := f.c.ListOrders(ctx, emulator.PlainCollectionID, company, nil,
			time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC))
		if err != nil {
			t.Fatalf("ListOrders: %v", err)
		}
		orders := list.Orders
		if list.OutsideWindow != 0 || list.CountBelowRows != 0 {
			t.Errorf("the emulator's answers made no sense: %d rows outside the window, %d counts below the rows", list.OutsideWindow, list.CountBelowRows)
		}
		if len(orders) != 2 || f.requests(apiclient.OpListOrders) != 2 {
			t.Errorf("%d orders after %d requests", len(orders), f.requests(apiclient.OpListOrders))
		}
	})
	t.Run("latency beyond the timeout on a write: outcome unknown", func(t *testing.T) {
		f := newFixture(t, nil, func(c *apiclient.Config) { c.Timeout = 300 * time.Millisecond })
		ctx := t.Context()
		f.fault(t, emulator.Fault{Operation: "createPeople", When: emulator.After, Latency: emulator.Duration(time.Minute), Count: 1})
		_, err := f.c.CreatePeople(ctx, newPerson("T-306", 10), "key-T-306")
		e := checkError(t, err)
		if !errors.Is(err, context.DeadlineExceeded) || e.Outcome != apiclient.OutcomeUnknown || e.Attempts != 1 {
			t.Errorf("error %v", e)
		}
		if !strings.Contains(err.Error(), "no answer within 300ms") {
			t.Errorf("error %q does not name the timeout", err)
		}
		if n := f.grants(t, "T-306"); n != 1 {
			t.Errorf("%d grants, want 1 (applied before the latency)", n)
		}
	})
	t.Run("latency beyond the timeout on a read is retried", func(t *testing.T) {
		f := newFixture(t, nil, func(c *apiclient.Config) { c.Timeout = 300 * time.Millisecond })
		ctx := t.Context()
		f.fault(t, emulator.Fault{Operation: "getProduct", Latency: emulator.Duration(time.Minute), Count: 1})
		if _, err := f.c.GetProduct(ctx, emulator.PlainCollectionID, emulator.NotebookProductID, apiclient.ProductOptions{}); err != nil {
			t.Fatalf("GetProduct: %v", err)
		}
		if n := f.requests(apiclient.OpGetProduct); n != 2 {
			t.Errorf("%d requests, want 2", n)
		}
	})
	t.Run("personalize has its own, longer timeout", func(t *testing.T) {
		slow := emulator.DelayRange{Min: 300 * time.Millisecond, Max: 300 * time.Millisecond}
		f := newFixture(t, func(o *emulator.Options) { o.PersonalizeDelay = &slow }, func(c *apiclient.Config) {
			c.Timeout = 50 * time.Millisecond
			c.PersonalizeTimeout = 10 * time.Second
		})
		ctx := t.Context()
		first := "Test"
		res, err := f.c.Personalize(ctx, emulator.PersonalizableCollectionID,
			api.PersonalizeRequest{CompanyId: company, SourceFields: api.SourceFields{FirstName: &first}})
		if err != nil {
			t.Fatalf("Personalize: %v", err)
		}
		if res.Status != api.ProcessingStatusPending || f.requests(apiclient.OpPersonalize) != 1 {
			t.Errorf("status %s after %d requests", res.Status, f.requests(apiclient.OpPersonalize))
		}
	})
	t.Run("connection refused: retried, then not applied", func(t *testing.T) {
		f := newFixture(t, nil, nil)
		ctx := t.Context()
		f.srv.Close() // the port now refuses connections
		_, err := f.c.CreatePeople(ctx, newPerson("T-307", 10), "key-T-307")
		e := checkError(t, err)
		if e.Outcome != apiclient.OutcomeNotApplied || !apiclient.IsNotApplied(err) || e.Attempts != 4 || len(f.retried()) != 3 {
			t.Errorf("error %v after %d attempts, retries %v", e, e.Attempts, f.retried())
		}
		if !strings.Contains(err.Error(), "not applied") {
			t.Errorf("error %q does not say the request was not applied", err)
		}
	})
}

func TestContractOrdersWindowSplitting(t *testing.T) {
	ctx := context.Background()
	const maxRows = 3
	f := newFixture(t, func(o *emulator.Options) { o.OrdersMaxRows = maxRows }, func(c *apiclient.Config) { c.OrdersUserChunk = 2 })
	users := []string{emulator.PersonJamesID, emulator.PersonJeanLucID, emulator.PersonAnaID, emulator.PersonZoeID}
	first := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	last := time.Date(2024, 3, 20, 0, 0, 0, 0, time.UTC)

	place := func(user string, at time.Time) string {
		t.Helper()
		o, err := f.emu.PlaceOrder(emulator.PlaceOrder{
			CollectionID: emulator.PlainCollectionID, UserID: user, CreatedAt: &at,
			Lines: []emulator.PlaceOrderLine{{ProductID: emulator.NotebookProductID}},
		})
		if err != nil {
			t.Fatalf("place order: %v", err)
		}
		return o.ID
	}
	// Every user orders on every day of the window, up to maxRows times a
	// day (one user on one day never overflows), at the edges of the day too.
	want := map[string]string{} // order id -> user
	clock := []time.Duration{0, 13*time.Hour + 7*time.Minute, day - time.Second}
	for d := first; !d.After(last); d = d.AddDate(0, 0, 1) {
		for i, u := range users {
			for k := 0; k <= (d.Day()+i)%maxRows; k++ {
				want[place(u, d.Add(clock[k]))] = u
			}
		}
	}
	// Just outside the window: must not be listed.
	outside := []string{
		place(users[0], first.Add(-time.Second)),    // 23:59:59 the day before
		place(users[1], last.Add(day)),              // 00:00:00 the day after
		place(users[2], first.AddDate(0, 0, -1)),    // midnight the day before
		place(users[3], last.Add(day+12*time.Hour)), // noon the day after
	}

	check := func(t *testing.T, got []api.Order, wantIDs map[string]bool) {
		t.Helper()
		seen := map[string]bool{}
		for _, o := range got {
			if seen[*o.Id] {
				t.Errorf("order %s listed twice", *o.Id)
			}
			seen[*o.Id] = true
			if !wantIDs[*o.Id] {
				t.Errorf("order %s (created %s) should not be listed", *o.Id, o.CreatedAt.Format(time.RFC3339))
			}
		}
		for id := range wantIDs {
			if !seen[id] {
				t.Errorf("order %s is missing", id)
			}
		}
		if !slices.IsSortedFunc(got, func(a, b api.Order) int { return a.CreatedAt.Compare(*b.CreatedAt) }) {
			t.Error("orders are not in creation order")
		}
	}

	t.Run("all users", func(t *testing.T) {
		before := f.requests(apiclient.OpListOrders)
		list, err := f.c.ListOrders(ctx, emulator.PlainCollectionID, company, users, first, last)
		if err != nil {
			t.Fatalf("ListOrders: %v", err)
		}
		got := list.Orders
		if list.OutsideWindow != 0 || list.CountBelowRows != 0 {
			t.Errorf("the emulator's answers made no sense: %d rows outside the window, %d counts below the rows", list.OutsideWindow, list.CountBelowRows)
		}
		wantIDs := map[string]bool{}
		for id := range want {
			wantIDs[id] = true
		}
		check(t, got, wantIDs)
		if len(got) != len(want) {
			t.Errorf("%d orders, want %d", len(got), len(want))
		}
		if n := f.requests(apiclient.OpListOrders) - before; n <= len(want)/maxRows {
			t.Errorf("only %d requests for %d orders at %d rows each: no splitting?", n, len(want), maxRows)
		}
	})
	t.Run("some users, window given in another time zone", func(t *testing.T) {
		subset := []string{users[1], users[3]}
		tz := time.FixedZone("UTC-8", -8*3600)
		// The calendar days are read in the times' own zone: 1 to 20 March.
		list, err := f.c.ListOrders(ctx, emulator.PlainCollectionID, company, subset,
			time.Date(2024, 3, 1, 20, 0, 0, 0, tz), time.Date(2024, 3, 20, 23, 0, 0, 0, tz))
		if err != nil {
			t.Fatalf("ListOrders: %v", err)
		}
		got := list.Orders
		if list.OutsideWindow != 0 || list.CountBelowRows != 0 {
			t.Errorf("the emulator's answers made no sense: %d rows outside the window, %d counts below the rows", list.OutsideWindow, list.CountBelowRows)
		}
		wantIDs := map[string]bool{}
		for id, u := range want {
			if slices.Contains(subset, u) {
				wantIDs[id] = true
			}
		}
		check(t, got, wantIDs)
	})
	t.Run("one day", func(t *testing.T) {
		d := first.AddDate(0, 0, 4)
		list, err := f.c.ListOrders(ctx, emulator.PlainCollectionID, company, users, d, d)
		if err != nil {
			t.Fatalf("ListOrders: %v", err)
		}
		got := list.Orders
		if list.OutsideWindow != 0 || list.CountBelowRows != 0 {
			t.Errorf("the emulator's answers made no sense: %d rows outside the window, %d counts below the rows", list.OutsideWindow, list.CountBelowRows)
		}
		wantIDs := map[string]bool{}
		st := f.emu.State()
		for _, c := range st.Companies {
			for _, o := range c.Orders {
				if want[o.ID] != "" && o.CreatedAt.Truncate(day).Equal(d) {
					wantIDs[o.ID] = true
				}
			}
		}
		check(t, got, wantIDs)
	})
	t.Run("outside orders exist", func(t *testing.T) {
		// Guards the test itself: the orders just outside are real orders.
		list, err := f.c.ListOrders(ctx, emulator.PlainCollectionID, company, users, first.AddDate(0, 0, -1), last.AddDate(0, 0, 1))
		if err != nil {
			t.Fatalf("ListOrders: %v", err)
		}
		got := list.Orders
		if list.OutsideWindow != 0 || list.CountBelowRows != 0 {
			t.Errorf("the emulator's answers made no sense: %d rows outside the window, %d counts below the rows", list.OutsideWindow, list.CountBelowRows)
		}
		ids := map[string]bool{}
		for _, o := range got {
			ids[*o.Id] = true
		}
		for _, id := range outside {
			if !ids[id] {
				t.Errorf("order %s just outside the window is not listed by a wider window", id)
			}
		}
	})
	t.Run("one user over the limit on one day is an error", func(t *testing.T) {
		d := time.Date(2024, 4, 2, 0, 0, 0, 0, time.UTC)
		for k := range maxRows + 1 {
			place(users[0], d.Add(time.Duration(k)*time.Hour))
		}
		_, err := f.c.ListOrders(ctx, emulator.PlainCollectionID, company, users, d.AddDate(0, 0, -3), d.AddDate(0, 0, 3))
		e := checkError(t, err)
		if !errors.Is(err, apiclient.ErrOrdersOverflow) || e.Retryable {
			t.Errorf("error %v", e)
		}
		if !strings.Contains(err.Error(), "2024-04-02") || !strings.Contains(err.Error(), "3 of 4 orders") {
			t.Errorf("error %q does not say which day overflowed and by how much", err)
		}
	})
}

const day = 24 * time.Hour
