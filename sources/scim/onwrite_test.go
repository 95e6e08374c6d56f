package scim_test

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"hrsync/sources/scim"
)

// TestOnWrite checks that the hook hears of every stored write, with its tenant, and of nothing
// else: not of reads, not of refused writes, not of requests with a wrong token.
func TestOnWrite(t *testing.T) {
	var (
		mu    sync.Mutex
		heard []string
	)
	f := newFixture(t, func(o *scim.Options) {
		o.OnWrite = func(tenant string) {
			mu.Lock()
			defer mu.Unlock()
			heard = append(heard, tenant)
		}
	})
	took := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := slices.Clone(heard)
		heard = nil
		return out
	}
	id := f.createJensen().str("id")
	if got := took(); !slices.Equal(got, []string{"acme"}) {
		t.Errorf("after a POST: heard %v, want [acme]", got)
	}

	f.do("GET", "/Users/"+id, "")
	f.do("GET", "/Users?filter="+strings.ReplaceAll(`userName eq "bjensen"`, " ", "%20"), "")
	f.do("GET", "/ServiceProviderConfig", "")
	f.do("POST", "/Users", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"BJensen"}`).
		wantError(t, http.StatusConflict, "uniqueness")
	f.do("PATCH", "/Users/"+id, patchBody(`{"op":"Replace","path":"shoeSize","value":"x"}`)).
		wantError(t, http.StatusBadRequest, "invalidPath")
	f.call("DELETE", "/Users/"+id, tokenAcme+"x", nil).wantError(t, http.StatusUnauthorized, "")
	f.call("DELETE", "/Users/"+id, tokenGlobex, nil).wantError(t, http.StatusNotFound, "")
	if got := took(); len(got) != 0 {
		t.Errorf("after reads and refused writes: heard %v, want nothing", got)
	}

	f.do("PATCH", "/Users/"+id, patchBody(`{"op":"Replace","path":"active","value":"False"}`))
	f.do("PUT", "/Users/"+id, `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"bjensen","active":true}`)
	if a := f.do("DELETE", "/Users/"+id, ""); a.status != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", a.status, a.raw)
	}
	f.call("POST", "/Users", tokenGlobex, strings.NewReader(`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"g1"}`))
	if got := took(); !slices.Equal(got, []string{"acme", "acme", "acme", "globex"}) {
		t.Errorf("after PATCH, PUT, DELETE of acme and a POST of globex: heard %v", got)
	}
}
