package s3drop

import (
	"context"
	"fmt"
	"strings"

	"hrsync/sources"
	"hrsync/sources/dropfolder"
	"hrsync/sources/dropkind"
	"hrsync/sources/registry"
)

// Type is the S3 kind's type in a tenant's csv section.
const Type = "s3"

func init() {
	registry.Register(registry.Kind{
		Section: dropkind.Section, Type: Type, Noun: dropkind.Noun, Key: "s3",
		Misplaced: func(typ string) string { return fmt.Sprintf("is set but type is %s: set type: %s", typ, Type) },
		New:       func() registry.Options { return &Options{} },
	})
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

// Options configure a drop folder in a bucket: the csv section with type
// s3 and its s3 block.
type Options struct {
	dropkind.Common `yaml:",inline"`
	// S3 locates the folder.
	S3 *S3Options `yaml:"s3,omitempty"`
}

// Kind is "s3".
func (o *Options) Kind() string { return Type }

// FillDefaults sets the defaults.
func (o *Options) FillDefaults() { o.Common.FillDefaults(Type) }

// ResolvePaths makes the credential files absolute.
func (o *Options) ResolvePaths(abs func(*string)) {
	if o.S3 != nil {
		abs(&o.S3.AccessKeyFile)
		abs(&o.S3.SecretKeyFile)
	}
}

// ResolveSecrets has nothing to read now: the credentials are read when
// the folder is opened.
func (o *Options) ResolveSecrets(_, _ func(field, name string) (string, bool)) []error { return nil }

// Validate checks the options.
func (o *Options) Validate() []error {
	return append(o.validateS3(), o.Common.Validate()...)
}

// validateS3 checks the s3 block.
func (o *Options) validateS3() []error {
	s := o.S3
	if s == nil {
		return []error{&sources.FieldError{Path: "s3", Msg: "is missing: type s3 needs endpoint and bucket"}}
	}
	var errs []error
	add := func(path, format string, args ...any) {
		errs = append(errs, &sources.FieldError{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	if !strings.HasPrefix(s.Endpoint, "https://") && !strings.HasPrefix(s.Endpoint, "http://") {
		add("s3.endpoint", "%q must start with https:// (or http:// for a server on the same network)", s.Endpoint)
	}
	if strings.TrimSpace(s.Bucket) == "" {
		add("s3.bucket", "is empty")
	}
	if (strings.TrimSpace(s.AccessKeyFile) == "") != (strings.TrimSpace(s.SecretKeyFile) == "") {
		add("s3", "set both accessKeyFile and secretKeyFile, or neither (then the environment is used)")
	}
	if strings.HasPrefix(s.Prefix, "/") {
		add("s3.prefix", "must not start with /")
	}
	return errs
}

// Describe names the bucket and prefix (checked when a run opens it).
func (o *Options) Describe() string {
	return fmt.Sprintf("drop folder s3://%s/%s at %s", o.S3.Bucket, o.S3.Prefix, o.S3.Endpoint)
}

// Files reads the given local files in place.
func (o *Options) Files(files []string) (func(context.Context) ([]sources.Export, error), error) {
	return o.Common.Files(files, dropfolder.PathExport)
}

// Open opens the folder.
func (o *Options) Open(_ context.Context, env registry.Env) (registry.Source, error) {
	cfg, s3 := o.Config(env), *o.S3
	return dropkind.Source(func() (sources.DropFolder, error) { return Open(s3, cfg) }, nil), nil
}
