package scim_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
)

func (f *fixture) seed(n int) []string {
	f.t.Helper()
	ids := make([]string, 0, n)
	for i := range n {
		a := f.do("POST", "/Users", fmt.Sprintf(`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],
			"userName":"user%02d@example.com","externalId":"ext-%02d","active":true}`, i, i))
		if a.status != http.StatusCreated {
			f.t.Fatalf("seed: %d %s", a.status, a.raw)
		}
		ids = append(ids, a.str("id"))
	}
	return ids
}

func TestListFilters(t *testing.T) {
	f := newFixture(t, nil)
	ids := f.seed(5)
	cases := []struct {
		name, filter string
		want         []int
	}{
		{"Okta's userName eq before create", `userName eq "USER02@example.com"`, []int{2}},
		{"externalId eq", `externalId eq "ext-03"`, []int{3}},
		{"id eq", `id eq "` + ids[4] + `"`, []int{4}},
		{"and", `userName eq "user01@example.com" and externalId eq "ext-01"`, []int{1}},
		{"and without a match", `userName eq "user01@example.com" and externalId eq "ext-02"`, nil},
		{"no match", `userName eq "nobody@example.com"`, nil},
		{"operator in capitals, URN-qualified", `urn:ietf:params:scim:schemas:core:2.0:User:userName EQ "user00@example.com"`, []int{0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := f.do("GET", "/Users?filter="+url.QueryEscape(tc.filter), "")
			res, _ := a.body["Resources"].([]any)
			if a.status != http.StatusOK || a.body["totalResults"] != float64(len(tc.want)) || len(res) != len(tc.want) {
				t.Fatalf("%d %s", a.status, a.raw)
			}
			for i, w := range tc.want {
				if res[i].(map[string]any)["id"] != ids[w] {
					t.Fatalf("result %d is not user %d", i, w)
				}
			}
		})
	}
	for _, bad := range []string{`userName co "user"`, `userName eq "a" or userName eq "b"`, `emails.value eq "x"`, `userName eq`, `title eq "x"`, `active eq true`} {
		t.Run("refused "+bad, func(t *testing.T) {
			f.do("GET", "/Users?filter="+url.QueryEscape(bad), "").wantError(t, http.StatusBadRequest, "invalidFilter")
		})
	}
}

func TestListPages(t *testing.T) {
	f := newFixture(t, nil)
	ids := f.seed(7)
	cases := []struct {
		query                   string
		start, perPage, firstAt int
	}{
		{"startIndex=1&count=2", 1, 2, 0}, // Okta's connection test
		{"startIndex=3&count=3", 3, 3, 2},
		{"startIndex=7&count=3", 7, 1, 6},
		{"startIndex=9&count=3", 9, 0, 0},
		{"startIndex=0&count=2", 1, 2, 0},
		{"count=0", 1, 0, 0},
		{"count=-3", 1, 0, 0},
		{"", 1, 7, 0},
	}
	for _, tc := range cases {
		t.Run(tc.query, func(t *testing.T) {
			a := f.do("GET", "/Users?"+tc.query, "")
			res, ok := a.body["Resources"].([]any)
			if a.status != http.StatusOK || !ok || a.body["totalResults"] != float64(7) ||
				a.body["startIndex"] != float64(tc.start) || a.body["itemsPerPage"] != float64(tc.perPage) || len(res) != tc.perPage {
				t.Fatalf("%d %s", a.status, a.raw)
			}
			if tc.perPage > 0 && res[0].(map[string]any)["id"] != ids[tc.firstAt] {
				t.Fatalf("first result is not user %d", tc.firstAt)
			}
		})
	}
	f.do("GET", "/Users?count=ten", "").wantError(t, http.StatusBadRequest, "invalidValue")
}
