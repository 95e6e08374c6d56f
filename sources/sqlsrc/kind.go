package sqlsrc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"hrsync/sources"
	"hrsync/sources/registry"
)

// Section is the key of a tenant's source the SQL kind is written under;
// it is also the kind's name.
const Section = "sql"

func init() {
	registry.Register(registry.Kind{Section: Section, New: func() registry.Options { return &Options{} }})
}

// redacted stands for the DSN wherever the options are printed.
const redacted = "[redacted]"

// Options configure a query against the HR database: the sql section. The
// DSN (a secret) is not read from the file: ResolveSecrets fills
// SQLOptions.DSN from the environment variable named by DSNEnv or the file
// named by DSNFile.
type Options struct {
	sources.SQLOptions `yaml:",inline"`
	// DSNEnv names the environment variable holding the DSN.
	DSNEnv string `yaml:"dsnEnv"`
	// DSNFile names a file (a mounted secret) holding the DSN.
	DSNFile string `yaml:"dsnFile"`
}

// String renders the options without their DSN.
func (o Options) String() string {
	return fmt.Sprintf("{SQLOptions:%s DSNEnv:%s DSNFile:%s}", o.SQLOptions.String(), o.DSNEnv, o.DSNFile)
}

// GoString renders the options without their DSN, for %#v.
func (o Options) GoString() string { return "sqlsrc.Options" + o.String() }

// MarshalYAML writes the options with their DSN redacted.
func (o Options) MarshalYAML() (any, error) {
	type plain Options
	p := plain(o)
	if p.DSN != "" {
		p.DSN = redacted
	}
	return p, nil
}

// MarshalJSON writes the options with their DSN redacted.
func (o Options) MarshalJSON() ([]byte, error) {
	type plain Options
	p := plain(o)
	if p.DSN != "" {
		p.DSN = redacted
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("sql options: %w", err)
	}
	return b, nil
}

// Kind is "sql".
func (o *Options) Kind() string { return Section }

// FillDefaults sets the mapping's defaults.
func (o *Options) FillDefaults() { o.Mapping = o.Mapping.WithDefaults() }

// ResolvePaths makes the DSN file absolute.
func (o *Options) ResolvePaths(abs func(*string)) { abs(&o.DSNFile) }

// ResolveSecrets reads the DSN from DSNEnv or DSNFile. A DSN written in the
// file is refused and dropped, never echoed: it may hold a password.
func (o *Options) ResolveSecrets(env, file func(field, name string) (string, bool)) []error {
	problem := func(path, msg string) []error { return []error{&sources.FieldError{Path: path, Msg: msg}} }
	if o.DSN != "" {
		o.DSN = ""
		return problem("dsn", "a DSN must not be written in the file: use dsnEnv or dsnFile")
	}
	switch {
	case o.DSNEnv != "" && o.DSNFile != "":
		return problem("", "set exactly one of dsnEnv and dsnFile, not both")
	case o.DSNEnv != "":
		if v, ok := env("dsnEnv", o.DSNEnv); ok {
			o.DSN = v
		}
	case o.DSNFile != "":
		if v, ok := file("dsnFile", o.DSNFile); ok {
			o.DSN = v
		}
	default:
		return problem("", "set dsnEnv (the name of an environment variable) or dsnFile")
	}
	return nil
}

// Validate checks the options. A missing DSN is not among the problems:
// ResolveSecrets reports it against dsnEnv or dsnFile.
func (o *Options) Validate() []error {
	var errs []error
	for _, err := range o.SQLOptions.Validate() {
		var fe *sources.FieldError
		if errors.As(err, &fe) && fe.Path == "dsn" {
			continue
		}
		errs = append(errs, err)
	}
	return errs
}

// BalanceMax is the mapping's largest addBalance.
func (o *Options) BalanceMax() float64 { return o.Mapping.BalanceMax() }

// SetReportMode does nothing: a query has no folder to write reports in.
func (o *Options) SetReportMode(fs.FileMode) {}

// Describe says nothing: the database is reached when a run queries it.
func (o *Options) Describe() string { return "" }

// HasFolder is false: a query has no drop folder.
func (o *Options) HasFolder() bool { return false }

// SecretsSet names the DSN.
func (o *Options) SecretsSet() []string { return []string{"sql dsn"} }

// Files refuses: a query reads no files.
func (o *Options) Files([]string) (func(context.Context) ([]sources.Export, error), error) {
	return nil, &registry.Refusal{Reason: "reads a SQL query: FILE arguments do not apply", Err: registry.ErrNoFiles}
}

// Open returns the query as a source; nothing is connected until it is
// read.
func (o *Options) Open(_ context.Context, env registry.Env) (registry.Source, error) {
	return &query{tenant: env.Tenant, opts: o.SQLOptions}, nil
}
