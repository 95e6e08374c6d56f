package emulator

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"hrsync/api"
)

func createOne(ctx context.Context, f *fixture, ext, key string) (*api.CreatePeopleResponse, error) {
	return f.client.CreatePeopleWithResponse(ctx, &api.CreatePeopleParams{IdempotencyKey: &key},
		api.CreatePeopleRequest{CollectionId: PlainCollectionID, Amount: fp(10), People: []api.InputPerson{{ExternalId: &ext}}})
}

func TestFaults(t *testing.T) {
	ctx := context.Background()
	retry := 7

	kinds := []struct {
		name  string
		fault Fault
		check func(t *testing.T, resp *api.CreatePeopleResponse, err error)
	}{
		{"status 503 with Retry-After", Fault{Status: 503, RetryAfter: &retry}, func(t *testing.T, resp *api.CreatePeopleResponse, err error) {
			if err != nil {
				t.Fatal(err)
			}
			wantError(t, resp.StatusCode(), resp.Body, 503, "unavailable", "injected fault")
			if resp.HTTPResponse.Header.Get("Retry-After") != "7" {
				t.Errorf("Retry-After %q", resp.HTTPResponse.Header.Get("Retry-After"))
			}
		}},
		{"status 429", Fault{Status: 429, RetryAfter: &retry}, func(t *testing.T, resp *api.CreatePeopleResponse, err error) {
			if err != nil {
				t.Fatal(err)
			}
			wantError(t, resp.StatusCode(), resp.Body, 429, "rate_limited", "injected fault")
		}},
		{"status 500", Fault{Status: 500}, func(t *testing.T, resp *api.CreatePeopleResponse, err error) {
			if err != nil {
				t.Fatal(err)
			}
			wantError(t, resp.StatusCode(), resp.Body, 500, "internal_error", "injected fault")
		}},
		{"dropped connection", Fault{Drop: true}, func(t *testing.T, resp *api.CreatePeopleResponse, err error) {
			if err == nil {
				t.Fatalf("a dropped connection answered %d", resp.StatusCode())
			}
		}},
		{"latency", Fault{Latency: Duration(time.Millisecond)}, func(t *testing.T, resp *api.CreatePeopleResponse, err error) {
			if err != nil || resp.StatusCode() != http.StatusCreated {
				t.Fatalf("latency alone must keep the real answer: %v", err)
			}
		}},
	}
	for _, k := range kinds {
		for _, when := range []string{Before, After} {
			t.Run(k.name+" "+when, func(t *testing.T) {
				f := newFixture(t, nil)
				fault := k.fault
				fault.Operation, fault.When, fault.Count = "createPeople", when, 1
				added, err := f.emu.AddFault(fault)
				if err != nil {
					t.Fatal(err)
				}
				resp, err := createOne(ctx, f, "F1", "key-1")
				k.check(t, resp, err)
				p, applied := f.emu.Person(DatasetCompanyID, "F1")
				wantApplied := when == After || (fault.Status == 0 && !fault.Drop)
				if applied != wantApplied {
					t.Errorf("applied %v, want %v", applied, wantApplied)
				}
				log := f.emu.Requests()
				last := log[len(log)-1]
				if !strings.HasPrefix(last.Fault, "#1 "+when) || last.OperationID != "createPeople" || last.IdempotencyKey != "key-1" || last.Dropped != fault.Drop {
					t.Errorf("log entry %+v", last)
				}
				if added.ID != 1 || len(f.emu.Faults()) != 0 {
					t.Errorf("fault %+v, remaining %+v: want id 1, used up", added, f.emu.Faults())
				}
				// The resend: with the same key, an applied request is replayed, not applied twice.
				resp, err = createOne(ctx, f, "F1", "key-1")
				if err != nil || resp.StatusCode() != http.StatusCreated {
					t.Fatalf("resend: %v", err)
				}
				if p, _ = f.emu.Person(DatasetCompanyID, "F1"); p.Balance != 10 {
					t.Errorf("balance after resend %v, want 10", p.Balance)
				}
			})
		}
	}

	t.Run("latency respects the request's context", func(t *testing.T) {
		f := newFixture(t, nil)
		if _, err := f.emu.AddFault(Fault{Operation: "*", Latency: Duration(5 * time.Minute)}); err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		if _, err := createOne(cctx, f, "L1", "k"); err == nil {
			t.Fatal("answered despite minutes of latency")
		}
		if _, ok := f.emu.Person(DatasetCompanyID, "L1"); ok {
			t.Error("applied although the request ended during a before latency")
		}
	})

	t.Run("a fault strikes only its operation", func(t *testing.T) {
		f := newFixture(t, nil)
		if _, err := f.emu.AddFault(Fault{Operation: "listOrders", Status: 500}); err != nil {
			t.Fatal(err)
		}
		prod, err := f.client.GetProductWithResponse(ctx, u(PlainCollectionID), u(NotebookProductID), &api.GetProductParams{})
		if err != nil || prod.StatusCode() != 200 {
			t.Fatalf("getProduct: %v %d", err, prod.StatusCode())
		}
		for range 3 {
			list, err := f.client.ListOrdersWithResponse(ctx, PlainCollectionID, api.OrdersQuery{})
			if err != nil || list.StatusCode() != 500 {
				t.Fatalf("listOrders: %v %d", err, list.StatusCode())
			}
		}
		if fs := f.emu.Faults(); len(fs) != 1 || fs[0].Hits != 3 {
			t.Errorf("faults %+v, want one with 3 hits", fs)
		}
		f.emu.ClearFaults()
		list, err := f.client.ListOrdersWithResponse(ctx, PlainCollectionID, api.OrdersQuery{})
		if err != nil || list.StatusCode() != 200 {
			t.Fatalf("after clearing: %v %d", err, list.StatusCode())
		}
	})

	t.Run("count strikes the next N calls", func(t *testing.T) {
		f := newFixture(t, nil)
		if _, err := f.emu.AddFault(Fault{Operation: "*", Status: 503, Count: 2}); err != nil {
			t.Fatal(err)
		}
		var got []int
		for range 4 {
			resp, err := f.client.GetProductWithResponse(ctx, u(PlainCollectionID), u(NotebookProductID), &api.GetProductParams{})
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, resp.StatusCode())
		}
		if want := []int{503, 503, 200, 200}; mustJSON(t, got) != mustJSON(t, want) {
			t.Errorf("statuses %v, want %v", got, want)
		}
	})

	t.Run("rate strikes a share of calls, the same way for the same seed", func(t *testing.T) {
		run := func(seed int64) []int {
			f := newFixture(t, func(o *Options) { o.Seed = seed })
			if _, err := f.emu.AddFault(Fault{Operation: "getProduct", Status: 500, Rate: 0.3}); err != nil {
				t.Fatal(err)
			}
			var out []int
			for range 100 {
				resp, err := f.client.GetProductWithResponse(ctx, u(PlainCollectionID), u(NotebookProductID), &api.GetProductParams{})
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, resp.StatusCode())
			}
			return out
		}
		a, b, c := run(11), run(11), run(12)
		if mustJSON(t, a) != mustJSON(t, b) {
			t.Error("the same seed struck different calls")
		}
		if mustJSON(t, a) == mustJSON(t, c) {
			t.Error("another seed struck the very same calls")
		}
		hits := strings.Count(mustJSON(t, a), "500")
		if hits == 0 || hits == 100 {
			t.Errorf("rate 0.3 struck %d of 100 calls", hits)
		}
	})

	t.Run("invalid faults are refused", func(t *testing.T) {
		f := newFixture(t, nil)
		for name, fault := range map[string]Fault{
			"unknown operation": {Operation: "deleteEverything", Status: 500},
			"no effect":         {Operation: "*"},
			"status and drop":   {Operation: "*", Status: 500, Drop: true},
			"bad status":        {Operation: "*", Status: 200},
			"bad when":          {Operation: "*", Status: 500, When: "during"},
			"bad rate":          {Operation: "*", Status: 500, Rate: 1.5},
			"negative count":    {Operation: "*", Status: 500, Count: -1},
		} {
			if _, err := f.emu.AddFault(fault); err == nil {
				t.Errorf("%s: accepted", name)
			}
		}
	})
}

func TestResetAndRequestLog(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	if _, err := createOne(ctx, f, "Z9", "key-z9"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.emu.SetOrderStatus(OrderPlacedID, api.OrderStatusValueShipped); err != nil {
		t.Fatal(err)
	}
	if _, err := f.emu.AddFault(Fault{Operation: "*", Status: 500}); err != nil {
		t.Fatal(err)
	}
	_, _, _ = f.do(t, "POST", "/api/ext/v1/collection/"+PlainCollectionID+"/orders/get", tokDataset, "{}")

	t.Run("the log has each call and never the token", func(t *testing.T) {
		log := f.emu.Requests()
		if len(log) != 2 {
			t.Fatalf("log %+v", log)
		}
		first := log[0]
		if first.Method != http.MethodPost || first.Path != "/api/ext/v1/people" || first.OperationID != "createPeople" ||
			first.Status != 201 || first.IdempotencyKey != "key-z9" || !first.Time.Equal(testNow()) {
			t.Errorf("entry %+v", first)
		}
		if log[1].Status != 500 || log[1].Fault == "" {
			t.Errorf("faulted entry %+v", log[1])
		}
		_, _, body := f.do(t, "GET", "/_emulator/requests", "", "")
		if strings.Contains(string(body), tokDataset) || !strings.Contains(string(body), "key-z9") {
			t.Errorf("request log over HTTP: %s", body)
		}
	})

	t.Run("reset goes back to the dataset", func(t *testing.T) {
		f.emu.Reset()
		if _, ok := f.emu.Person(DatasetCompanyID, "Z9"); ok {
			t.Error("Z9 survived the reset")
		}
		st := f.emu.State()
		if len(st.Companies) != 1 || len(st.Companies[0].People) != 4 || len(st.Companies[0].Orders) != 4 || st.Companies[0].Orders[0].Status != api.OrderStatusValuePlaced {
			t.Errorf("state after reset %s", mustJSON(t, st))
		}
		if len(f.emu.Faults()) != 0 || len(f.emu.Requests()) != 0 {
			t.Errorf("faults %v log %v survived the reset", f.emu.Faults(), f.emu.Requests())
		}
		resp, err := createOne(ctx, f, "Z9", "key-z9")
		if err != nil || resp.StatusCode() != http.StatusCreated || resp.HTTPResponse.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("after reset, the key must be new: %v %v", err, resp.HTTPResponse.Header)
		}
	})
}

func TestMalformedInput(t *testing.T) {
	f := newFixture(t, nil)
	people := "/api/ext/v1/people"
	coll := `"collectionId":"` + PlainCollectionID + `"`
	cases := []struct {
		name, body, inMessage string
	}{
		{"empty body", " ", "empty"},
		{"malformed JSON", `{"people":[`, "malformed JSON"},
		{"not an object", `[1,2]`, "want an object"},
		{"trailing data", `{` + coll + `,"people":[{"externalId":"A"}]} {}`, "after the JSON value"},
		{"people missing", `{` + coll + `}`, "people is required"},
		{"people null", `{` + coll + `,"people":null}`, "people is required"},
		{"people empty", `{` + coll + `,"people":[]}`, "at least one"},
		{"collectionId missing", `{"people":[{"externalId":"A"}]}`, "collectionId is required"},
		{"wrong type at top", `{` + coll + `,"people":[{"externalId":"A"}],"amount":"5"}`, "amount: want a number"},
		{"wrong type in a person", `{` + coll + `,"people":[{"externalId":"A"},{"externalId":"B","addBalance":"x"}]}`, "people[1].addBalance: want a number"},
		{"person not an object", `{` + coll + `,"people":["A"]}`, "people[0]: want an object"},
		{"no externalId nor email", `{` + coll + `,"people":[{"firstName":"A"}]}`, "people[0]: externalId or email is required"},
		{"bad date", `{` + coll + `,"people":[{"externalId":"A","birthDate":"31/12/1990"}]}`, "people[0].birthDate"},
		{"impossible date", `{` + coll + `,"people":[{"externalId":"A","startDate":"2023-02-30"}]}`, "people[0].startDate"},
		{"negative balance", `{` + coll + `,"people":[{"externalId":"A","addBalance":-1}]}`, "people[0].addBalance"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, _, body := f.do(t, "POST", people, tokDataset, c.body)
			wantError(t, status, body, http.StatusBadRequest, "invalid_input", c.inMessage)
		})
	}
	t.Run("the body is read as JSON whatever the Content-Type", func(t *testing.T) {
		status, _, body := f.do(t, "POST", people, tokDataset, `{`+coll+`}`, "Content-Type", "application/x-www-form-urlencoded")
		wantError(t, status, body, http.StatusBadRequest, "invalid_input", "people is required")
	})
	if st := f.emu.State(); len(st.Companies[0].People) != 4 {
		t.Errorf("a refused request changed state: %d people", len(st.Companies[0].People))
	}
}

// TestBodyLimit runs without the contract validator: the contract gives 413
// to createPeople only, and the body limit holds on every endpoint.
func TestBodyLimit(t *testing.T) {
	emu, err := New(Options{Tokens: map[string][]string{tokDataset: nil}, MaxBodyBytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{emu: emu, srv: newPlainServer(t, emu)}
	big := `{"collectionId":"` + PlainCollectionID + `","people":[{"externalId":"` + strings.Repeat("x", 2048) + `"}]}`
	for _, path := range []string{"/api/ext/v1/people", "/api/ext/v1/collection/" + PlainCollectionID + "/orders/get", "/_emulator/orders"} {
		t.Run(path, func(t *testing.T) {
			status, _, body := f.do(t, "POST", path, tokDataset, big)
			wantError(t, status, body, http.StatusRequestEntityTooLarge, "payload_too_large", "1024")
		})
	}
}

func TestAdminOverHTTP(t *testing.T) {
	f := newFixture(t, nil)

	t.Run("dataset", func(t *testing.T) {
		status, _, body := f.do(t, "GET", "/_emulator/dataset", "", "")
		var ds DatasetInfo
		if err := json.Unmarshal(body, &ds); err != nil || status != 200 {
			t.Fatalf("%d %s", status, body)
		}
		if ds.CompanyID != DatasetCompanyID || len(ds.Collections) != 2 || !ds.Collections[0].Personalizable || ds.Collections[1].Personalizable ||
			len(ds.Products) != 4 || len(ds.People) != 4 || len(ds.Orders) != 4 || len(ds.Locales) != 7 {
			t.Errorf("dataset %s", body)
		}
	})

	var placed Order
	t.Run("place an order", func(t *testing.T) {
		status, _, body := f.do(t, "POST", "/_emulator/orders", "", `{"collectionId":"`+PlainCollectionID+`","externalId":"E1004","createdAt":"2025-06-01T08:00:00Z","lines":[{"productId":"`+NotebookProductID+`","quantity":4}]}`)
		if status != http.StatusCreated {
			t.Fatalf("%d %s", status, body)
		}
		if err := json.Unmarshal(body, &placed); err != nil {
			t.Fatal(err)
		}
		if placed.UserID != PersonZoeID || placed.LineItems[0].Quantity != 4 || !placed.CreatedAt.Equal(*at("2025-06-01T08:00:00Z")) {
			t.Errorf("placed %s", body)
		}
	})
	t.Run("set status, line status and add a shipment", func(t *testing.T) {
		line := placed.LineItems[0].ID
		steps := []struct{ method, path, body string }{
			{"PATCH", "/_emulator/orders/" + placed.ID, `{"status":"Shipped"}`},
			{"PATCH", "/_emulator/orders/" + placed.ID + "/lines/" + line, `{"status":"shipped"}`},
			{"POST", "/_emulator/orders/" + placed.ID + "/lines/" + line + "/shipments", `{"trackingUrl":"https://t.example.com/Q","trackingNumber":"Q"}`},
		}
		for _, s := range steps {
			if status, _, body := f.do(t, s.method, s.path, "", s.body); status/100 != 2 {
				t.Fatalf("%s %s: %d %s", s.method, s.path, status, body)
			}
		}
		st := f.emu.State()
		o := st.Companies[0].Orders[len(st.Companies[0].Orders)-1]
		if o.Status != api.OrderStatusValueShipped || o.LineItems[0].Status != LineShipped || o.LineItems[0].TrackingNumber != "Q" || len(o.LineItems[0].Shipments) != 1 {
			t.Errorf("order %+v", o)
		}
	})
	t.Run("faults over HTTP", func(t *testing.T) {
		status, _, body := f.do(t, "POST", "/_emulator/faults", "", `{"operation":"getProduct","when":"after","status":503,"retryAfter":2,"latency":"1ms","count":1}`)
		if status != http.StatusCreated {
			t.Fatalf("%d %s", status, body)
		}
		_, _, body = f.do(t, "GET", "/_emulator/faults", "", "")
		var fs []Fault
		if err := json.Unmarshal(body, &fs); err != nil || len(fs) != 1 || fs[0].When != After || time.Duration(fs[0].Latency) != time.Millisecond {
			t.Fatalf("faults %s", body)
		}
		status, _, body = f.do(t, "POST", "/_emulator/faults", "", `{"operation":"getProduct","status":503,"typo":1}`)
		wantError(t, status, body, http.StatusBadRequest, "invalid_input", "typo")
		status, _, body = f.do(t, "POST", "/_emulator/faults", "", `{"operation":"nope","status":503}`)
		wantError(t, status, body, http.StatusBadRequest, "invalid_input", "operation")
		if status, _, _ = f.do(t, "DELETE", "/_emulator/faults/1", "", ""); status != http.StatusNoContent {
			t.Errorf("delete one: %d", status)
		}
		if status, _, _ = f.do(t, "DELETE", "/_emulator/faults/1", "", ""); status != http.StatusNotFound {
			t.Errorf("delete again: %d", status)
		}
		if status, _, _ = f.do(t, "DELETE", "/_emulator/faults", "", ""); status != http.StatusNoContent {
			t.Errorf("clear: %d", status)
		}
	})
	t.Run("state, person, requests, reset", func(t *testing.T) {
		status, _, body := f.do(t, "GET", "/_emulator/state?companyId="+DatasetCompanyID, "", "")
		var st State
		if err := json.Unmarshal(body, &st); err != nil || status != 200 || len(st.Companies) != 1 || len(st.Companies[0].Orders) != 5 {
			t.Fatalf("state %d %s", status, body)
		}
		status, _, body = f.do(t, "GET", "/_emulator/companies/"+DatasetCompanyID+"/people/E1001", "", "")
		var p Person
		if err := json.Unmarshal(body, &p); err != nil || status != 200 || p.ID != PersonJamesID || p.Balance != 50 || len(p.Grants) != 1 {
			t.Fatalf("person %d %s", status, body)
		}
		if status, _, _ = f.do(t, "DELETE", "/_emulator/requests", "", ""); status != http.StatusNoContent {
			t.Errorf("clear requests: %d", status)
		}
		if status, _, _ = f.do(t, "POST", "/_emulator/reset", "", ""); status != http.StatusNoContent {
			t.Errorf("reset: %d", status)
		}
		if n := len(f.emu.State().Companies[0].Orders); n != 4 {
			t.Errorf("%d orders after reset", n)
		}
		status, _, body = f.do(t, "GET", "/_emulator/nothing", "", "")
		wantError(t, status, body, http.StatusNotFound, "not_found", "no test endpoint")
	})
}

// TestConcurrentUse runs calls in parallel (meant for -race): balances
// must add up exactly.
func TestConcurrentUse(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	const workers, calls = 8, 20
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				key := strings.Repeat("k", w+1) + "-" + string(rune('a'+i))
				if resp, err := createOne(ctx, f, "C1", key); err != nil || resp.StatusCode() != http.StatusCreated {
					t.Errorf("create: %v", err)
					return
				}
				if resp, err := f.client.ListOrdersWithResponse(ctx, PlainCollectionID, api.OrdersQuery{}); err != nil || resp.StatusCode() != 200 {
					t.Errorf("list: %v", err)
					return
				}
				_ = f.emu.State()
			}
		}()
	}
	wg.Wait()
	p, _ := f.emu.Person(DatasetCompanyID, "C1")
	if p.Balance != workers*calls*10 || len(p.Grants) != workers*calls {
		t.Errorf("balance %v from %d grants, want %d from %d", p.Balance, len(p.Grants), workers*calls*10, workers*calls)
	}
}
