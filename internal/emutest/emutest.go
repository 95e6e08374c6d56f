// Package emutest serves the platform's emulator to tests over loopback,
// behind the validation of hrsync's contract (api/openapi.yaml), with an
// API client that talks to it and retries quickly.
package emutest

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"hrsync/apiclient"
	"hrsync/emulator"
	"hrsync/internal/contract"
)

// Token is the API token the emulator of New accepts.
const Token = "test-token"

// New returns a fresh emulator with its built-in dataset (seed 1) that
// accepts Token.
func New(t testing.TB) *emulator.Emulator {
	t.Helper()
	emu, err := emulator.New(emulator.Options{Tokens: map[string][]string{Token: nil}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return emu
}

// Validated wraps h with the contract's validation: a request or an answer
// outside the contract fails t.
func Validated(t testing.TB, h http.Handler) http.Handler {
	t.Helper()
	v, err := contract.New()
	if err != nil {
		t.Fatal(err)
	}
	return v.Middleware(h, func(err error) { t.Error(err) })
}

// Client serves h on a loopback server for the rest of the test and
// returns a client of it with Token, a 5s timeout and 3 quick attempts.
func Client(t testing.TB, h http.Handler) *apiclient.Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	client, err := apiclient.New(apiclient.Config{
		BaseURL: srv.URL, Token: Token, UserAgentVersion: "test",
		Timeout: 5 * time.Second, MaxAttempts: 3, BackoffBase: time.Millisecond, BackoffMax: 5 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// Start returns a fresh emulator served behind the contract's validation,
// and a client of it.
func Start(t testing.TB) (*emulator.Emulator, *apiclient.Client) {
	t.Helper()
	emu := New(t)
	return emu, Client(t, Validated(t, emu))
}

// Serve serves a fresh emulator (seed 1, accepting Token, personalize
// answering at once instead of after 15-20 s) on a loopback server behind
// the contract's validation, for a child process such as the hrsync
// binary or its container; it returns the emulator and its base URL.
func Serve(t testing.TB) (*emulator.Emulator, string) {
	t.Helper()
	emu, err := emulator.New(emulator.Options{Tokens: map[string][]string{Token: nil}, Seed: 1, PersonalizeDelay: &emulator.DelayRange{}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Validated(t, emu))
	t.Cleanup(srv.Close)
	return emu, srv.URL
}
