package emulator

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"hrsync/api"
	"hrsync/emulator/personalization"
)

func TestAuth(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	peopleBody := `{"collectionId":"` + PlainCollectionID + `","people":[{"externalId":"X1","email":"x1@example.com"}]}`

	calls := []struct {
		name, method, path, body string
	}{
		{"createPeople", "POST", "/api/ext/v1/people", peopleBody},
		{"listOrders", "POST", "/api/ext/v1/collection/" + PlainCollectionID + "/orders/get", `{}`},
		{"getOrderStatus", "GET", "/api/ext/v1/collection/" + PlainCollectionID + "/orders/" + OrderPlacedID + "?companyId=" + DatasetCompanyID, ""},
		{"getProduct", "GET", "/api/ext/v1/collection/" + PlainCollectionID + "/product/" + NotebookProductID, ""},
		{"personalizeCollection", "POST", "/api/ext/v1/collection/" + PersonalizableCollectionID + "/personalize", `{"companyId":"` + DatasetCompanyID + `","sourceFields":{"firstName":"A"}}`},
	}
	for _, c := range calls {
		t.Run(c.name+" without a token is 401", func(t *testing.T) {
			status, h, body := f.do(t, c.method, c.path, "", c.body)
			wantError(t, status, body, http.StatusUnauthorized, "unauthorized", "token")
			if !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("WWW-Authenticate = %q", h.Get("WWW-Authenticate"))
			}
		})
		t.Run(c.name+" with an unknown token is 401", func(t *testing.T) {
			status, _, body := f.do(t, c.method, c.path, "not-a-token", c.body)
			wantError(t, status, body, http.StatusUnauthorized, "unauthorized", "token")
			if strings.Contains(string(body), "not-a-token") {
				t.Errorf("the answer repeats the token: %s", body)
			}
		})
	}
	t.Run("a scheme other than Bearer is 401", func(t *testing.T) {
		status, _, body := f.do(t, "GET", calls[3].path, "", "", "Authorization", "Basic "+tokDataset)
		wantError(t, status, body, http.StatusUnauthorized, "unauthorized", "token")
	})
	t.Run("the bearer scheme is case-insensitive", func(t *testing.T) {
		status, _, body := f.do(t, "GET", calls[3].path, "", "", "Authorization", "bearer "+tokDataset)
		if status != http.StatusOK {
			t.Fatalf("status %d: %s", status, body)
		}
	})

	forbidden := []struct {
		name, method, path, body string
	}{
		{"createPeople", "POST", "/api/ext/v1/people", `{"companyId":"` + DatasetCompanyID + `","collectionId":"` + PlainCollectionID + `","people":[{"externalId":"X"}]}`},
		{"listOrders", "POST", "/api/ext/v1/collection/" + PlainCollectionID + "/orders/get", `{"companyId":"` + DatasetCompanyID + `"}`},
		{"getOrderStatus", "GET", "/api/ext/v1/collection/" + PlainCollectionID + "/orders/" + OrderPlacedID + "?companyId=" + DatasetCompanyID, ""},
		{"personalizeCollection", "POST", "/api/ext/v1/collection/" + PersonalizableCollectionID + "/personalize", `{"companyId":"` + DatasetCompanyID + `","sourceFields":{"firstName":"A"}}`},
	}
	for _, c := range forbidden {
		t.Run(c.name+" for a company the token does not see is 403", func(t *testing.T) {
			status, _, body := f.do(t, c.method, c.path, tokAcme, c.body)
			wantError(t, status, body, http.StatusForbidden, "forbidden", "companyId")
		})
	}

	t.Run("a token that sees several companies must name one", func(t *testing.T) {
		status, _, body := f.do(t, "POST", "/api/ext/v1/collection/"+PlainCollectionID+"/orders/get", tokMulti, `{}`)
		wantError(t, status, body, http.StatusBadRequest, "invalid_input", "companyId is required")
	})
	t.Run("a token given alone sees the dataset's company", func(t *testing.T) {
		resp, err := f.client.ListOrdersWithResponse(ctx, PlainCollectionID, api.OrdersQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if resp.JSON200 == nil || *resp.JSON200.Count != 2 {
			t.Fatalf("status %d body %s, want the dataset's 2 plain orders", resp.StatusCode(), resp.Body)
		}
	})
	t.Run("a token's second company is its own namespace", func(t *testing.T) {
		c := clientFor(t, f.srv.URL, tokMulti)
		resp, err := c.ListOrdersWithResponse(ctx, PlainCollectionID, api.OrdersQuery{CompanyId: sp(acme)})
		if err != nil {
			t.Fatal(err)
		}
		if resp.JSON200 == nil || *resp.JSON200.Count != 0 || len(*resp.JSON200.Data) != 0 {
			t.Fatalf("status %d body %s, want no orders", resp.StatusCode(), resp.Body)
		}
	})
}

func TestNotFound(t *testing.T) {
	f := newFixture(t, nil)
	unknown := "99999999-0000-4000-8000-000000000000"
	cases := []struct {
		name, method, path, body string
	}{
		{"people: unknown collection", "POST", "/api/ext/v1/people", `{"collectionId":"` + unknown + `","people":[{"externalId":"X"}]}`},
		{"orders list: unknown collection", "POST", "/api/ext/v1/collection/nope/orders/get", `{}`},
		{"order status: unknown collection", "GET", "/api/ext/v1/collection/" + unknown + "/orders/" + OrderPlacedID + "?companyId=" + DatasetCompanyID, ""},
		{"order status: unknown order", "GET", "/api/ext/v1/collection/" + PlainCollectionID + "/orders/" + unknown + "?companyId=" + DatasetCompanyID, ""},
		{"order status: order of another collection", "GET", "/api/ext/v1/collection/" + PersonalizableCollectionID + "/orders/" + OrderPlacedID + "?companyId=" + DatasetCompanyID, ""},
		{"product: unknown collection", "GET", "/api/ext/v1/collection/" + unknown + "/product/" + NotebookProductID, ""},
		{"product: unknown product", "GET", "/api/ext/v1/collection/" + PlainCollectionID + "/product/" + unknown, ""},
		{"product: product of another collection", "GET", "/api/ext/v1/collection/" + PlainCollectionID + "/product/" + BottleProductID, ""},
		{"personalize: unknown collection", "POST", "/api/ext/v1/collection/nope/personalize", `{"companyId":"` + DatasetCompanyID + `","sourceFields":{"firstName":"A"}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, _, body := f.do(t, c.method, c.path, tokDataset, c.body)
			wantError(t, status, body, http.StatusNotFound, "not_found", "not found")
		})
	}
	t.Run("order status: order of another company", func(t *testing.T) {
		status, _, body := f.do(t, "GET", "/api/ext/v1/collection/"+PlainCollectionID+"/orders/"+OrderPlacedID+"?companyId="+acme, tokMulti, "")
		wantError(t, status, body, http.StatusNotFound, "not_found", "not found")
	})
	t.Run("an endpoint outside the contract", func(t *testing.T) {
		status, _, body := f.do(t, "GET", "/api/ext/v1/nothing", tokDataset, "")
		wantError(t, status, body, http.StatusNotFound, "not_found", "no endpoint")
	})
}

func TestOrderStatusNeedsCompanyID(t *testing.T) {
	f := newFixture(t, nil)
	base := "/api/ext/v1/collection/" + PlainCollectionID + "/orders/" + OrderPlacedID
	t.Run("missing", func(t *testing.T) {
		status, _, body := f.do(t, "GET", base, tokDataset, "")
		wantError(t, status, body, http.StatusBadRequest, "invalid_input", "companyId")
	})
	t.Run("empty", func(t *testing.T) {
		status, _, body := f.do(t, "GET", base+"?companyId=", tokDataset, "")
		wantError(t, status, body, http.StatusBadRequest, "invalid_input", "companyId")
	})
	t.Run("given", func(t *testing.T) {
		resp, err := f.client.GetOrderStatusWithResponse(context.Background(), u(PlainCollectionID), u(OrderPlacedID), &api.GetOrderStatusParams{CompanyId: DatasetCompanyID})
		if err != nil {
			t.Fatal(err)
		}
		if resp.JSON200 == nil || resp.JSON200.Status != api.OrderStatusValuePlaced {
			t.Fatalf("status %d body %s", resp.StatusCode(), resp.Body)
		}
	})
	t.Run("malformed ids name the parameter", func(t *testing.T) {
		status, _, body := f.do(t, "GET", "/api/ext/v1/collection/"+PlainCollectionID+"/orders/not-a-uuid?companyId=x", tokDataset, "")
		wantError(t, status, body, http.StatusBadRequest, "invalid_input", "orderId")
	})
}

func TestCreatePeople(t *testing.T) {
	ctx := context.Background()

	create := func(t *testing.T, f *fixture, key string, req api.CreatePeopleRequest) []api.ReturnedPerson {
		t.Helper()
		params := &api.CreatePeopleParams{}
		if key != "" {
			params.IdempotencyKey = &key
		}
		resp, err := f.client.CreatePeopleWithResponse(ctx, params, req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode() != http.StatusCreated || resp.JSON201 == nil {
			t.Fatalf("status %d body %s", resp.StatusCode(), resp.Body)
		}
		return *resp.JSON201
	}
	person := func(ext, email string, balance *float64) api.InputPerson {
		p := api.InputPerson{FirstName: sp("First " + ext), LastName: sp("Last"), AddBalance: balance}
		if ext != "" {
			p.ExternalId = &ext
		}
		if email != "" {
			p.Email = &email
		}
		return p
	}

	t.Run("creates with a stable UUID and answers 201", func(t *testing.T) {
		f := newFixture(t, nil)
		got := create(t, f, "", api.CreatePeopleRequest{CollectionId: PlainCollectionID, People: []api.InputPerson{person("N1", "n1@example.com", fp(10))}})
		if len(got) != 1 || got[0].Email != "n1@example.com" || got[0].FirstName != "First N1" {
			t.Fatalf("answer %+v", got)
		}
		if _, err := u2(got[0].Id); err != nil {
			t.Errorf("id %q is not a UUID", got[0].Id)
		}
		again := create(t, f, "", api.CreatePeopleRequest{CollectionId: PlainCollectionID, People: []api.InputPerson{person("N1", "", nil)}})
		if again[0].Id != got[0].Id {
			t.Errorf("second id %s, want %s", again[0].Id, got[0].Id)
		}
		other := newFixture(t, nil)
		fresh := create(t, other, "", api.CreatePeopleRequest{CollectionId: PlainCollectionID, People: []api.InputPerson{person("N1", "n1@example.com", nil)}})
		if fresh[0].Id != got[0].Id {
			t.Errorf("another emulator gave id %s, want the same %s", fresh[0].Id, got[0].Id)
		}
	})

	t.Run("upserts by externalId, then by email", func(t *testing.T) {
		f := newFixture(t, nil)
		byExt := create(t, f, "", api.CreatePeopleRequest{CollectionId: PlainCollectionID, People: []api.InputPerson{person("E1001", "other@example.com", nil)}})
		if byExt[0].Id != PersonJamesID || byExt[0].Email != "james.smith@example.com" {
			t.Errorf("by externalId: %+v, want James as is", byExt[0])
		}
		byEmail := create(t, f, "", api.CreatePeopleRequest{CollectionId: PlainCollectionID, People: []api.InputPerson{person("NEW-9", "JEAN-LUC.OBRIEN@example.com", nil)}})
		if byEmail[0].Id != PersonJeanLucID {
			t.Errorf("by email: %+v, want Jean-Luc", byEmail[0])
		}
		st := f.emu.State()
		if n := len(st.Companies[0].People); n != 4 {
			t.Errorf("%d people, want the dataset's 4", n)
		}
	})

	t.Run("balances add up: addBalance plus amount, per person", func(t *testing.T) {
		f := newFixture(t, nil)
		amount := 5.0
		create(t, f, "k1", api.CreatePeopleRequest{CollectionId: PlainCollectionID, Amount: &amount,
			People: []api.InputPerson{person("E1001", "", fp(10)), person("B1", "b1@example.com", fp(2.5)), person("B2", "b2@example.com", nil)}})
		create(t, f, "k2", api.CreatePeopleRequest{CollectionId: PlainCollectionID, People: []api.InputPerson{person("B1", "", fp(1))}})
		for ext, want := range map[string]float64{"E1001": 50 + 10 + 5, "B1": 2.5 + 5 + 1, "B2": 5} {
			p, ok := f.emu.Person(DatasetCompanyID, ext)
			if !ok {
				t.Fatalf("%s not found", ext)
			}
			if p.Balance != want {
				t.Errorf("%s balance %v, want %v", ext, p.Balance, want)
			}
		}
		b1, _ := f.emu.Person(DatasetCompanyID, "B1")
		want := []Grant{
			{Source: "addBalance", Amount: 2.5, IdempotencyKey: "k1", At: testNow()},
			{Source: "amount", Amount: 5, IdempotencyKey: "k1", At: testNow()},
			{Source: "addBalance", Amount: 1, IdempotencyKey: "k2", At: testNow()},
		}
		if len(b1.Grants) != len(want) {
			t.Fatalf("grants %+v, want %+v", b1.Grants, want)
		}
		for i := range want {
			if b1.Grants[i] != want[i] {
				t.Errorf("grant %d = %+v, want %+v", i, b1.Grants[i], want[i])
			}
		}
	})

	t.Run("shouldSendEmail is recorded", func(t *testing.T) {
		f := newFixture(t, nil)
		yes := true
		create(t, f, "", api.CreatePeopleRequest{CollectionId: PlainCollectionID, ShouldSendEmail: &yes, Amount: fp(1), People: []api.InputPerson{person("M1", "", nil)}})
		create(t, f, "", api.CreatePeopleRequest{CollectionId: PlainCollectionID, People: []api.InputPerson{person("M1", "", nil)}})
		p, _ := f.emu.Person(DatasetCompanyID, "M1")
		if p.EmailsSent != 1 || !p.Grants[0].ShouldSendEmail {
			t.Errorf("person %+v, want one e-mail sent, recorded on the grant", p)
		}
	})

	t.Run("an Idempotency-Key replays the first answer and grants nothing", func(t *testing.T) {
		f := newFixture(t, nil)
		req := api.CreatePeopleRequest{CollectionId: PlainCollectionID, Amount: fp(3), People: []api.InputPerson{person("R1", "r1@example.com", fp(7))}}
		first := create(t, f, "same-key", req)
		req.People = append(req.People, person("R2", "", fp(100)))
		status, h, body := f.do(t, "POST", "/api/ext/v1/people", tokDataset, mustJSON(t, req), "Idempotency-Key", "same-key")
		if status != http.StatusCreated || h.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: status %d header %v", status, h)
		}
		var replay []api.ReturnedPerson
		if err := json.Unmarshal(body, &replay); err != nil {
			t.Fatal(err)
		}
		if len(replay) != 1 || replay[0] != first[0] {
			t.Errorf("replay %+v, want the first answer %+v", replay, first)
		}
		p, _ := f.emu.Person(DatasetCompanyID, "R1")
		if p.Balance != 10 || len(p.Grants) != 2 {
			t.Errorf("R1 balance %v grants %d, want 10 from 2 grants", p.Balance, len(p.Grants))
		}
		if _, ok := f.emu.Person(DatasetCompanyID, "R2"); ok {
			t.Errorf("R2 was created by a replay")
		}
		create(t, f, "other-key", req)
		p, _ = f.emu.Person(DatasetCompanyID, "R1")
		if p.Balance != 20 {
			t.Errorf("after a new key, R1 balance %v, want 20", p.Balance)
		}
	})

	t.Run("the same key in another company is another request", func(t *testing.T) {
		f := newFixture(t, nil)
		multi := clientFor(t, f.srv.URL, tokMulti)
		for _, company := range []string{DatasetCompanyID, acme} {
			resp, err := multi.CreatePeopleWithResponse(ctx, &api.CreatePeopleParams{IdempotencyKey: sp("k")},
				api.CreatePeopleRequest{CompanyId: sp(company), CollectionId: PlainCollectionID, People: []api.InputPerson{person("S1", "", fp(1))}})
			if err != nil || resp.StatusCode() != http.StatusCreated {
				t.Fatalf("company %s: %v %s", company, err, resp.Body)
			}
		}
		for _, company := range []string{DatasetCompanyID, acme} {
			if p, ok := f.emu.Person(company, "S1"); !ok || p.Balance != 1 {
				t.Errorf("company %s: S1 %+v found %v, want balance 1", company, p, ok)
			}
		}
	})
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPersonalize(t *testing.T) {
	ctx := context.Background()
	src := api.SourceFields{FirstName: sp("Zoë"), LastName: sp("van der Berg"), Department: sp("People")}

	call := func(t *testing.T, f *fixture, coll string, sf api.SourceFields) *api.PersonalizeCollectionResponse {
		t.Helper()
		resp, err := f.client.PersonalizeCollectionWithResponse(ctx, coll, api.PersonalizeRequest{CompanyId: DatasetCompanyID, SourceFields: sf})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}

	t.Run("Pending first, then Done with the same sha", func(t *testing.T) {
		f := newFixture(t, func(o *Options) { o.PersonalizeDelay = &DelayRange{Min: 1e6, Max: 3e6} })
		first := call(t, f, PersonalizableCollectionID, src)
		if first.JSON200 == nil || first.JSON200.Status != api.ProcessingStatusPending {
			t.Fatalf("first: status %d body %s", first.StatusCode(), first.Body)
		}
		second := call(t, f, PersonalizableCollectionID, src)
		if second.JSON200 == nil || second.JSON200.Status != api.ProcessingStatusDone {
			t.Fatalf("second: status %d body %s", second.StatusCode(), second.Body)
		}
		if first.JSON200.Sha != second.JSON200.Sha {
			t.Errorf("sha changed: %s then %s", first.JSON200.Sha, second.JSON200.Sha)
		}
		want := personalization.Sha(PersonalizableCollectionID, personalization.Source{FirstName: "Zoë", LastName: "van der Berg", Department: "People"})
		if first.JSON200.Sha != want {
			t.Errorf("sha %s, want %s", first.JSON200.Sha, want)
		}
		if n := second.JSON200.Fields.Name; n == nil || *n.Initials != "ZB" || *n.FirstPossessive != "Zoë's" {
			t.Errorf("name fields %+v", n)
		}
		if len(f.emu.State().Personalizations) != 1 {
			t.Errorf("personalizations %+v, want one", f.emu.State().Personalizations)
		}
	})

	t.Run("the call blocks for the delay, and ends with the request", func(t *testing.T) {
		f := newFixture(t, func(o *Options) { o.PersonalizeDelay = &DelayRange{Min: 1 << 40, Max: 1 << 40} })
		cctx, cancel := context.WithTimeout(ctx, 100e6)
		defer cancel()
		_, err := f.client.PersonalizeCollectionWithResponse(cctx, PersonalizableCollectionID, api.PersonalizeRequest{CompanyId: DatasetCompanyID, SourceFields: src})
		if err == nil {
			t.Fatal("a call with a delay of hours answered")
		}
		if n := len(f.emu.State().Personalizations); n != 0 {
			t.Errorf("an abandoned call was processed: %d personalizations", n)
		}
	})

	t.Run("delays are drawn in the range from the seed", func(t *testing.T) {
		draw := func(seed int64) []int64 {
			e, err := New(Options{PersonalizeDelay: &DelayRange{Min: 15e9, Max: 20e9}, Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			var out []int64
			for range 50 {
				d := e.drawDelay()
				if d < 15e9 || d > 20e9 {
					t.Fatalf("delay %v outside 15s-20s", d)
				}
				out = append(out, int64(d))
			}
			return out
		}
		a, b := draw(1), draw(1)
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("same seed, different delays at %d", i)
			}
		}
	})

	t.Run("unusable input answers Error", func(t *testing.T) {
		f := newFixture(t, nil)
		for name, sf := range map[string]api.SourceFields{
			"no name":         {Department: sp("Sales")},
			"impossible date": {FirstName: sp("A"), BirthDate: nil},
		} {
			if name == "impossible date" {
				status, _, body := f.do(t, "POST", "/api/ext/v1/collection/"+PersonalizableCollectionID+"/personalize", tokDataset,
					`{"companyId":"`+DatasetCompanyID+`","sourceFields":{"firstName":"A","startDate":"2023-02-30T00:00:00Z"}}`)
				var res api.PersonalizationResult
				if err := json.Unmarshal(body, &res); err != nil || status != 200 || res.Status != api.ProcessingStatusError {
					t.Errorf("%s: status %d body %s", name, status, body)
				}
				continue
			}
			resp := call(t, f, PersonalizableCollectionID, sf)
			if resp.JSON200 == nil || resp.JSON200.Status != api.ProcessingStatusError || resp.JSON200.Sha == "" {
				t.Errorf("%s: status %d body %s", name, resp.StatusCode(), resp.Body)
			}
		}
	})

	t.Run("a plain collection is 422", func(t *testing.T) {
		f := newFixture(t, nil)
		resp := call(t, f, PlainCollectionID, src)
		wantError(t, resp.StatusCode(), resp.Body, http.StatusUnprocessableEntity, "not_personalizable", PlainCollectionID)
	})

	t.Run("bad requests are 400", func(t *testing.T) {
		f := newFixture(t, nil)
		path := "/api/ext/v1/collection/" + PersonalizableCollectionID + "/personalize"
		for body, field := range map[string]string{
			`{"sourceFields":{"firstName":"A"}}`:                                                 "companyId",
			`{"companyId":"` + DatasetCompanyID + `"}`:                                           "sourceFields",
			`{"companyId":"` + DatasetCompanyID + `","sourceFields":[]}`:                         "sourceFields",
			`{"companyId":"` + DatasetCompanyID + `","sourceFields":{"firstName":1}}`:            "sourceFields.firstName",
			`{"companyId":"` + DatasetCompanyID + `","sourceFields":{"birthDate":"1990-01-01"}}`: "sourceFields.birthDate",
		} {
			status, _, b := f.do(t, "POST", path, tokDataset, body)
			wantError(t, status, b, http.StatusBadRequest, "invalid_input", field)
		}
	})
}
