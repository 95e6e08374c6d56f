package scim_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	"golang.org/x/time/rate"

	"hrsync/sources/scim"
	"hrsync/sources/scim/directory"
)

const (
	tokenAcme   = "acme-secret-token"
	tokenGlobex = "globex-secret-token"
)

type fixture struct {
	t    *testing.T
	srv  *httptest.Server
	dir  *directory.Memory
	logs *observer.ObservedLogs
}

func newFixture(t *testing.T, mutate func(*scim.Options)) *fixture {
	t.Helper()
	tokFile := filepath.Join(t.TempDir(), "acme.token")
	if err := os.WriteFile(tokFile, []byte(tokenAcme+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zap.DebugLevel)
	dir := directory.NewMemory(nil)
	opts := scim.Options{
		Directory: dir,
		Tenants:   map[string]scim.TokenSource{"acme": scim.FileToken(tokFile), "globex": scim.StaticToken(tokenGlobex)},
		Logger:    zap.New(core),
		Rate:      rate.Inf,
	}
	if mutate != nil {
		mutate(&opts)
	}
	h, err := scim.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &fixture{t: t, srv: srv, dir: dir, logs: logs}
}

type answer struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func (f *fixture) call(method, path, token string, body io.Reader, headers ...string) answer {
	f.t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, f.srv.URL+"/scim/v2"+path, body)
	if err != nil {
		f.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/scim+json; charset=utf-8")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		f.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &a.body); err != nil {
			f.t.Fatalf("%s %s: answer is not JSON: %q", method, path, raw)
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/scim+json") {
			f.t.Fatalf("%s %s: Content-Type %q", method, path, ct)
		}
	}
	return a
}

func (f *fixture) do(method, path, body string, headers ...string) answer {
	f.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	return f.call(method, path, tokenAcme, r, headers...)
}

// wantError checks a SCIM error answer.
func (a answer) wantError(t *testing.T, status int, scimType string) {
	t.Helper()
	if a.status != status {
		t.Fatalf("status %d, want %d: %s", a.status, status, a.raw)
	}
	schemas, _ := a.body["schemas"].([]any)
	if len(schemas) != 1 || schemas[0] != "urn:ietf:params:scim:api:messages:2.0:Error" {
		t.Fatalf("error schemas = %v", a.body["schemas"])
	}
	if got, _ := a.body["status"].(string); got != http.StatusText(status) && got != itoa(status) {
		t.Fatalf("error status = %v, want %q", a.body["status"], itoa(status))
	}
	if got, _ := a.body["scimType"].(string); got != scimType {
		t.Fatalf("scimType = %q, want %q: %s", got, scimType, a.raw)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func (a answer) str(path ...string) string {
	var cur any = a.body
	for _, p := range path {
		m, _ := cur.(map[string]any)
		cur = m[p]
	}
	s, _ := cur.(string)
	return s
}

func (f *fixture) count(tenant string) int {
	f.t.Helper()
	page, err := f.dir.List(context.Background(), tenant, directory.Query{Count: 1000})
	if err != nil {
		f.t.Fatal(err)
	}
	return page.Total
}

// createJensen posts the User of RFC 7644 section 3.3's example, in our own words.
func (f *fixture) createJensen() answer {
	f.t.Helper()
	a := f.do("POST", "/Users", `{
		"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
		"userName": "bjensen",
		"externalId": "bjensen",
		"name": {"formatted": "Ms. Barbara J Jensen III", "familyName": "Jensen", "givenName": "Barbara"}
	}`)
	if a.status != http.StatusCreated {
		f.t.Fatalf("create: %d %s", a.status, a.raw)
	}
	return a
}
