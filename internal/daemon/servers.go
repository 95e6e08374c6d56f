package daemon

// The daemon's HTTP listeners: /healthz, /readyz and /metrics on
// Options.Listen, and each of Options.Servers (the SCIM endpoint) on a
// listener and an http.Server of its own, so that one can be exposed
// without the other. All are opened before the scheduler starts and shut
// down, gracefully, after the runs in flight ended.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"go.uber.org/zap"
)

// Server is an HTTP endpoint the daemon serves beside /healthz, /readyz
// and /metrics, on a listener of its own.
type Server struct {
	// Name names the endpoint in logs and errors ("scim").
	Name string
	// Listen is its host:port; required.
	Listen string
	// Handler serves its requests; required. It bounds request bodies
	// itself: the server bounds only headers and times.
	Handler http.Handler
	// OnListen, when not nil, is told the address it listens on (useful
	// with port 0), once the scheduler runs.
	OnListen func(addr net.Addr)
}

// Timeouts of every server of the daemon: a slow or stalled client (or a
// slow-loris) holds a connection for a bounded time.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 60 * time.Second
	idleTimeout       = 2 * time.Minute
	maxHeaderBytes    = 64 << 10
	// shutdownTimeout bounds the wait for the requests in flight when the
	// servers stop.
	shutdownTimeout = 5 * time.Second
)

// served is one listener being served.
type served struct {
	name     string
	srv      *http.Server
	ln       net.Listener
	onListen func(net.Addr)
	stopped  bool // Serve returned on its own: nothing to shut down
}

// newServer returns an http.Server with the daemon's timeouts.
func newServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: readHeaderTimeout, ReadTimeout: readTimeout,
		WriteTimeout: writeTimeout, IdleTimeout: idleTimeout, MaxHeaderBytes: maxHeaderBytes}
}

// listen opens the listeners of the health endpoint (when Options.Listen
// is set) and of every Options.Servers. On an error it closes those it
// opened.
func (d *Daemon) listen(ctx context.Context) ([]*served, error) {
	var out []*served
	open := func(name, addr string, h http.Handler, onListen func(net.Addr)) error {
		ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
		if err != nil {
			return fmt.Errorf("listen on %s (%s): %w", addr, name, err)
		}
		out = append(out, &served{name: name, srv: newServer(h), ln: ln, onListen: onListen})
		return nil
	}
	var err error
	if d.opts.Listen != "" {
		err = open("health and metrics", d.opts.Listen, d.Handler(), d.opts.OnListen)
	}
	for _, s := range d.opts.Servers {
		if err != nil {
			break
		}
		err = open(s.Name, s.Listen, s.Handler, s.OnListen)
	}
	if err != nil {
		for _, s := range out {
			_ = s.ln.Close()
		}
		return nil, err
	}
	return out, nil
}

// serve serves every listener; the channel gets the error of each server
// that stops on its own (its listener failed).
func serve(list []*served) <-chan servedErr {
	errs := make(chan servedErr, len(list))
	for _, s := range list {
		go func() {
			err := s.srv.Serve(s.ln)
			if !errors.Is(err, http.ErrServerClosed) {
				errs <- servedErr{s: s, err: fmt.Errorf("%s server: %w", s.name, err)}
			}
		}()
	}
	return errs
}

// servedErr is the error that stopped one server.
type servedErr struct {
	s   *served
	err error
}

// announce logs where each server listens and tells its OnListen.
func (d *Daemon) announce(list []*served) {
	for _, s := range list {
		d.log.Info("daemon listening", zap.String("endpoint", s.name), zap.String("addr", s.ln.Addr().String()))
		if s.onListen != nil {
			s.onListen(s.ln.Addr())
		}
	}
}

// shutdown stops every server still serving: no new connection, and the
// requests in flight finish, within shutdownTimeout. It returns the first
// error.
func shutdown(ctx context.Context, list []*served) error {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	var first error
	for _, s := range list {
		if s.stopped {
			continue
		}
		if err := s.srv.Shutdown(sctx); err != nil && first == nil {
			first = fmt.Errorf("stop %s server: %w", s.name, err)
		}
	}
	return first
}
