package sqlite

import (
	"path/filepath"
	"strings"
)

// filePart is the path of a "sqlite:PATH" or "sqlite://PATH" DSN, as
// written (possibly relative or empty).
func filePart(dsn string) string {
	return strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite:"), "//")
}

// Prefix is how the dialect's DSNs start.
func (Driver) Prefix() string { return "sqlite:" }

// CheckDSN requires a file name.
func (Driver) CheckDSN(dsn string) string {
	if filePart(dsn) == "" {
		return "must name the database file, as in sqlite:hrsync.db"
	}
	return ""
}

// ResolveDSN takes a relative file path from dir, and writes the DSN as
// "sqlite:PATH".
func (Driver) ResolveDSN(dsn, dir string) string {
	p := filePart(dsn)
	if p != "" && !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return "sqlite:" + p
}

// Location is "SQLite file PATH"; SQLite has no schemas.
func (Driver) Location(dsn, _ string) string { return "SQLite file " + filePart(dsn) }

// StateFile is the file the DSN names.
func (Driver) StateFile(dsn string) (string, bool) { return filePart(dsn), true }
