package main_test

// Helpers that start mailpit, a real SMTP server that keeps what it
// receives and shows it over an HTTP API, for the notification tests.

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"hrsync/internal/testservers"
)

// mailpitEnv names the variable that gives the mailpit binary (the Makefile
// sets it); by default bin/tools/mailpit (make test-deps), else PATH.
const mailpitEnv = "HRSYNC_TEST_MAILPIT"

// mailpit is a running mailpit: its SMTP port (STARTTLS required, any
// credentials accepted) and its HTTP API, and the certificate of the
// authority that signed its TLS certificate.
type mailpit struct {
	smtpPort int
	api      string
	caFile   string
}

// freePort returns a loopback TCP port free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startMailpit starts mailpit on random loopback ports with a fresh
// certificate for 127.0.0.1, and stops it when the test ends. A missing
// binary fails the test.
func startMailpit(t *testing.T) *mailpit {
	t.Helper()
	bin := testservers.Tool(t, mailpitEnv, "mailpit")
	dir := t.TempDir()
	m := &mailpit{smtpPort: freePort(t), caFile: filepath.Join(dir, "ca.pem")}
	httpPort := freePort(t)
	m.api = "http://127.0.0.1:" + strconv.Itoa(httpPort)
	cert, key := writeTLSPair(t, dir, m.caFile)
	cmd := exec.Command(bin, "--smtp", "127.0.0.1:"+strconv.Itoa(m.smtpPort), "--listen", "127.0.0.1:"+strconv.Itoa(httpPort),
		"--database", filepath.Join(dir, "mailpit.db"), "--smtp-tls-cert", cert, "--smtp-tls-key", key,
		"--smtp-require-starttls", "--smtp-auth-accept-any", "--disable-version-check", "--quiet")
	logf, err := os.Create(filepath.Join(dir, "mailpit.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("start mailpit (%s): %v", bin, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = logf.Close()
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(m.api + "/api/v1/messages")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "mailpit.log"))
			t.Fatalf("mailpit did not answer on %s: %v\n%s", m.api, err, b)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return m
}

// mailpitMessage is a received message as mailpit's API gives it.
type mailpitMessage struct {
	ID      string
	Subject string
	From    struct{ Address string }
	To      []struct{ Address string }
	Text    string
	HTML    string
}

// messages returns every message mailpit received, newest first, whole.
func (m *mailpit) messages(t *testing.T) []mailpitMessage {
	t.Helper()
	var list struct {
		Messages []struct{ ID string }
	}
	m.get(t, "/api/v1/messages", &list)
	out := make([]mailpitMessage, 0, len(list.Messages))
	for _, s := range list.Messages {
		var msg mailpitMessage
		m.get(t, "/api/v1/message/"+s.ID, &msg)
		out = append(out, msg)
	}
	return out
}

func (m *mailpit) get(t *testing.T, path string, out any) {
	t.Helper()
	resp, err := http.Get(m.api + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("mailpit %s: %s", path, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("mailpit %s: %v", path, err)
	}
}

// writeTLSPair writes a certificate authority to caFile and a certificate
// for 127.0.0.1 it signed, with its key, into dir.
func writeTLSPair(t *testing.T, dir, caFile string) (certFile, keyFile string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "hrsync test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	for path, block := range map[string]*pem.Block{
		caFile:   {Type: "CERTIFICATE", Bytes: caDER},
		certFile: {Type: "CERTIFICATE", Bytes: der},
		keyFile:  {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(fmt.Errorf("write %s: %w", filepath.Base(path), err))
		}
	}
	return certFile, keyFile
}
