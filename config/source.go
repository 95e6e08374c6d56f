package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"hrsync/sources"
)

// Source is where a tenant's people come from: exactly one of CSV and SQL.
type Source struct {
	// CSV reads exports dropped in a folder.
	CSV *CSVSource `yaml:"csv,omitempty"`
	// SQL runs a query against the HR database.
	SQL *SQLSource `yaml:"sql,omitempty"`
}

// CSVSource is a drop folder of CSV exports: the folder's options and the
// way its files are read, as the sources package defines them.
type CSVSource struct {
	sources.DropFolderOptions `yaml:",inline"`
	sources.CSVOptions        `yaml:",inline"`
}

// SQLSource is a query against the HR database. The DSN (a secret) is not
// read from the file: Load fills SQLOptions.DSN from the environment
// variable named by DSNEnv or the file named by DSNFile.
type SQLSource struct {
	sources.SQLOptions `yaml:",inline"`
	// DSNEnv names the environment variable holding the DSN.
	DSNEnv string `yaml:"dsnEnv"`
	// DSNFile names a file (a mounted secret) holding the DSN.
	DSNFile string `yaml:"dsnFile"`
}

// String renders the SQL source without its DSN.
func (s SQLSource) String() string {
	return fmt.Sprintf("{SQLOptions:%s DSNEnv:%s DSNFile:%s}", s.SQLOptions.String(), s.DSNEnv, s.DSNFile)
}

// GoString renders the SQL source without its DSN, for %#v.
func (s SQLSource) GoString() string { return "config.SQLSource" + s.String() }

// MarshalYAML writes the SQL source with its DSN redacted.
func (s SQLSource) MarshalYAML() (any, error) {
	type plain SQLSource
	p := plain(s)
	if p.DSN != "" {
		p.DSN = redacted
	}
	return p, nil
}

// MarshalJSON writes the SQL source with its DSN redacted.
func (s SQLSource) MarshalJSON() ([]byte, error) {
	type plain SQLSource
	p := plain(s)
	if p.DSN != "" {
		p.DSN = redacted
	}
	return json.Marshal(p)
}

// mapping returns the mapping of the source that is set, or nil.
func (s Source) mapping() *sources.Mapping {
	switch {
	case s.CSV != nil:
		return &s.CSV.Mapping
	case s.SQL != nil:
		return &s.SQL.Mapping
	}
	return nil
}

// Kind returns "csv" or "sql", or "" when no source is set.
func (s Source) Kind() string {
	switch {
	case s.CSV != nil:
		return "csv"
	case s.SQL != nil:
		return "sql"
	}
	return ""
}

// defaultColumns maps every field to a column of its own name, the mapping
// used when a source names no columns.
func defaultColumns() map[string]string {
	cols := make(map[string]string, sources.NumFields)
	for _, name := range sources.FieldNames() {
		cols[name] = name
	}
	return cols
}

// fillDefaults sets the defaults the sources package leaves to its caller.
func (s *Source) fillDefaults() {
	if s.CSV != nil {
		s.CSV.DropFolderOptions = s.CSV.WithDefaults()
		if s.CSV.Encoding == "" {
			s.CSV.Encoding = sources.EncodingAuto
		}
		if s.CSV.MaxRecordLines == 0 {
			s.CSV.MaxRecordLines = sources.DefaultMaxRecordLines
		}
		if s.CSV.MaxRecordBytes == 0 {
			s.CSV.MaxRecordBytes = sources.DefaultMaxRecordBytes
		}
		fillMapping(&s.CSV.Mapping)
	}
	if s.SQL != nil {
		fillMapping(&s.SQL.Mapping)
	}
}

// fillMapping gives a mapping its default columns when it names none, and
// empty rather than nil collections, so that a loaded configuration equals
// the one its YAML dump loads into.
func fillMapping(m *sources.Mapping) {
	if len(m.Columns) == 0 {
		m.Columns = defaultColumns()
	}
	if m.DateLayouts == nil {
		m.DateLayouts = map[string]string{}
	}
	if m.Required == nil {
		m.Required = []string{}
	}
	if m.MaxValueLength == 0 {
		m.MaxValueLength = sources.DefaultMaxValueLength
	}
	if m.MaxBalance == 0 {
		m.MaxBalance = sources.DefaultMaxBalance
	}
}

// resolvePaths makes the source's relative paths absolute with abs.
func (s *Source) resolvePaths(abs func(*string)) {
	if s.CSV != nil {
		abs(&s.CSV.Dir)
		if sftp := s.CSV.SFTP; sftp != nil {
			abs(&sftp.PasswordFile)
			abs(&sftp.PrivateKeyFile)
			abs(&sftp.KnownHostsFile)
		}
		if s3 := s.CSV.S3; s3 != nil {
			abs(&s3.AccessKeyFile)
			abs(&s3.SecretKeyFile)
		}
	}
	if s.SQL != nil {
		abs(&s.SQL.DSNFile)
	}
}

// resolveSecrets fills the SQL source's DSN. path is the source's path.
func (s *Source) resolveSecrets(path string, env func(string) (string, bool), ps *problems) {
	if s.SQL == nil {
		return
	}
	path += ".sql"
	if s.SQL.DSN != "" {
		// Never echo it: it may hold a password.
		ps.addf(path+".dsn", "a DSN must not be written in the file: use dsnEnv or dsnFile")
		s.SQL.DSN = ""
		return
	}
	switch {
	case s.SQL.DSNEnv != "" && s.SQL.DSNFile != "":
		ps.addf(path, "set exactly one of dsnEnv and dsnFile, not both")
	case s.SQL.DSNEnv != "":
		if v, ok := readEnvSecret(env, s.SQL.DSNEnv, path+".dsnEnv", ps); ok {
			s.SQL.DSN = v
		}
	case s.SQL.DSNFile != "":
		if v, ok := readFileSecret(s.SQL.DSNFile, path+".dsnFile", ps); ok {
			s.SQL.DSN = v
		}
	default:
		ps.addf(path, "set dsnEnv (the name of an environment variable) or dsnFile")
	}
}

// validate checks the source. path is the source's path.
func (s *Source) validate(path string, ps *problems) {
	switch {
	case s.CSV == nil && s.SQL == nil:
		ps.addf(path, "set exactly one of csv and sql")
	case s.CSV != nil && s.SQL != nil:
		ps.addf(path, "set exactly one of csv and sql, not both")
	}
	if s.CSV != nil {
		addFieldErrors(path+".csv", s.CSV.DropFolderOptions.Validate(), ps)
		addFieldErrors(path+".csv", s.CSV.CSVOptions.Validate(), ps)
	}
	if s.SQL != nil {
		var errs []error
		for _, err := range s.SQL.Validate() {
			// A missing DSN is already reported against dsnEnv or dsnFile.
			var fe *sources.FieldError
			if errors.As(err, &fe) && fe.Path == "dsn" {
				continue
			}
			errs = append(errs, err)
		}
		addFieldErrors(path+".sql", errs, ps)
	}
}

// addFieldErrors records the sources package's errors under prefix.
func addFieldErrors(prefix string, errs []error, ps *problems) {
	for _, err := range errs {
		var fe *sources.FieldError
		if errors.As(err, &fe) {
			p := prefix
			if fe.Path != "" {
				p += "." + fe.Path
			}
			ps.addf(p, "%s", strings.TrimSpace(fe.Msg))
			continue
		}
		ps.addf(prefix, "%v", err)
	}
}
