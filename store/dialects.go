package store

import (
	"errors"
	"io/fs"
	"os"
	"strings"
)

// Describer is implemented by a Driver whose DSNs the configuration can
// check, resolve and describe without opening them (Dialects).
type Describer interface {
	// Prefix is how the dialect's DSNs start, for messages ("sqlite:",
	// "postgres://").
	Prefix() string
	// CheckDSN returns "" when dsn is well formed, else the problem in
	// plain words, never quoting a password.
	CheckDSN(dsn string) string
	// ResolveDSN returns dsn with a relative file path in it taken from
	// dir; a DSN that names no file comes back unchanged.
	ResolveDSN(dsn, dir string) string
	// Location says where the state of dsn (and schema, for a dialect that
	// has schemas) lives, without any password.
	Location(dsn, schema string) string
	// StateFile returns the local file that holds the state of dsn; ok is
	// false when the state does not live in a local file.
	StateFile(dsn string) (path string, ok bool)
}

// Dialects answers the configuration's questions about store URLs
// (config.StoreDialects) with the registered drivers, so that no code
// outside the dialect packages names a dialect. Only DSNs with a scheme
// a Describer is registered for are served: a bare path is not a store
// URL in the configuration.
type Dialects struct{}

// describerFor is the Describer registered for dsn's scheme.
func describerFor(dsn string) (Describer, bool) {
	sc, ok := scheme(dsn)
	if !ok {
		return nil, false
	}
	registry.RLock()
	defer registry.RUnlock()
	d, ok := registry.schemes[sc].(Describer)
	return d, ok
}

// CheckURL returns "" when a registered dialect serves url and finds it
// well formed, else the problem in plain words (never quoting the URL).
func (Dialects) CheckURL(url string) string {
	if url == "" {
		return "must not be empty"
	}
	d, ok := describerFor(url)
	if !ok {
		return "must start with " + strings.Join(prefixes(), " or ")
	}
	return d.CheckDSN(url)
}

// ResolveURL returns url with a relative file path in it taken from dir.
func (Dialects) ResolveURL(url, dir string) string {
	if d, ok := describerFor(url); ok {
		return d.ResolveDSN(url, dir)
	}
	return url
}

// Location says where the state of url and schema lives, without any
// password; "" when no registered dialect serves url.
func (Dialects) Location(url, schema string) string {
	if d, ok := describerFor(url); ok {
		return d.Location(url, schema)
	}
	return ""
}

// StateFile returns the local file that holds the state of url, and
// whether it does not exist yet; ok is false when the state does not live
// in a local file.
func (Dialects) StateFile(url string) (path string, missing, ok bool) {
	d, found := describerFor(url)
	if !found {
		return "", false, false
	}
	path, ok = d.StateFile(url)
	if !ok {
		return "", false, false
	}
	_, err := os.Stat(path)
	return path, errors.Is(err, fs.ErrNotExist), true
}

// prefixes lists how the registered dialects' DSNs start: the driver of
// bare paths (the default dialect) first, then by scheme.
func prefixes() []string {
	registry.RLock()
	defer registry.RUnlock()
	var out []string
	seen := map[string]bool{}
	add := func(d Driver) {
		if ds, ok := d.(Describer); ok && !seen[ds.Prefix()] {
			seen[ds.Prefix()] = true
			out = append(out, ds.Prefix())
		}
	}
	if registry.paths != nil {
		add(registry.paths)
	}
	for _, sc := range schemes() {
		add(registry.schemes[sc])
	}
	return out
}
