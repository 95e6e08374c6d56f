package config

import (
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
)

// redacted is what every printed form shows in place of a secret.
const redacted = "[redacted]"

// Secret holds a credential (API token, database DSN) that hrsync resolved
// from the environment or a mounted file. Every printed or encoded form of a
// Secret (fmt verbs, String, YAML, JSON, text, slog) shows "[redacted]" when
// it is set and "" when it is empty; only Value returns the credential.
type Secret struct {
	value string
}

// NewSecret wraps a credential.
func NewSecret(value string) Secret { return Secret{value: value} }

// Value returns the credential itself. Pass it only to the code that sends it.
func (s Secret) Value() string { return s.value }

// IsSet reports whether the secret holds a non-empty value.
func (s Secret) IsSet() bool { return s.value != "" }

// String returns "[redacted]" when the secret is set and "" otherwise.
func (s Secret) String() string {
	if s.value == "" {
		return ""
	}
	return redacted
}

// GoString keeps %#v from printing the credential.
func (s Secret) GoString() string { return fmt.Sprintf("config.Secret(%q)", s.String()) }

// Format implements fmt.Formatter so that every verb prints the redacted form.
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		_, _ = io.WriteString(f, s.GoString())
		return
	}
	_, _ = io.WriteString(f, s.String())
}

// MarshalText implements encoding.TextMarshaler with the redacted form.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// MarshalJSON encodes the redacted form as a JSON string.
func (s Secret) MarshalJSON() ([]byte, error) { return fmt.Appendf(nil, "%q", s.String()), nil }

// MarshalYAML encodes the redacted form.
func (s Secret) MarshalYAML() (any, error) { return s.String(), nil }

// LogValue implements slog.LogValuer with the redacted form.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// ConnURL is a database connection string that may embed a password
// (postgres://user:password@host/db, or key=value pairs with password=...).
// It is read from YAML or the environment like a plain string, but every
// printed or encoded form masks the password; Value returns it whole.
type ConnURL struct {
	value string
}

// NewConnURL wraps a connection string.
func NewConnURL(value string) ConnURL { return ConnURL{value: value} }

// Value returns the connection string with its password.
func (u ConnURL) Value() string { return u.value }

// String returns the connection string with any password masked.
func (u ConnURL) String() string { return redactConn(u.value) }

// GoString keeps %#v from printing the password.
func (u ConnURL) GoString() string { return fmt.Sprintf("config.ConnURL(%q)", u.String()) }

// Format implements fmt.Formatter so that every verb prints the masked form.
func (u ConnURL) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		_, _ = io.WriteString(f, u.GoString())
		return
	}
	_, _ = io.WriteString(f, u.String())
}

// MarshalText implements encoding.TextMarshaler with the masked form.
func (u ConnURL) MarshalText() ([]byte, error) { return []byte(u.String()), nil }

// MarshalJSON encodes the masked form as a JSON string.
func (u ConnURL) MarshalJSON() ([]byte, error) { return fmt.Appendf(nil, "%q", u.String()), nil }

// MarshalYAML encodes the masked form.
func (u ConnURL) MarshalYAML() (any, error) { return u.String(), nil }

// UnmarshalYAML reads the connection string as a plain YAML string.
func (u *ConnURL) UnmarshalYAML(unmarshal func(any) error) error {
	var s string
	if err := unmarshal(&s); err != nil {
		return err
	}
	u.value = s
	return nil
}

// LogValue implements slog.LogValuer with the masked form.
func (u ConnURL) LogValue() slog.Value { return slog.StringValue(u.String()) }

// kvPassword finds password=... in a key=value connection string (libpq
// style), quoted or not.
var kvPassword = regexp.MustCompile(`(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)`)

// redactConn masks the password of a connection string. A string it cannot
// read with certainty is masked whole rather than risk showing a password.
func redactConn(s string) string {
	if s == "" {
		return ""
	}
	if kvPassword.MatchString(s) {
		return kvPassword.ReplaceAllString(s, "${1}xxxxx")
	}
	if !strings.Contains(s, "@") {
		return s // no user information, so no password (sqlite:path, postgres://host/db)
	}
	u, err := url.Parse(s)
	if err != nil || u.Opaque != "" || u.User == nil {
		return redacted
	}
	return u.Redacted()
}
