package emulator

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestLimitsRefuseChosenPeople checks the limits through the contract
// validator: a balance above the maximum and a field too long are refused
// with a 400 naming the person and the field, a body too large with a 413,
// nothing is applied, and a request within the limits is created.
func TestLimitsRefuseChosenPeople(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.MaxBalance = 500; o.MaxFieldChars = 20; o.MaxBodyBytes = 4096 })
	const people = "/api/ext/v1/people"
	body := func(persons ...string) string {
		return `{"collectionId":"` + PlainCollectionID + `","people":[` + strings.Join(persons, ",") + `]}`
	}
	ok := `{"externalId":"N1","email":"n1@example.com","addBalance":500}`
	for _, c := range []struct {
		name, body string
		status     int
		code, msg  string
	}{
		{"balance above the maximum", body(ok, `{"externalId":"N2","addBalance":500.01}`), 400, "invalid_input",
			"people[1].addBalance: above the maximum of 500"},
		{"negative balance", body(`{"externalId":"N2","addBalance":-1}`), 400, "invalid_input",
			"people[0].addBalance: want a number from 0 to 500"},
		{"request amount above the maximum", `{"collectionId":"` + PlainCollectionID + `","amount":501,"people":[` + ok + `]}`,
			400, "invalid_input", "amount: above the maximum of 500"},
		{"a field too long, in characters", body(ok, ok, `{"externalId":"N3","lastName":"`+strings.Repeat("é", 21)+`"}`),
			400, "invalid_input", "people[2].lastName: 21 characters, longer than the maximum of 20"},
		{"a body too large", body(`{"externalId":"N4","department":"` + strings.Repeat("x", 5000) + `"}`), 413, "payload_too_large",
			"larger than 4096 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, _, got := f.do(t, "POST", people, tokDataset, c.body)
			wantError(t, status, got, c.status, c.code, c.msg)
		})
	}
	if st := f.emu.State(); len(st.Companies[0].People) != 4 {
		t.Fatalf("a refused request changed state: %d people", len(st.Companies[0].People))
	}
	t.Run("within the limits", func(t *testing.T) {
		twenty := `{"externalId":"N5","firstName":"` + strings.Repeat("é", 20) + `","addBalance":500}`
		if status, _, got := f.do(t, "POST", people, tokDataset, body(ok, twenty)); status != http.StatusCreated {
			t.Fatalf("%d %s", status, got)
		}
		p, found := f.emu.Person(DatasetCompanyID, "N1")
		if !found || p.Balance != 500 {
			t.Errorf("N1: %+v (found %v), want balance 500", p, found)
		}
	})
}

func TestLimitsOverHTTP(t *testing.T) {
	f := newFixture(t, nil)
	var l Limits
	status, _, got := f.do(t, "GET", "/_emulator/limits", "", "")
	if err := json.Unmarshal(got, &l); err != nil || status != 200 {
		t.Fatalf("%d %s", status, got)
	}
	if l != (Limits{MaxBodyBytes: DefaultMaxBodyBytes, MaxFieldChars: DefaultMaxFieldChars, MaxBalance: DefaultMaxBalance}) {
		t.Errorf("default limits %+v", l)
	}

	status, _, got = f.do(t, "PUT", "/_emulator/limits", "", `{"maxBalance":100}`)
	if err := json.Unmarshal(got, &l); err != nil || status != 200 || l.MaxBalance != 100 || l.MaxFieldChars != DefaultMaxFieldChars {
		t.Fatalf("set the balance maximum: %d %s", status, got)
	}
	body := `{"collectionId":"` + PlainCollectionID + `","people":[{"externalId":"N1","addBalance":150}]}`
	status, _, got = f.do(t, "POST", "/api/ext/v1/people", tokDataset, body)
	wantError(t, status, got, 400, "invalid_input", "people[0].addBalance: above the maximum of 100")

	for _, bad := range []string{`{"maxBalance":-1}`, `{"maxFieldChars":-5}`, `{"maxBodyBytes":-1}`, `{"maxBalanse":5}`} {
		status, _, got = f.do(t, "PUT", "/_emulator/limits", "", bad)
		wantError(t, status, got, 400, "invalid_input", "")
	}
	if f.emu.Limits().MaxBalance != 100 {
		t.Errorf("a refused change changed the limits: %+v", f.emu.Limits())
	}

	f.emu.Reset()
	if l := f.emu.Limits(); l.MaxBalance != DefaultMaxBalance {
		t.Errorf("after reset: %+v, want the start limits", l)
	}
	status, _, got = f.do(t, "POST", "/api/ext/v1/people", tokDataset, body)
	if status != http.StatusCreated {
		t.Errorf("after reset, 150 is within the limit: %d %s", status, got)
	}
}

func TestLimitsOptionsValidated(t *testing.T) {
	for _, o := range []Options{{MaxFieldChars: -1}, {MaxBalance: -2}} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted a negative limit", o)
		}
	}
}
