package scim_test

import (
	"net/http"
	"strings"
	"testing"
)

func TestDiscovery(t *testing.T) {
	f := newFixture(t, nil)
	t.Run("ServiceProviderConfig", func(t *testing.T) {
		a := f.do("GET", "/ServiceProviderConfig", "")
		if a.status != http.StatusOK {
			t.Fatalf("status %d", a.status)
		}
		for feature, want := range map[string]bool{"patch": true, "filter": true, "etag": true, "bulk": false, "sort": false, "changePassword": false} {
			m, _ := a.body[feature].(map[string]any)
			if m["supported"] != want {
				t.Errorf("%s.supported = %v, want %v", feature, m["supported"], want)
			}
		}
	})
	t.Run("ResourceTypes has Users only", func(t *testing.T) {
		a := f.do("GET", "/ResourceTypes", "")
		res, _ := a.body["Resources"].([]any)
		if a.status != http.StatusOK || len(res) != 1 || res[0].(map[string]any)["endpoint"] != "/Users" {
			t.Fatalf("resource types = %s", a.raw)
		}
		if f.do("GET", "/ResourceTypes/Group", "").status != http.StatusNotFound {
			t.Fatal("Group resource type answered")
		}
		f.do("GET", "/Groups", "").wantError(t, http.StatusNotFound, "")
	})
	t.Run("Schemas", func(t *testing.T) {
		a := f.do("GET", "/Schemas", "")
		if a.body["totalResults"] != float64(3) {
			t.Fatalf("schemas = %s", a.raw)
		}
		for _, want := range []string{"employeeNumber", "department", "startDate", "birthDate", "location", "balanceOverride", "userName", "givenName"} {
			if !strings.Contains(a.raw, `"`+want+`"`) {
				t.Errorf("schemas lack %s", want)
			}
		}
		one := f.do("GET", "/Schemas/urn:ietf:params:scim:schemas:extension:hrsync:2.0:User", "")
		if one.status != http.StatusOK || one.str("id") != "urn:ietf:params:scim:schemas:extension:hrsync:2.0:User" {
			t.Fatalf("one schema: %d %s", one.status, one.raw)
		}
	})
}

func TestCreateGetReplaceDelete(t *testing.T) {
	f := newFixture(t, nil)
	created := f.createJensen()
	id := created.str("id")
	loc := created.header.Get("Location")
	if id == "" || loc != f.srv.URL+"/scim/v2/Users/"+id || created.str("meta", "location") != loc {
		t.Fatalf("id %q, Location %q, meta %v", id, loc, created.body["meta"])
	}
	if created.str("meta", "version") != `W/"1"` || created.header.Get("ETag") != `W/"1"` ||
		created.str("meta", "created") == "" || created.str("meta", "lastModified") == "" || created.str("meta", "resourceType") != "User" {
		t.Fatalf("meta = %v, ETag %q", created.body["meta"], created.header.Get("ETag"))
	}
	if created.body["active"] != true {
		t.Fatal("a user created without active is not active")
	}

	got := f.do("GET", "/Users/"+id, "")
	if got.status != http.StatusOK || got.str("name", "givenName") != "Barbara" || got.str("userName") != "bjensen" {
		t.Fatalf("get: %d %s", got.status, got.raw)
	}

	// RFC 7644 section 3.5.1: PUT replaces; the version is checked with If-Match.
	put := `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"id":"ignored","userName":"bjensen","externalId":"bjensen",
		"name":{"familyName":"Jensen","givenName":"Barbara"},"emails":[{"value":"bjensen@example.com","type":"work","primary":true}],
		"meta":{"resourceType":"User"}}`
	f.do("PUT", "/Users/"+id, put, "If-Match", `W/"7"`).wantError(t, http.StatusPreconditionFailed, "")
	replaced := f.do("PUT", "/Users/"+id, put, "If-Match", `W/"1"`)
	if replaced.status != http.StatusOK || replaced.str("meta", "version") != `W/"2"` || replaced.str("id") != id {
		t.Fatalf("put: %d %s", replaced.status, replaced.raw)
	}
	if _, ok := replaced.body["name"].(map[string]any)["formatted"]; ok {
		t.Fatal("PUT kept an attribute it did not send")
	}

	f.do("DELETE", "/Users/"+id, "", "If-Match", `W/"1"`).wantError(t, http.StatusPreconditionFailed, "")
	if del := f.do("DELETE", "/Users/"+id, ""); del.status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", del.status, del.raw)
	}
	f.do("GET", "/Users/"+id, "").wantError(t, http.StatusNotFound, "")
	f.do("DELETE", "/Users/"+id, "").wantError(t, http.StatusNotFound, "")
	f.do("PUT", "/Users/"+id, put).wantError(t, http.StatusNotFound, "")
}

func TestCreateErrors(t *testing.T) {
	f := newFixture(t, nil)
	f.createJensen()
	cases := []struct {
		name, body string
		status     int
		scimType   string
	}{
		{"malformed JSON", `{"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": `, 400, "invalidSyntax"},
		{"not an object", `["a"]`, 400, "invalidSyntax"},
		{"two values", `{} {}`, 400, "invalidSyntax"},
		{"no schemas", `{"userName":"x"}`, 400, "invalidSyntax"},
		{"unknown schema", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User","urn:example:params:scim:schemas:unknown"],"userName":"x"}`, 400, "invalidSyntax"},
		{"unknown attribute", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"x","shoeSize":44}`, 400, "invalidSyntax"},
		{"unknown extension attribute", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"x","urn:ietf:params:scim:schemas:extension:hrsync:2.0:User":{"shoeSize":1}}`, 400, "invalidSyntax"},
		{"missing userName", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"name":{"givenName":"x"}}`, 400, "invalidValue"},
		{"userName a number", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":42}`, 400, "invalidValue"},
		{"active not boolean", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"x","active":"maybe"}`, 400, "invalidValue"},
		{"emails not array", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"x","emails":"x@example.com"}`, 400, "invalidValue"},
		{"bad date", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"x","urn:ietf:params:scim:schemas:extension:hrsync:2.0:User":{"birthDate":"03/04/1990"}}`, 400, "invalidValue"},
		{"negative balance", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"x","urn:ietf:params:scim:schemas:extension:hrsync:2.0:User":{"balanceOverride":-5}}`, 400, "invalidValue"},
		{"userName taken, other case", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"BJensen"}`, 409, "uniqueness"},
		{"externalId taken", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"other","externalId":"bjensen"}`, 409, "uniqueness"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f.do("POST", "/Users", tc.body).wantError(t, tc.status, tc.scimType)
			if n := f.count("acme"); n != 1 {
				t.Fatalf("%d users stored, want 1", n)
			}
		})
	}
	t.Run("wrong content type", func(t *testing.T) {
		a := f.do("POST", "/Users", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"y"}`, "Content-Type", "text/plain")
		a.wantError(t, http.StatusUnsupportedMediaType, "")
	})
	t.Run("application/json is accepted", func(t *testing.T) {
		a := f.do("POST", "/Users", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"y"}`, "Content-Type", "application/json")
		if a.status != http.StatusCreated {
			t.Fatalf("status %d %s", a.status, a.raw)
		}
	})
}
