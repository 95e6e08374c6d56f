package emulator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"hrsync/api"
	"hrsync/internal/contract"
)

// testNow is the fixed clock of the tests.
func testNow() time.Time { return time.Date(2025, 6, 15, 12, 0, 0, 0, time.UTC) }

const (
	tokDataset = "tok-dataset"     // sees the dataset's company
	tokMulti   = "tok-multi"       // sees the dataset's company and acme
	tokAcme    = "tok-acme"        // sees acme only
	acme       = "acme-company-id" // a company with no dataset
)

type fixture struct {
	emu    *Emulator
	srv    *httptest.Server
	client *api.ClientWithResponses
}

// newFixture serves an emulator behind the contract validator, so every
// response is checked against api/openapi.yaml.
func newFixture(t *testing.T, mutate func(*Options)) *fixture {
	t.Helper()
	opts := Options{
		Tokens:           map[string][]string{tokDataset: nil, tokMulti: {DatasetCompanyID, acme}, tokAcme: {acme}},
		PersonalizeDelay: &DelayRange{},
		Clock:            testNow,
		Seed:             7,
	}
	if mutate != nil {
		mutate(&opts)
	}
	emu, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	v, err := contract.New()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(v.Middleware(emu, func(err error) { t.Error(err) }))
	t.Cleanup(srv.Close)
	return &fixture{emu: emu, srv: srv, client: clientFor(t, srv.URL, tokDataset)}
}

func bearer(token string) api.RequestEditorFn {
	return func(_ context.Context, r *http.Request) error {
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		return nil
	}
}

func clientFor(t *testing.T, url, token string) *api.ClientWithResponses {
	t.Helper()
	c, err := api.NewClientWithResponses(url, api.WithRequestEditorFn(bearer(token)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// do sends a raw request and returns the status and body.
func (f *fixture) do(t *testing.T, method, path, token string, body string, header ...string) (int, http.Header, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, f.srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// errorOf decodes the error shape and fails unless it is one.
func errorOf(t *testing.T, body []byte) api.Error {
	t.Helper()
	var e api.Error
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
		t.Fatalf("body %s is not the error shape: %v", body, err)
	}
	return e
}

func wantError(t *testing.T, status int, body []byte, wantStatus int, wantCode, wantInMessage string) {
	t.Helper()
	if status != wantStatus {
		t.Fatalf("status %d, want %d (body %s)", status, wantStatus, body)
	}
	e := errorOf(t, body)
	if e.Error.Code != wantCode {
		t.Errorf("code %q, want %q", e.Error.Code, wantCode)
	}
	if !strings.Contains(e.Error.Message, wantInMessage) {
		t.Errorf("message %q does not contain %q", e.Error.Message, wantInMessage)
	}
}

func u(s string) uuid.UUID { return uuid.MustParse(s) }

func sp(s string) *string { return &s }

func fp(f float64) *float64 { return &f }

func u2(s string) (uuid.UUID, error) { return uuid.Parse(s) }

func isErr(err, target error) bool { return errors.Is(err, target) }

// newPlainServer serves the emulator without the contract validator, for
// answers the contract does not list (413).
func newPlainServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}
