package scim_test

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/time/rate"

	"hrsync/sources/scim"
)

func TestTokens(t *testing.T) {
	f := newFixture(t, nil)
	body := `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"x@example.com"}`
	for name, token := range map[string]string{"missing": "", "wrong": "not-a-token", "prefix of a token": tokenAcme[:5]} {
		t.Run(name, func(t *testing.T) {
			a := f.call("POST", "/Users", token, strings.NewReader(body))
			a.wantError(t, http.StatusUnauthorized, "")
			if a.header.Get("WWW-Authenticate") == "" {
				t.Fatal("no WWW-Authenticate")
			}
		})
	}
	t.Run("another tenant's token selects that tenant", func(t *testing.T) {
		id := f.do("POST", "/Users", body).str("id")
		f.call("GET", "/Users/"+id, tokenGlobex, nil).wantError(t, http.StatusNotFound, "")
		f.call("DELETE", "/Users/"+id, tokenGlobex, nil).wantError(t, http.StatusNotFound, "")
		f.call("PATCH", "/Users/"+id, tokenGlobex, strings.NewReader(patchBody(`{"op":"replace","path":"active","value":false}`))).wantError(t, http.StatusNotFound, "")
		if f.count("globex") != 0 || f.count("acme") != 1 {
			t.Fatalf("acme %d, globex %d users", f.count("acme"), f.count("globex"))
		}
		if a := f.do("GET", "/Users/"+id, ""); a.body["active"] != true {
			t.Fatal("globex's token changed acme's user")
		}
	})
	t.Run("a shared token selects nobody", func(t *testing.T) {
		g := newFixture(t, func(o *scim.Options) { o.Tenants["initech"] = scim.StaticToken(tokenGlobex) })
		g.call("GET", "/Users", tokenGlobex, nil).wantError(t, http.StatusUnauthorized, "")
	})
	t.Run("an unreadable token file selects nobody, the others still work", func(t *testing.T) {
		g := newFixture(t, func(o *scim.Options) { o.Tenants["broken"] = scim.FileToken(t.TempDir() + "/missing") })
		if g.call("GET", "/Users", tokenGlobex, nil).status != http.StatusOK {
			t.Fatal("globex refused")
		}
	})
}

// endless yields n bytes of an endless JSON string without holding them, counting what was read.
type endless struct {
	n, read int64
	started bool
}

func (e *endless) Read(p []byte) (int, error) {
	if e.read >= e.n {
		return 0, io.EOF
	}
	i := 0
	if !e.started {
		i = copy(p, `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"`)
		e.started = true
	}
	for ; i < len(p) && e.read+int64(i) < e.n; i++ {
		p[i] = 'a'
	}
	atomic.AddInt64(&e.read, int64(i))
	return i, nil
}

func TestBodyBound(t *testing.T) {
	f := newFixture(t, nil)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	body := &endless{n: 100 << 20}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, f.srv.URL+"/scim/v2/Users", body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tokenAcme)
	req.Header.Set("Content-Type", "application/scim+json")
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatalf("the 100 MB POST got no answer: %v", err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	runtime.ReadMemStats(&after)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(raw), `"413"`) {
		t.Fatalf("status %d: %s", resp.StatusCode, raw)
	}
	if sent := atomic.LoadInt64(&body.read); sent > 32<<20 {
		t.Fatalf("the server read %d bytes of the body", sent)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 50<<20 {
		t.Fatalf("%d MB allocated for a refused body", grew>>20)
	}
	if f.count("acme") != 0 {
		t.Fatal("a user was stored")
	}
	g := newFixture(t, func(o *scim.Options) { o.MaxBodyBytes = 64 })
	g.do("POST", "/Users", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"a-rather-long-user-name@example.com"}`).
		wantError(t, http.StatusRequestEntityTooLarge, "")
}

func TestRateLimit(t *testing.T) {
	f := newFixture(t, func(o *scim.Options) { o.Rate, o.Burst = rate.Limit(0.5), 2 })
	for range 2 {
		if a := f.do("GET", "/Users", ""); a.status != http.StatusOK {
			t.Fatalf("status %d", a.status)
		}
	}
	a := f.do("GET", "/Users", "")
	a.wantError(t, http.StatusTooManyRequests, "")
	if a.header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
	if b := f.call("GET", "/Users", tokenGlobex, nil); b.status != http.StatusOK {
		t.Fatalf("globex limited by acme's traffic: %d", b.status)
	}
}

func TestNoPIIInLogsAndAudit(t *testing.T) {
	f := newFixture(t, nil)
	id := f.do("POST", "/Users", entraCreate).str("id")
	f.do("PATCH", "/Users/"+id, patchBody(`{"op":"Replace","path":"emails[type eq \"work\"].value","value":"ada.new@contoso.example"}`))
	f.do("GET", "/Users?filter=userName%20eq%20%22ada.lovelace%40contoso.example%22", "")
	f.do("POST", "/Users", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"ada.lovelace@contoso.example"}`)
	entries := f.logs.All()
	if len(entries) != 4 {
		t.Fatalf("%d log lines, want one per request", len(entries))
	}
	for _, e := range entries {
		fields := e.ContextMap()
		if fields["tenant"] != "acme" || fields["path"] == "" || fields["status"] == nil {
			t.Fatalf("log fields = %v", fields)
		}
		for _, v := range fields {
			s, _ := v.(string)
			if strings.Contains(strings.ToLower(s), "contoso") || strings.Contains(s, "Lovelace") {
				t.Fatalf("log line holds personal data: %v", fields)
			}
		}
	}
	if p := entries[1].ContextMap()["path"]; p != "PATCH /scim/v2/Users/{id}" || entries[1].ContextMap()["id"] != id {
		t.Fatalf("path template %v, id %v", p, entries[1].ContextMap()["id"])
	}
	audit, err := f.dir.Audit(context.Background(), "acme", 0, 10)
	if err != nil || len(audit) != 2 {
		t.Fatalf("audit %d entries, %v", len(audit), err)
	}
	if audit[1].Actor != "scim-token:acme" || len(audit[1].Changes) != 1 || audit[1].Changes[0].Attr != "emails" ||
		!strings.HasPrefix(audit[1].Changes[0].New, "sha256:") {
		t.Fatalf("patch audit = %+v", audit[1])
	}
}
