package postgres

import (
	"net/url"
	"regexp"
)

// Prefix is how the dialect's DSNs start.
func (Driver) Prefix() string { return "postgres://" }

// CheckDSN requires a URL with a host. url.Parse's errors quote the URL,
// password included: they are never wrapped.
func (Driver) CheckDSN(dsn string) string {
	if u, err := url.Parse(dsn); err != nil || u.Host == "" {
		return "is not a valid PostgreSQL URL (postgres://user@host:5432/db)"
	}
	return ""
}

// ResolveDSN returns dsn: a PostgreSQL state names no local file.
func (Driver) ResolveDSN(dsn, _ string) string { return dsn }

// Location is "PostgreSQL URL, schema S", the URL's password masked.
func (Driver) Location(dsn, schema string) string {
	return "PostgreSQL " + redact(dsn) + ", schema " + schema
}

// StateFile tells that the state is in no local file.
func (Driver) StateFile(string) (string, bool) { return "", false }

// kvPassword finds password=... in a key=value part of a DSN, quoted or not.
var kvPassword = regexp.MustCompile(`(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)`)

// redact masks the password of a DSN; a DSN it cannot read with certainty
// is masked whole rather than risk showing a password.
func redact(dsn string) string {
	if kvPassword.MatchString(dsn) {
		return kvPassword.ReplaceAllString(dsn, "${1}xxxxx")
	}
	u, err := url.Parse(dsn)
	switch {
	case err != nil || u.Opaque != "":
		return "[redacted]"
	case u.User == nil:
		return dsn
	}
	return u.Redacted()
}
