package scimsrc

import (
	"context"
	"fmt"
	"io/fs"
	"strings"

	"hrsync/sources"
	"hrsync/sources/registry"
	"hrsync/sources/scim"
)

// Section is the key of a tenant's source the SCIM kind is written under;
// it is also the kind's name.
const Section = "scim"

func init() {
	registry.Register(registry.Kind{Section: Section, Noun: "SCIM directory", New: func() registry.Options { return &Options{} }})
}

// Options configure a tenant fed by its identity provider over SCIM: the
// scim section of the tenant's source.
//
//	source:
//	  scim:
//	    tokenFile: acme.token   # relative to the configuration file's folder
type Options struct {
	// TokenFile names the file (a mounted secret) holding the bearer token
	// the identity provider presents; the token selects the tenant. The
	// SCIM endpoint reads it at every request (Token), so a rotated token
	// takes effect at once; the configuration only checks that it is there.
	TokenFile string `yaml:"tokenFile"`
	// MaxBalance is the largest balanceOverride a user may carry; a larger
	// one rejects the user. 0 means sources.DefaultMaxBalance.
	MaxBalance float64 `yaml:"maxBalance"`
}

// Kind is "scim".
func (o *Options) Kind() string { return Section }

// FillDefaults has nothing to fill: the defaults are applied where read.
func (o *Options) FillDefaults() {}

// ResolvePaths makes the token file absolute.
func (o *Options) ResolvePaths(abs func(*string)) { abs(&o.TokenFile) }

// ResolveSecrets checks that the token file can be read and holds a
// token. The token itself is not kept: the endpoint reads the file at
// every request.
func (o *Options) ResolveSecrets(_, file func(field, name string) (string, bool)) []error {
	if o.TokenFile == "" {
		return []error{&sources.FieldError{Path: "tokenFile", Msg: "required: the file holding the bearer token the identity provider presents"}}
	}
	v, ok := file("tokenFile", o.TokenFile)
	if ok && strings.TrimSpace(v) == "" {
		return []error{&sources.FieldError{Path: "tokenFile", Msg: "the token file is empty"}}
	}
	return nil
}

// Validate checks the balance bound.
func (o *Options) Validate() []error {
	if o.MaxBalance < 0 {
		return []error{&sources.FieldError{Path: "maxBalance", Msg: "must not be negative"}}
	}
	return nil
}

// BalanceMax is the largest balanceOverride a user may carry.
func (o *Options) BalanceMax() float64 { return o.mapping().BalanceMax() }

// SetReportMode does nothing: a directory has no folder to write reports in.
func (o *Options) SetReportMode(fs.FileMode) {}

// Describe says where the people come from.
func (o *Options) Describe() string {
	return "SCIM directory pushed by the identity provider (kept in hrsync's state)"
}

// HasFolder is false: a directory has no drop folder.
func (o *Options) HasFolder() bool { return false }

// SecretsSet names the token.
func (o *Options) SecretsSet() []string { return []string{"scim token"} }

// Files refuses: the directory is read from hrsync's state, not files.
func (o *Options) Files([]string) (func(context.Context) ([]sources.Export, error), error) {
	return nil, &registry.Refusal{Reason: "reads the SCIM directory its identity provider pushes: FILE arguments do not apply", Err: registry.ErrNoFiles}
}

// Open returns the tenant's directory as a source; nothing is read until
// its feed is. env.Directory must be set for the feed to be read.
func (o *Options) Open(_ context.Context, env registry.Env) (registry.Source, error) {
	return &Source{tenant: env.Tenant, dir: env.Directory, mapping: o.mapping()}, nil
}

// Token is the tenant's bearer token as the SCIM endpoint reads it: the
// token file, read at every request.
func (o *Options) Token() scim.TokenSource { return scim.FileToken(o.TokenFile) }

// TokenOf returns the bearer token of a tenant whose source is the SCIM
// kind (opts is the tenant's config.Source.Options); ok is false for a
// tenant fed any other way. The SCIM listener builds its
// scim.Options.Tenants with it.
func TokenOf(opts any) (scim.TokenSource, bool) {
	o, ok := opts.(*Options)
	if !ok || o == nil {
		return nil, false
	}
	return o.Token(), true
}

// String renders the options (the token file's name, never the token).
func (o Options) String() string {
	return fmt.Sprintf("{TokenFile:%s MaxBalance:%v}", o.TokenFile, o.MaxBalance)
}
