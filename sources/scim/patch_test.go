package scim_test

import (
	"net/http"
	"testing"
)

// entraCreate is a user as Microsoft Entra ID creates one: enterprise extension, work e-mail,
// meta and roles in the body.
const entraCreate = `{
	"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User", "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],
	"externalId": "5b8c7d33-0b41-4a37-9d7e-6c1a3d2f0e11",
	"userName": "ada.lovelace@contoso.example",
	"active": true,
	"displayName": "Ada Lovelace",
	"emails": [{"primary": true, "type": "work", "value": "ada.lovelace@contoso.example"}],
	"meta": {"resourceType": "User"},
	"name": {"formatted": "Ada Lovelace", "familyName": "Lovelace", "givenName": "Ada"},
	"roles": [],
	"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": {"employeeNumber": "1815", "department": "Engineering"}
}`

func patchBody(ops string) string {
	return `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[` + ops + `]}`
}

func TestPatchForms(t *testing.T) {
	cases := []struct {
		name  string
		ops   string
		check func(t *testing.T, a answer)
	}{
		{"Entra Replace with capital op and boolean as string", `{"op":"Replace","path":"active","value":"False"}`,
			func(t *testing.T, a answer) { want(t, a.body["active"] == false, "active = %v", a.body["active"]) }},
		{"Entra value path on work e-mail", `{"op":"Replace","path":"emails[type eq \"work\"].value","value":"ada@contoso.example"}`,
			func(t *testing.T, a answer) {
				want(t, email(a, 0) == "ada@contoso.example", "emails = %v", a.body["emails"])
			}},
		{"Entra Add of a URN-qualified extension attribute", `{"op":"Add","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department","value":"Research"}`,
			func(t *testing.T, a answer) {
				want(t, a.str("urn:ietf:params:scim:schemas:extension:enterprise:2.0:User", "department") == "Research", "department: %s", a.raw)
			}},
		{"no path, value object with dotted and URN keys", `{"op":"replace","value":{"active":false,"name.givenName":"Augusta","urn:ietf:params:scim:schemas:extension:hrsync:2.0:User:startDate":"2026-09-01T00:00:00Z"}}`,
			func(t *testing.T, a answer) {
				want(t, a.body["active"] == false && a.str("name", "givenName") == "Augusta" && a.str("name", "familyName") == "Lovelace" &&
					a.str("urn:ietf:params:scim:schemas:extension:hrsync:2.0:User", "startDate") == "2026-09-01", "got %s", a.raw)
			}},
		{"no path, extension object", `{"op":"add","value":{"urn:ietf:params:scim:schemas:extension:hrsync:2.0:User":{"location":"London","balanceOverride":"50.5"}}}`,
			func(t *testing.T, a answer) {
				hr, _ := a.body["urn:ietf:params:scim:schemas:extension:hrsync:2.0:User"].(map[string]any)
				want(t, hr["location"] == "London" && hr["balanceOverride"] == 50.5, "hrsync = %v", hr)
			}},
		{"Okta deactivation", `{"op":"replace","value":{"active":false}}`,
			func(t *testing.T, a answer) { want(t, a.body["active"] == false, "active = %v", a.body["active"]) }},
		{"RFC add of an e-mail", `{"op":"add","path":"emails","value":[{"value":"ada@home.example","type":"home"}]}`,
			func(t *testing.T, a answer) {
				want(t, email(a, 1) == "ada@home.example", "emails = %v", a.body["emails"])
			}},
		{"add with a value path that selects nothing creates it", `{"op":"add","path":"emails[type eq \"home\"].value","value":"ada@home.example"}`,
			func(t *testing.T, a answer) {
				want(t, email(a, 1) == "ada@home.example", "emails = %v", a.body["emails"])
			}},
		{"RFC replace of a complex attribute merges", `{"op":"replace","path":"name","value":{"givenName":"Augusta"}}`,
			func(t *testing.T, a answer) {
				want(t, a.str("name", "givenName") == "Augusta" && a.str("name", "familyName") == "Lovelace", "name: %s", a.raw)
			}},
		{"remove a sub-attribute", `{"op":"remove","path":"name.formatted"}`,
			func(t *testing.T, a answer) { want(t, a.str("name", "formatted") == "", "name: %s", a.raw) }},
		{"remove by value filter", `{"op":"remove","path":"emails[value eq \"ADA.LOVELACE@contoso.example\"]"}`,
			func(t *testing.T, a answer) { want(t, a.body["emails"] == nil, "emails = %v", a.body["emails"]) }},
		{"attributes hrsync does not keep are accepted", `{"op":"Add","path":"title","value":"Countess"},{"op":"Replace","path":"phoneNumbers[type eq \"work\"].value","value":"1"}`,
			func(t *testing.T, a answer) { want(t, a.str("meta", "version") == `W/"1"`, "version moved: %s", a.raw) }},
		{"several operations in order", `{"op":"replace","path":"displayName","value":"A"},{"op":"replace","path":"displayName","value":"B"}`,
			func(t *testing.T, a answer) {
				want(t, a.str("displayName") == "B", "displayName %q", a.str("displayName"))
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			id := f.do("POST", "/Users", entraCreate).str("id")
			a := f.do("PATCH", "/Users/"+id, patchBody(tc.ops))
			if a.status != http.StatusOK {
				t.Fatalf("status %d: %s", a.status, a.raw)
			}
			tc.check(t, a)
			if got := f.do("GET", "/Users/"+id, ""); got.str("meta", "version") != a.str("meta", "version") {
				t.Fatalf("stored version %s, answered %s", got.str("meta", "version"), a.str("meta", "version"))
			}
		})
	}
}

func want(t *testing.T, ok bool, format string, args ...any) {
	t.Helper()
	if !ok {
		t.Fatalf(format, args...)
	}
}

func email(a answer, i int) string {
	list, _ := a.body["emails"].([]any)
	if i >= len(list) {
		return ""
	}
	s, _ := list[i].(map[string]any)["value"].(string)
	return s
}

func TestPatchErrors(t *testing.T) {
	cases := []struct {
		name, body string
		status     int
		scimType   string
	}{
		{"malformed JSON", `{"schemas":[`, 400, "invalidSyntax"},
		{"no PatchOp schema", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"Operations":[{"op":"replace","path":"active","value":false}]}`, 400, "invalidSyntax"},
		{"no operations", patchBody(``), 400, "invalidSyntax"},
		{"unknown op", patchBody(`{"op":"move","path":"active","value":false}`), 400, "invalidSyntax"},
		{"remove without path", patchBody(`{"op":"remove"}`), 400, "noTarget"},
		{"unknown attribute", patchBody(`{"op":"replace","path":"shoeSize","value":44}`), 400, "invalidPath"},
		{"unparsable path", patchBody(`{"op":"replace","path":"emails[type eq","value":"x"}`), 400, "invalidPath"},
		{"unknown schema in path", patchBody(`{"op":"replace","path":"urn:example:ext:1.0:User:x","value":"x"}`), 400, "invalidPath"},
		{"replace by a filter that selects nothing", patchBody(`{"op":"replace","path":"emails[type eq \"home\"].value","value":"x@example.com"}`), 400, "noTarget"},
		{"read-only id", patchBody(`{"op":"replace","path":"id","value":"x"}`), 400, "mutability"},
		{"wrong type", patchBody(`{"op":"replace","path":"active","value":"perhaps"}`), 400, "invalidValue"},
		{"userName removed", patchBody(`{"op":"remove","path":"userName"}`), 400, "invalidValue"},
		{"no-path value not an object", patchBody(`{"op":"replace","value":"x"}`), 400, "invalidValue"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			id := f.do("POST", "/Users", entraCreate).str("id")
			f.do("PATCH", "/Users/"+id, tc.body).wantError(t, tc.status, tc.scimType)
			if got := f.do("GET", "/Users/"+id, ""); got.str("meta", "version") != `W/"1"` || got.body["active"] != true {
				t.Fatalf("a refused PATCH changed the user: %s", got.raw)
			}
		})
	}
	t.Run("uniqueness", func(t *testing.T) {
		f := newFixture(t, nil)
		id := f.do("POST", "/Users", entraCreate).str("id")
		f.createJensen()
		f.do("PATCH", "/Users/"+id, patchBody(`{"op":"replace","path":"userName","value":"BJENSEN"}`)).wantError(t, http.StatusConflict, "uniqueness")
	})
	t.Run("If-Match", func(t *testing.T) {
		f := newFixture(t, nil)
		id := f.do("POST", "/Users", entraCreate).str("id")
		body := patchBody(`{"op":"replace","path":"active","value":false}`)
		f.do("PATCH", "/Users/"+id, body, "If-Match", `W/"2"`).wantError(t, http.StatusPreconditionFailed, "")
		f.do("PATCH", "/Users/"+id, body, "If-Match", `garbage`).wantError(t, http.StatusPreconditionFailed, "")
		if a := f.do("PATCH", "/Users/"+id, body, "If-Match", `W/"1"`); a.status != http.StatusOK || a.header.Get("ETag") != `W/"2"` {
			t.Fatalf("PATCH at the current version: %d %s", a.status, a.raw)
		}
	})
	t.Run("missing user", func(t *testing.T) {
		f := newFixture(t, nil)
		f.do("PATCH", "/Users/nope", patchBody(`{"op":"replace","path":"active","value":false}`)).wantError(t, http.StatusNotFound, "")
	})
}
