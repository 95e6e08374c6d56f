// Package testservers starts the real servers the drop-folder tests need,
// on random loopback ports, for the life of a test: OpenSSH's sshd with its
// SFTP server, and versitygw serving S3 over a plain folder. A server whose
// binary is missing fails the test (never skips it): .ci/run installs both.
package testservers

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// EnvSSHD names the variable that can point at sshd; the default is
// Debian's /usr/sbin/sshd (package openssh-server).
const EnvSSHD = "HRSYNC_TEST_SSHD"

// SSHD is an OpenSSH server on a loopback port that lets the current user
// in with one key, and serves SFTP (internal-sftp).
type SSHD struct {
	// Host and Port are where it listens.
	Host string
	Port int
	// User is the login (the current user).
	User string
	// PrivateKeyFile and KnownHostsFile are the client's key and a
	// known_hosts file holding the server's host key.
	PrivateKeyFile string
	KnownHostsFile string
	// HostKey is the server's public host key, for a known_hosts line of
	// another address (a proxy in front of it).
	HostKey ssh.PublicKey
	// OtherKnownHostsFile holds another host key for the same address: a
	// client trusting it must refuse the server.
	OtherKnownHostsFile string

	bin, config string
	proc        *process
}

// StartSSHD starts sshd for the test and stops it when the test ends.
func StartSSHD(t testing.TB) *SSHD {
	t.Helper()
	bin := os.Getenv(EnvSSHD)
	if bin == "" {
		bin = "/usr/sbin/sshd"
	}
	if _, err := os.Stat(bin); err != nil { //nolint:gosec // the test environment names the server binary
		t.Fatalf("the SFTP tests need OpenSSH's sshd (Debian package openssh-server; or set %s): %v", EnvSSHD, err)
	}
	u, err := user.Current()
	if err != nil {
		t.Fatalf("current user: %v", err)
	}
	if os.Geteuid() == 0 {
		// sshd run by root wants its privilege separation folder.
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil { //nolint:gosec // sshd requires this mode of its privilege separation folder
			t.Fatalf("sshd privilege separation folder: %v", err)
		}
	}
	dir := t.TempDir()
	s := &SSHD{Host: "127.0.0.1", Port: freePort(t), User: u.Username, bin: bin}
	hostPub := writeKey(t, filepath.Join(dir, "host_key"))
	clientPub := writeKey(t, filepath.Join(dir, "client_key"))
	otherPub := writeKey(t, filepath.Join(dir, "other_host_key"))
	s.PrivateKeyFile = filepath.Join(dir, "client_key")
	s.HostKey = hostPub
	writeFile(t, filepath.Join(dir, "authorized_keys"), ssh.MarshalAuthorizedKey(clientPub))
	addr := knownhosts.Normalize(net.JoinHostPort(s.Host, strconv.Itoa(s.Port)))
	s.KnownHostsFile = filepath.Join(dir, "known_hosts")
	writeFile(t, s.KnownHostsFile, []byte(knownhosts.Line([]string{addr}, hostPub)+"\n"))
	s.OtherKnownHostsFile = filepath.Join(dir, "other_known_hosts")
	writeFile(t, s.OtherKnownHostsFile, []byte(knownhosts.Line([]string{addr}, otherPub)+"\n"))
	s.config = filepath.Join(dir, "sshd_config")
	writeFile(t, s.config, []byte(strings.Join([]string{
		"ListenAddress " + net.JoinHostPort(s.Host, strconv.Itoa(s.Port)),
		"HostKey " + filepath.Join(dir, "host_key"),
		"AuthorizedKeysFile " + filepath.Join(dir, "authorized_keys"),
		"PidFile none",
		"StrictModes no",
		"UsePAM no",
		"PubkeyAuthentication yes",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"PermitRootLogin prohibit-password",
		"Subsystem sftp internal-sftp",
		"LogLevel FATAL",
		"",
	}, "\n")))
	s.Start(t)
	t.Cleanup(s.Stop)
	return s
}

// Start starts the server (again, after Stop) on its port, with its keys.
func (s *SSHD) Start(t testing.TB) {
	t.Helper()
	s.proc = startProcess(t, nil, s.bin, "-D", "-e", "-f", s.config)
	waitBanner(t, net.JoinHostPort(s.Host, strconv.Itoa(s.Port)), "SSH-", s.proc.done)
}

// Stop kills the server and every session it serves: the listener forks
// one process per connection, and a server going down ends them all.
func (s *SSHD) Stop() { s.proc.stop(true) }

// descendants lists the processes below pid (Linux: from /proc).
func descendants(pid int) []int {
	parent := map[int]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so cut after ')'.
		rest := string(b[strings.LastIndexByte(string(b), ')')+1:])
		fields := strings.Fields(rest)
		if len(fields) < 2 {
			continue
		}
		child, err1 := strconv.Atoi(filepath.Base(filepath.Dir(path)))
		ppid, err2 := strconv.Atoi(fields[1])
		if err1 == nil && err2 == nil {
			parent[child] = ppid
		}
	}
	var out []int
	for child := range parent {
		for p := parent[child]; p > 1; p = parent[p] {
			if p == pid {
				out = append(out, child)
				break
			}
		}
	}
	return out
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	return port
}

// writeKey writes a new ed25519 private key in OpenSSH form to path and
// returns its public key.
func writeKey(t testing.TB, path string) ssh.PublicKey {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, pem.EncodeToMemory(block))
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return sshPub
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// waitBanner waits until addr accepts a connection whose first bytes are
// prefix (or, with prefix "", any connection), or the server exits.
func waitBanner(t testing.TB, addr, prefix string, exited <-chan struct{}) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			t.Fatalf("server for %s exited at start (its output is above)", addr)
		default:
		}
		if bannerOK(addr, prefix) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("server for %s not ready after 60 s", addr)
}

func bannerOK(addr, prefix string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	defer c.Close()
	if prefix == "" {
		return true
	}
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, prefix)
}

// String names the server for test logs.
func (s *SSHD) String() string { return fmt.Sprintf("sshd %s:%d", s.Host, s.Port) }
