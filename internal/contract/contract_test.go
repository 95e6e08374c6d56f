package contract_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"hrsync/internal/contract"
)

// collect gathers the violations a validator reports.
type collect struct {
	mu   sync.Mutex
	errs []error
}

func (c *collect) report(err error) { c.mu.Lock(); c.errs = append(c.errs, err); c.mu.Unlock() }
func (c *collect) all() []error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]error(nil), c.errs...)
}

func TestValidator(t *testing.T) {
	v, err := contract.New()
	if err != nil {
		t.Fatalf("load contract: %v", err)
	}
	const statusPath = "/api/ext/v1/collection/7f0c5d52-3a35-4c5b-9d8e-0d6f0c1a2b3c/orders/2b6e4f0a-1c2d-4e5f-8a9b-0c1d2e3f4a5b?companyId=acme"
	cases := []struct {
		name       string
		method     string
		path       string
		body       string
		status     int
		response   string
		violations []string
	}{
		{
			name: "valid order status", method: http.MethodGet, path: statusPath, status: 200,
			response: `{"id":"o1","createdAt":"2026-01-02T03:04:05Z","status":"Shipped","lineItems":[]}`,
		},
		{
			name: "status outside the enum", method: http.MethodGet, path: statusPath, status: 200,
			response:   `{"id":"o1","createdAt":"2026-01-02T03:04:05Z","status":"Lost","lineItems":[]}`,
			violations: []string{"response 200"},
		},
		{
			name: "missing required lineItems", method: http.MethodGet, path: statusPath, status: 200,
			response:   `{"id":"o1","createdAt":"2026-01-02T03:04:05Z","status":"Placed"}`,
			violations: []string{"lineItems"},
		},
		{
			name: "error body of the assumed shape", method: http.MethodGet, path: statusPath, status: 404,
			response: `{"error":{"code":"not_found","message":"no such order"}}`,
		},
		{
			name: "order status without companyId is an invalid request", method: http.MethodGet,
			path:   strings.TrimSuffix(statusPath, "?companyId=acme"),
			status: 200, response: `{"id":"o1","createdAt":"2026-01-02T03:04:05Z","status":"Placed","lineItems":[]}`,
			violations: []string{"server accepted an invalid request"},
		},
		{
			name: "people body without collectionId", method: http.MethodPost, path: "/api/ext/v1/people",
			body: `{"people":[]}`, status: 400, response: `{"error":{"code":"invalid_input","message":"collectionId is required"}}`,
		},
		{
			name: "emulator endpoints are outside the contract", method: http.MethodGet, path: "/_emulator/dataset",
			status: 200, response: `{"anything":true}`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got collect
			h := v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.response))
			}), got.report)
			srv := httptest.NewServer(h)
			defer srv.Close()

			req, err := http.NewRequestWithContext(t.Context(), tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if tc.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()

			errs := got.all()
			if len(errs) != len(tc.violations) {
				t.Fatalf("got %d violations %v, want %d", len(errs), errs, len(tc.violations))
			}
			for i, want := range tc.violations {
				if !strings.Contains(errs[i].Error(), want) {
					t.Errorf("violation %q does not mention %q", errs[i], want)
				}
			}
		})
	}
}

func TestTransportReportsInvalidRequests(t *testing.T) {
	v, err := contract.New()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`[{"id":"p1","firstName":"A","lastName":"B","email":"a@example.com"}]`))
	}))
	defer srv.Close()
	var got collect
	client := &http.Client{Transport: v.Transport(nil, got.report)}

	// addBalance must be a number: a string is a contract violation the transport reports.
	body := `{"collectionId":"c","people":[{"externalId":"1","addBalance":"ten"}]}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/api/ext/v1/people", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	errs := got.all()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "addBalance") {
		t.Fatalf("want one violation naming addBalance, got %v", errs)
	}
}
