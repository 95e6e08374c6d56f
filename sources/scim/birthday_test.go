package scim_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestBirthDateKeptWithoutYear: a birthDate pushed with its year (POST, or
// a PATCH with a dateTime) is kept and answered as its month and day alone,
// "--MM-DD"; the directory never receives the year (DESIGN.md, invariant 5).
func TestBirthDateKeptWithoutYear(t *testing.T) {
	f := newFixture(t, nil)
	const hr = "urn:ietf:params:scim:schemas:extension:hrsync:2.0:User"
	a := f.do("POST", "/Users", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User","`+hr+`"],
		"userName":"ada","`+hr+`":{"birthDate":"1985-12-25"}}`)
	if a.status != http.StatusCreated || a.str(hr, "birthDate") != "--12-25" {
		t.Fatalf("create: %d, birthDate %q; want --12-25 (%s)", a.status, a.str(hr, "birthDate"), a.raw)
	}
	id := a.str("id")
	p := f.do("PATCH", "/Users/"+id, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
		"Operations":[{"op":"Replace","path":"`+hr+`:birthDate","value":"1992-02-29T00:00:00Z"}]}`)
	if p.status != http.StatusOK || p.str(hr, "birthDate") != "--02-29" {
		t.Fatalf("patch: %d, birthDate %q; want --02-29 (%s)", p.status, p.str(hr, "birthDate"), p.raw)
	}
	u, err := f.dir.Get(context.Background(), "acme", id)
	if err != nil {
		t.Fatal(err)
	}
	if u.BirthDate != "--02-29" || strings.Contains(f.do("GET", "/Users/"+id, "").raw, "1992") {
		t.Fatalf("kept %q; want --02-29 and no year anywhere", u.BirthDate)
	}
	bad := f.do("POST", "/Users", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"bo","`+hr+`":{"birthDate":"--02-30"}}`)
	bad.wantError(t, http.StatusBadRequest, "invalidValue")
}
