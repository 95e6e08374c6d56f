package emulator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// ParseToken reads a token flag: "TOKEN" (the token sees the built-in
// dataset's company) or "TOKEN=companyA,companyB".
func ParseToken(s string) (token string, companies []string, err error) {
	token, list, hasList := strings.Cut(strings.TrimSpace(s), "=")
	token = strings.TrimSpace(token)
	if token == "" {
		return "", nil, errors.New("token: empty")
	}
	if !hasList {
		return token, nil, nil
	}
	for _, c := range strings.Split(list, ",") {
		if c = strings.TrimSpace(c); c != "" {
			companies = append(companies, c)
		}
	}
	if len(companies) == 0 {
		return "", nil, errors.New("token: no company after '='")
	}
	return token, companies, nil
}

// ServeConfig configures Serve.
type ServeConfig struct {
	// Listen is the address to listen on, such as 127.0.0.1:8080 (port 0
	// picks a free port; the line printed names it).
	Listen string
	// Options configure the emulator.
	Options Options
	// Out receives the one line that says where the emulator listens.
	Out io.Writer
	// ShutdownTimeout bounds the graceful shutdown; 0 means 5 s.
	ShutdownTimeout time.Duration
}

// ListeningLine is the line Serve prints once it listens, for people and
// for tests that start `hrsync emulator --listen 127.0.0.1:0`: the base URL
// is its fourth field.
func ListeningLine(baseURL string) string {
	return fmt.Sprintf("emulator listening on %s company=%s personalizable-collection=%s plain-collection=%s",
		baseURL, DatasetCompanyID, PersonalizableCollectionID, PlainCollectionID)
}

// Serve runs an emulator on cfg.Listen until ctx ends, then shuts it down
// gracefully: calls still waiting (personalize delays, injected latency)
// are released, and the server waits for them up to cfg.ShutdownTimeout.
func Serve(ctx context.Context, cfg ServeConfig) error {
	emu, err := New(cfg.Options)
	if err != nil {
		return err
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	// Requests get a context that ends when shutdown starts, so that a
	// handler sleeping through a delay returns at once.
	base, release := context.WithCancel(context.WithoutCancel(ctx))
	defer release()
	srv := &http.Server{
		Handler:           emu,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return base },
	}
	if cfg.Out != nil {
		if _, err := fmt.Fprintln(cfg.Out, ListeningLine("http://"+ln.Addr().String())); err != nil {
			_ = ln.Close()
			return fmt.Errorf("print address: %w", err)
		}
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	release()
	timeout := cfg.ShutdownTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}
