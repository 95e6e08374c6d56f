// Package sftpdrop is the SFTP backend of drop folders: a folder on an SFTP
// server (github.com/pkg/sftp over golang.org/x/crypto/ssh), reached with a
// password or a private key read from mounted files, the server's host key
// checked against a known_hosts file. It registers itself as the drop
// folder type "sftp"; remotedrop keeps the protocol.
package sftpdrop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"hrsync/sources"
	"hrsync/sources/remotedrop"
)

// dialTimeout bounds the TCP connection and the SSH handshake.
const dialTimeout = 30 * time.Second

// Open opens the SFTP folder opts locates, read as cfg says. Nothing is
// read or connected yet: each step of the protocol connects on its own,
// reading the credentials and known_hosts then (a rotated secret is picked
// up), so that a wrong host, credential or host key fails the run that
// meets it.
func Open(opts SFTPOptions, cfg sources.DropConfig) sources.DropFolder {
	if opts.Port == 0 {
		opts.Port = DefaultPort
	}
	warn := cfg.Warn
	if warn == nil {
		warn = func(string) {}
	}
	session := func(ctx context.Context) (remotedrop.Store, error) { return dial(ctx, opts, warn) }
	return remotedrop.New(session, cfg)
}

// dial opens a session with the server of opts, in the folder opts.Dir.
// warn is told when the host key is not checked.
func dial(ctx context.Context, opts SFTPOptions, warn func(string)) (remotedrop.Store, error) {
	where := net.JoinHostPort(opts.Host, strconv.Itoa(opts.Port))
	config, err := clientConfig(opts, warn)
	if err != nil {
		return nil, fmt.Errorf("sftp %s: %w", where, err)
	}
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(dctx, "tcp", where)
	if err != nil {
		return nil, fmt.Errorf("sftp %s: connect: %w", where, err)
	}
	// The handshake takes no context: a deadline bounds it.
	deadline, _ := dctx.Deadline()
	_ = conn.SetDeadline(deadline)
	c, chans, reqs, err := ssh.NewClientConn(conn, where, config)
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("sftp %s: ssh: %w", where, err)
	}
	_ = conn.SetDeadline(time.Time{})
	client := ssh.NewClient(c, chans, reqs)
	sc, err := sftp.NewClient(client)
	if err != nil {
		_ = client.Close()
		return nil, fmt.Errorf("sftp %s: start sftp: %w", where, err)
	}
	st := &store{ssh: client, sftp: sc, dir: opts.Dir, user: opts.User}
	// A context that ends closes the connection, so that no read hangs on
	// a server that went silent.
	st.stop = context.AfterFunc(ctx, func() { _ = client.Close() })
	return st, nil
}

// clientConfig is the SSH configuration of opts: its user, credential and
// host key check.
func clientConfig(opts SFTPOptions, warn func(string)) (*ssh.ClientConfig, error) {
	var auth []ssh.AuthMethod
	if opts.PrivateKeyFile != "" {
		pem, err := os.ReadFile(opts.PrivateKeyFile)
		if err != nil {
			return nil, fmt.Errorf("privateKeyFile: %w", err)
		}
		signer, err := ssh.ParsePrivateKey(pem)
		if err != nil {
			return nil, fmt.Errorf("privateKeyFile %s: not a private key without passphrase: %w", path.Base(opts.PrivateKeyFile), err)
		}
		auth = append(auth, ssh.PublicKeys(signer))
	}
	if opts.PasswordFile != "" {
		pw, err := os.ReadFile(opts.PasswordFile)
		if err != nil {
			return nil, fmt.Errorf("passwordFile: %w", err)
		}
		auth = append(auth, ssh.Password(strings.TrimRight(string(pw), "\r\n")))
	}
	var check ssh.HostKeyCallback
	if opts.InsecureIgnoreHostKey {
		warn("sftp host key NOT checked (insecureIgnoreHostKey): anyone between hrsync and " + opts.Host + " could read the exports")
		check = ssh.InsecureIgnoreHostKey() //nolint:gosec // an explicit choice of the configuration, logged at warn
	} else {
		var err error
		if check, err = knownhosts.New(opts.KnownHostsFile); err != nil {
			return nil, fmt.Errorf("knownHostsFile: %w", err)
		}
	}
	return &ssh.ClientConfig{User: opts.User, Auth: auth, HostKeyCallback: check, Timeout: dialTimeout}, nil
}

// store is one SFTP session in the drop folder dir.
type store struct {
	ssh  *ssh.Client
	sftp *sftp.Client
	dir  string
	// user is the SFTP user the session logs in as: who placed a file, as
	// far as hrsync can tell (remotedrop.Entry.By).
	user string
	stop func() bool
}

func (s *store) path(name string) string { return path.Join(s.dir, name) }

// folder checks, with Lstat over SFTP (a link is not followed), the
// sub-folder that name ("processed/x.csv") is in, if any: a link or a
// file in its place is refused (sources.CheckSubfolder), so that nothing
// is read from or written through it. One that does not exist yet passes.
func (s *store) folder(ctx context.Context, name string) error {
	dir, _, _ := strings.Cut(path.Clean(name), "/")
	if dir == path.Clean(name) || dir == "." {
		return nil // a file of the drop folder itself
	}
	return s.CheckFolder(ctx, dir)
}

// CheckFolder checks the sub-folder dir of the drop folder with Lstat
// over SFTP: a link or a file in its place is refused
// (sources.CheckSubfolder); one that does not exist passes.
func (s *store) CheckFolder(_ context.Context, dir string) error {
	fi, err := s.sftp.Lstat(s.path(dir))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("look at %s/: %w", dir, err)
	}
	return sources.CheckSubfolder(dir, fi.Mode())
}

// entry describes a file the server listed; By is the session's user.
func (s *store) entry(fi fs.FileInfo) remotedrop.Entry {
	return remotedrop.Entry{Name: fi.Name(), Size: fi.Size(), ModTime: fi.ModTime(), By: s.user}
}

// MakeFolder creates the sub-folder dir of the drop folder when it is not
// there (one level), and refuses one that is a link or not a folder,
// before and after (sources.CheckSubfolder).
func (s *store) MakeFolder(ctx context.Context, dir string) error {
	if err := s.CheckFolder(ctx, dir); err != nil {
		return err
	}
	if _, err := s.sftp.Lstat(s.path(dir)); err == nil {
		return nil
	}
	if err := s.sftp.Mkdir(s.path(dir)); err != nil {
		if _, serr := s.sftp.Lstat(s.path(dir)); serr != nil {
			return fmt.Errorf("create %s/: %w", dir, err)
		}
	}
	return s.CheckFolder(ctx, dir)
}

// List returns the regular files directly in dir (links are not followed:
// listed by what they are, they are not regular files).
func (s *store) List(ctx context.Context, dir string) ([]remotedrop.Entry, error) {
	if dir != "" {
		if err := s.CheckFolder(ctx, dir); err != nil {
			return nil, err
		}
	}
	infos, err := s.sftp.ReadDirContext(ctx, s.path(dir))
	if errors.Is(err, fs.ErrNotExist) && dir != "" {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dirName(dir), err)
	}
	out := make([]remotedrop.Entry, 0, len(infos))
	for _, fi := range infos {
		if fi.Mode().IsRegular() {
			out = append(out, s.entry(fi))
		}
	}
	return out, nil
}

func dirName(dir string) string {
	if dir == "" {
		return "drop folder"
	}
	return dir + "/"
}

// Stat describes one file (a link is not followed).
func (s *store) Stat(ctx context.Context, name string) (remotedrop.Entry, error) {
	if err := s.folder(ctx, name); err != nil {
		return remotedrop.Entry{}, err
	}
	fi, err := s.sftp.Lstat(s.path(name))
	if err != nil {
		return remotedrop.Entry{}, err
	}
	if !fi.Mode().IsRegular() {
		return remotedrop.Entry{}, fmt.Errorf("%s is not a regular file: %w", sources.DisplayName(path.Base(name)), fs.ErrNotExist)
	}
	return s.entry(fi), nil
}

// Open opens a file for reading.
func (s *store) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	if err := s.folder(ctx, name); err != nil {
		return nil, err
	}
	return s.sftp.Open(s.path(name))
}

// WriteReport writes a new file of the given mode (reports.mode for a
// report), failing if the name is taken (SFTP's exclusive create). The
// mode is set before anything is written.
func (s *store) WriteReport(ctx context.Context, name string, write func(io.Writer) error, mode fs.FileMode) error {
	p := s.path(name)
	if err := s.folder(ctx, name); err != nil {
		return err
	}
	if err := s.sftp.MkdirAll(path.Dir(p)); err != nil {
		return fmt.Errorf("create %s/: %w", path.Dir(name), err)
	}
	if err := s.folder(ctx, name); err != nil {
		return err // made a link meanwhile
	}
	f, err := s.sftp.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		if _, serr := s.sftp.Lstat(p); serr == nil {
			return fs.ErrExist
		}
		return err
	}
	if err := f.Chmod(mode.Perm()); err != nil {
		_ = f.Close()
		return fmt.Errorf("chmod: %w", err)
	}
	if err := write(f); err != nil {
		_ = f.Close()
		return fmt.Errorf("write: %w", err)
	}
	return f.Close()
}

// Archive renames from to to. SFTP's rename never overwrites (OpenSSH's
// server links, then unlinks); a file written to between the check and the
// rename is caught afterwards, and put back.
func (s *store) Archive(ctx context.Context, from, to string, want remotedrop.Entry) error {
	for _, name := range []string{from, to} {
		if err := s.folder(ctx, name); err != nil {
			return err
		}
	}
	if _, err := s.sftp.Lstat(s.path(to)); err == nil {
		return fs.ErrExist
	}
	if err := s.sftp.Rename(s.path(from), s.path(to)); err != nil {
		if _, serr := s.sftp.Lstat(s.path(to)); serr == nil {
			return fs.ErrExist
		}
		if _, serr := s.sftp.Lstat(s.path(from)); errors.Is(serr, fs.ErrNotExist) {
			return fs.ErrNotExist
		}
		return err
	}
	moved, err := s.Stat(ctx, to)
	if err != nil {
		return fmt.Errorf("stat archived file: %w", err)
	}
	if moved.Size == want.Size && moved.ModTime.Equal(want.ModTime) {
		return nil
	}
	if err := s.sftp.Rename(s.path(to), s.path(from)); err != nil {
		return fmt.Errorf("changed while archived, and could not be put back from %s: %w", path.Dir(to), err)
	}
	return sources.ErrChanged
}

// Remove removes a file.
func (s *store) Remove(ctx context.Context, name string) error {
	if err := s.folder(ctx, name); err != nil {
		return err
	}
	return s.sftp.Remove(s.path(name))
}

// Close ends the session.
func (s *store) Close() error {
	s.stop()
	err := s.sftp.Close()
	if cerr := s.ssh.Close(); err == nil && !errors.Is(cerr, net.ErrClosed) {
		err = cerr
	}
	return err
}
