package daemon

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"

	"hrsync/internal/runner"
	"hrsync/model"
)

// TestServers runs a daemon with an endpoint of its own beside the health
// and metrics one: each listener serves only its own paths, a request in
// flight at shutdown is answered, and both listeners are closed once Run
// returns.
func TestServers(t *testing.T) {
	reg := runner.NewRegistry()
	if err := reg.Register(model.JobPeople, "acme", func(context.Context) (runner.Result, error) { return runner.Result{}, nil }); err != nil {
		t.Fatal(err)
	}
	r, err := runner.New(runner.Options{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	inFlight, release := make(chan struct{}), make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /scim/v2/ServiceProviderConfig", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("scim")) })
	mux.HandleFunc("GET /scim/v2/slow", func(w http.ResponseWriter, _ *http.Request) {
		close(inFlight)
		<-release
		_, _ = w.Write([]byte("done"))
	})
	health, scim := make(chan string, 1), make(chan string, 1)
	d, err := New(Options{
		Runner: r, Triggered: []runner.Key{key("acme")}, Listen: "127.0.0.1:0",
		OnListen: func(a net.Addr) { health <- a.String() },
		Servers:  []Server{{Name: "scim", Listen: "127.0.0.1:0", Handler: mux, OnListen: func(a net.Addr) { scim <- a.String() }}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	hAddr, sAddr := <-health, <-scim
	if hAddr == sAddr {
		t.Fatalf("one address for both endpoints: %s", hAddr)
	}
	get := func(addr, path string) (int, error) { return getStatus(t, addr, path) }
	for _, c := range []struct {
		addr, path string
		want       int
	}{
		{sAddr, "/scim/v2/ServiceProviderConfig", http.StatusOK},
		{sAddr, "/metrics", http.StatusNotFound},
		{sAddr, "/healthz", http.StatusNotFound},
		{hAddr, "/healthz", http.StatusOK},
		{hAddr, "/scim/v2/ServiceProviderConfig", http.StatusNotFound},
	} {
		if code, err := get(c.addr, c.path); err != nil || code != c.want {
			t.Errorf("GET %s on %s: %d %v, want %d", c.path, c.addr, code, err, c.want)
		}
	}

	slow := make(chan error, 1)
	go func() {
		code, err := get(sAddr, "/scim/v2/slow")
		if err == nil && code != http.StatusOK {
			err = errors.New(http.StatusText(code))
		}
		slow <- err
	}()
	<-inFlight
	cancel()
	waitUntil(t, "the scim listener closed by the shutdown", func() bool { _, err := get(sAddr, "/"); return err != nil })
	close(release) // the request in flight is answered after its listener closed
	if err := <-slow; err != nil {
		t.Errorf("the request in flight at shutdown: %v", err)
	}
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	for _, addr := range []string{hAddr, sAddr} {
		if _, err := get(addr, "/"); err == nil {
			t.Errorf("%s still answers after Run returned", addr)
		}
	}
}

// getStatus answers the status of GET path on addr, or the error of a
// connection refused.
func getStatus(t *testing.T, addr, path string) (int, error) {
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

// TestServersListenError checks that a port already taken stops Run before
// anything is scheduled, naming the endpoint.
func TestServersListenError(t *testing.T) {
	taken, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	r, err := runner.New(runner.Options{Registry: runner.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(Options{Runner: r, Triggered: []runner.Key{key("acme")}, Listen: "127.0.0.1:0",
		Servers: []Server{{Name: "scim", Listen: taken.Addr().String(), Handler: http.NotFoundHandler()}}})
	if err != nil {
		t.Fatal(err)
	}
	err = d.Run(t.Context())
	if err == nil || !strings.Contains(err.Error(), "(scim)") {
		t.Errorf("Run = %v, want a listen error naming scim", err)
	}
}
