// Package metricstest starts a real Prometheus Pushgateway for tests and
// reads the series it holds.
package metricstest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// EnvPushgateway names a variable that gives the Pushgateway binary when it
// is not prometheus-pushgateway on the PATH (Debian's package).
const EnvPushgateway = "HRSYNC_TEST_PUSHGATEWAY"

// Pushgateway is a Pushgateway process listening on a loopback port.
type Pushgateway struct {
	// URL is its base address, http://127.0.0.1:PORT.
	URL string
}

// binary finds the Pushgateway's binary; the test fails without one.
func binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(EnvPushgateway); p != "" {
		return p
	}
	for _, name := range []string{"prometheus-pushgateway", "pushgateway"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatalf("no Pushgateway binary: install it (apt-get install prometheus-pushgateway) or set %s", EnvPushgateway)
	return ""
}

// freePort asks the system for a free loopback port.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return port
}

// Start starts a Pushgateway without persistence on a free loopback port
// and waits until it is ready; it is stopped when the test ends.
func Start(t testing.TB) *Pushgateway {
	t.Helper()
	bin := binary(t)
	for range 3 { // the port may be taken between its choice and the start
		port := freePort(t)
		addr := "127.0.0.1:" + strconv.Itoa(port)
		// Not tied to the test's context: Cleanup stops it after the test's
		// context is done, and waits for it.
		cmd := exec.CommandContext(context.WithoutCancel(t.Context()), bin, "--web.listen-address="+addr) //nolint:gosec // the test's own binary and address
		if err := cmd.Start(); err != nil {
			t.Fatalf("start the pushgateway: %v", err)
		}
		proc := &process{done: make(chan struct{})}
		go func() {
			proc.err = cmd.Wait()
			close(proc.done)
		}()
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			<-proc.done
		})
		p := &Pushgateway{URL: "http://" + addr}
		if err := p.waitReady(proc); err == nil {
			return p
		} else if !errors.Is(err, errExited) {
			t.Fatalf("the pushgateway: %v", err)
		}
	}
	t.Fatal("the pushgateway did not start on a free port in 3 tries")
	return nil
}

var errExited = errors.New("the pushgateway exited")

// process is a started Pushgateway: done is closed when it has exited, with
// err the way it ended.
type process struct {
	done chan struct{}
	err  error
}

// waitReady waits until /-/ready answers 200, the process ends, or 20s pass.
func (p *Pushgateway) waitReady(proc *process) error {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-proc.done:
			return fmt.Errorf("%w: %w", errExited, proc.err)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+"/-/ready", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				cancel()
				return nil
			}
		}
		cancel()
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("not ready within 20s")
}

// Families reads every metric family the Pushgateway exposes on /metrics.
func (p *Pushgateway) Families(t testing.TB) map[string]*dto.MetricFamily {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("read the pushgateway's /metrics: %v", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("read the pushgateway's /metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse the pushgateway's /metrics: %v", err)
	}
	return families
}

// Value is the value of the one series of name whose labels are exactly
// labels (the Pushgateway's instance="" aside): a counter's or gauge's
// value, a histogram's sample count; ok is false when there is none.
func (p *Pushgateway) Value(t testing.TB, name string, labels map[string]string) (v float64, ok bool) {
	t.Helper()
	f := p.Families(t)[name]
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			if l.GetName() == "instance" && l.GetValue() == "" {
				continue
			}
			got[l.GetName()] = l.GetValue()
		}
		if !maps.Equal(got, labels) {
			continue
		}
		return Sample(m), true
	}
	return 0, false
}
