package testservers

import (
	"context"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// Proxy forwards loopback TCP connections to a server, counting the bytes
// the server sends. Armed with At, it acts once when that count crosses
// a threshold: it cuts the connection carrying the crossing bytes (as a
// network that drops), or calls a function first (to change the server's
// files while a download is under way).
type Proxy struct {
	// Addr is where it listens.
	Addr string

	target string
	l      net.Listener
	sent   atomic.Int64
	mu     sync.Mutex
	at     int64
	cut    bool
	action func()
	fired  chan struct{}
}

// StartProxy starts a proxy to target for the test.
func StartProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy: %v", err)
	}
	p := &Proxy{Addr: l.Addr().String(), target: target, l: l}
	t.Cleanup(func() { _ = l.Close() })
	go p.serve()
	return p
}

// Port is the proxy's port.
func (p *Proxy) Port() int { return p.l.Addr().(*net.TCPAddr).Port }

// Sent is the count of bytes the server has sent through the proxy.
func (p *Proxy) Sent() int64 { return p.sent.Load() }

// At arms the proxy: once the server has sent more than n bytes in all,
// action (when not nil) runs, then, when cut is set, the connection that
// crossed n is closed. The returned channel closes when it has acted.
func (p *Proxy) At(n int64, cut bool, action func()) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.at, p.cut, p.action, p.fired = n, cut, action, make(chan struct{})
	return p.fired
}

func (p *Proxy) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		go p.forward(c)
	}
}

func (p *Proxy) forward(client net.Conn) {
	server, err := (&net.Dialer{}).DialContext(context.Background(), "tcp", p.target)
	if err != nil {
		_ = client.Close()
		return
	}
	closeBoth := func() { _ = client.Close(); _ = server.Close() }
	go func() { _, _ = io.Copy(server, client); closeBoth() }()
	buf := make([]byte, 16<<10)
	for {
		n, err := server.Read(buf)
		if n > 0 {
			if p.crossed(int64(n)) {
				closeBoth()
				return
			}
			if _, werr := client.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	closeBoth()
}

// crossed counts n more bytes sent and acts when they cross the armed
// threshold; it reports whether to cut the connection.
func (p *Proxy) crossed(n int64) bool {
	total := p.sent.Add(n)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fired == nil || total <= p.at {
		return false
	}
	if p.action != nil {
		p.action()
	}
	cut := p.cut
	close(p.fired)
	p.fired, p.action = nil, nil
	return cut
}
