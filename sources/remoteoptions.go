package sources

import (
	"fmt"
	"strings"
)

// The backends of a drop folder (DropFolderOptions.Type).
const (
	DropLocal = "local"
	DropSFTP  = "sftp"
	DropS3    = "s3"
)

// DefaultSFTPPort is the port of SFTPOptions when none is set.
const DefaultSFTPPort = 22

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

// S3Options locate a drop folder in a bucket of an S3-compatible object
// store. Credentials are read from the environment or from files (mounted
// secrets), never from the configuration itself.
type S3Options struct {
	// Endpoint is the server, "https://host[:port]" or "http://host:port"
	// (plain HTTP only for a server on the same host or network).
	Endpoint string `yaml:"endpoint"`
	// Bucket holds the folder.
	Bucket string `yaml:"bucket"`
	// Prefix is the folder's key prefix ("hr/exports/"; "" for the
	// bucket's top). processed/ and failed/ are prefixes under it.
	Prefix string `yaml:"prefix,omitempty"`
	// Region is the bucket's region; "" lets the client discover it.
	Region string `yaml:"region,omitempty"`
	// AccessKeyFile and SecretKeyFile name files holding the credentials.
	// When they are not set, the credentials come from the environment
	// variables AccessKeyEnv and SecretKeyEnv.
	AccessKeyFile string `yaml:"accessKeyFile,omitempty"`
	SecretKeyFile string `yaml:"secretKeyFile,omitempty"`
	// AccessKeyEnv and SecretKeyEnv name the environment variables of the
	// credentials. Default AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
	AccessKeyEnv string `yaml:"accessKeyEnv,omitempty"`
	SecretKeyEnv string `yaml:"secretKeyEnv,omitempty"`
}

// validateBackend checks that the options of exactly the chosen backend
// are set, and complete.
func (o DropFolderOptions) validateBackend() []error {
	var errs []error
	add := func(path, format string, args ...any) {
		errs = append(errs, &FieldError{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	blank := func(s string) bool { return strings.TrimSpace(s) == "" }
	switch o.Type {
	case DropLocal:
		if blank(o.Dir) {
			add("dir", "is empty")
		}
	case DropSFTP, DropS3:
		if !blank(o.Dir) {
			add("dir", "is for a local folder: with type %s, give the folder under %s", o.Type, o.Type)
		}
	default:
		add("type", "unknown drop folder type %q: use %s, %s or %s", o.Type, DropLocal, DropSFTP, DropS3)
	}
	if o.SFTP != nil && o.Type != DropSFTP {
		add("sftp", "is set but type is %s: set type: %s", o.Type, DropSFTP)
	}
	if o.S3 != nil && o.Type != DropS3 {
		add("s3", "is set but type is %s: set type: %s", o.Type, DropS3)
	}
	switch {
	case o.Type == DropSFTP && o.SFTP == nil:
		add("sftp", "is missing: type sftp needs host, user, dir and a credential")
	case o.Type == DropSFTP:
		s := o.SFTP
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
	}
	switch {
	case o.Type == DropS3 && o.S3 == nil:
		add("s3", "is missing: type s3 needs endpoint and bucket")
	case o.Type == DropS3:
		s := o.S3
		if !strings.HasPrefix(s.Endpoint, "https://") && !strings.HasPrefix(s.Endpoint, "http://") {
			add("s3.endpoint", "%q must start with https:// (or http:// for a server on the same network)", s.Endpoint)
		}
		if blank(s.Bucket) {
			add("s3.bucket", "is empty")
		}
		if blank(s.AccessKeyFile) != blank(s.SecretKeyFile) {
			add("s3", "set both accessKeyFile and secretKeyFile, or neither (then the environment is used)")
		}
		if strings.HasPrefix(s.Prefix, "/") {
			add("s3.prefix", "must not start with /")
		}
	}
	return errs
}
