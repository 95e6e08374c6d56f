package sftpdrop

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"hrsync/sources"
	"hrsync/sources/dropfolder"
	"hrsync/sources/dropkind"
	"hrsync/sources/registry"
)

// Type is the SFTP kind's type in a tenant's csv section.
const Type = "sftp"

// DefaultPort is the port of SFTPOptions when none is set.
const DefaultPort = 22

func init() {
	registry.Register(registry.Kind{
		Section: dropkind.Section, Type: Type, Noun: dropkind.Noun, Key: "sftp",
		Misplaced: func(typ string) string { return fmt.Sprintf("is set but type is %s: set type: %s", typ, Type) },
		New:       func() registry.Options { return &Options{} },
	})
}

// SFTPOptions locate a drop folder on an SFTP server. Secrets are never
// written in the configuration: the password and the private key are read
// from files (mounted secrets) when the folder is opened.
type SFTPOptions struct {
	// Host is the server's name or address.
	Host string `yaml:"host"`
	// Port is the server's port. Default 22.
	Port int `yaml:"port,omitempty"`
	// User is the login.
	User string `yaml:"user"`
	// Dir is the drop folder on the server (absolute, or relative to the
	// login's home). processed/ and failed/ are created in it.
	Dir string `yaml:"dir"`
	// PasswordFile names a file holding the password.
	PasswordFile string `yaml:"passwordFile,omitempty"`
	// PrivateKeyFile names a file holding a private key (OpenSSH or PEM
	// form, not protected by a passphrase).
	PrivateKeyFile string `yaml:"privateKeyFile,omitempty"`
	// KnownHostsFile names a known_hosts file holding the server's host
	// key, checked at every connection.
	KnownHostsFile string `yaml:"knownHostsFile,omitempty"`
	// InsecureIgnoreHostKey turns the host key check off: anyone between
	// hrsync and the server could read the exports. Logged at warn at
	// every connection.
	InsecureIgnoreHostKey bool `yaml:"insecureIgnoreHostKey,omitempty"`
}

// Options configure a drop folder on an SFTP server: the csv section with
// type sftp and its sftp block.
type Options struct {
	dropkind.Common `yaml:",inline"`
	// SFTP locates the folder.
	SFTP *SFTPOptions `yaml:"sftp,omitempty"`
}

// Kind is "sftp".
func (o *Options) Kind() string { return Type }

// FillDefaults sets the defaults, the port included.
func (o *Options) FillDefaults() {
	o.Common.FillDefaults(Type)
	if o.SFTP != nil && o.SFTP.Port == 0 {
		o.SFTP.Port = DefaultPort
	}
}

// ResolvePaths makes the secret files absolute.
func (o *Options) ResolvePaths(abs func(*string)) {
	if o.SFTP != nil {
		abs(&o.SFTP.PasswordFile)
		abs(&o.SFTP.PrivateKeyFile)
		abs(&o.SFTP.KnownHostsFile)
	}
}

// ResolveSecrets has nothing to read now: the files are read at each
// connection.
func (o *Options) ResolveSecrets(_, _ func(field, name string) (string, bool)) []error { return nil }

// Validate checks the options.
func (o *Options) Validate() []error {
	return append(o.validateSFTP(), o.Common.Validate()...)
}

// validateSFTP checks the sftp block.
func (o *Options) validateSFTP() []error {
	s := o.SFTP
	if s == nil {
		return []error{&sources.FieldError{Path: "sftp", Msg: "is missing: type sftp needs host, user, dir and a credential"}}
	}
	var errs []error
	add := func(path, format string, args ...any) {
		errs = append(errs, &sources.FieldError{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	blank := func(s string) bool { return strings.TrimSpace(s) == "" }
	if blank(s.Host) {
		add("sftp.host", "is empty")
	}
	if s.Port < 0 || s.Port > 65535 {
		add("sftp.port", "%d is not a port", s.Port)
	}
	if blank(s.User) {
		add("sftp.user", "is empty")
	}
	if blank(s.Dir) {
		add("sftp.dir", "is empty")
	}
	if blank(s.PasswordFile) && blank(s.PrivateKeyFile) {
		add("sftp", "set passwordFile or privateKeyFile (a mounted secret)")
	}
	if blank(s.KnownHostsFile) && !s.InsecureIgnoreHostKey {
		add("sftp.knownHostsFile", "is empty: the server's host key must be checked "+
			"(or set insecureIgnoreHostKey: true, which is logged at warn)")
	}
	if !blank(s.KnownHostsFile) && s.InsecureIgnoreHostKey {
		add("sftp.insecureIgnoreHostKey", "is set with knownHostsFile: choose one")
	}
	return errs
}

// Describe names the server and folder (checked when a run opens it).
func (o *Options) Describe() string {
	s := o.SFTP
	check := "checked against knownHostsFile"
	if s.InsecureIgnoreHostKey {
		check = "NOT checked: insecureIgnoreHostKey"
	}
	return fmt.Sprintf("drop folder %s on sftp://%s@%s:%d (host key %s)", strconv.Quote(s.Dir), s.User, s.Host, s.Port, check)
}

// Files reads the given local files in place.
func (o *Options) Files(files []string) (func(context.Context) ([]sources.Export, error), error) {
	return o.Common.Files(files, dropfolder.PathExport)
}

// Open opens the folder.
func (o *Options) Open(_ context.Context, env registry.Env) (registry.Source, error) {
	cfg, sftp := o.Config(env), *o.SFTP
	return dropkind.Source(func() (sources.DropFolder, error) { return Open(sftp, cfg), nil }, nil), nil
}
