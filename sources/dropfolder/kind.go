package dropfolder

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"hrsync/sources"
	"hrsync/sources/dropkind"
	"hrsync/sources/registry"
)

// Type is the local kind's type in a tenant's csv section, the default.
const Type = "local"

func init() {
	registry.Register(registry.Kind{
		Section: dropkind.Section, Type: Type, Default: true, Noun: dropkind.Noun,
		Key: "dir",
		Misplaced: func(typ string) string {
			return fmt.Sprintf("is for a local folder: with type %s, give the folder under %s", typ, typ)
		},
		New: func() registry.Options { return &Options{} },
	})
}

// Options configure a drop folder on this machine: the csv section with
// type local (or none) and its dir.
type Options struct {
	dropkind.Common `yaml:",inline"`
}

// Kind is "local".
func (o *Options) Kind() string { return Type }

// FillDefaults sets the defaults.
func (o *Options) FillDefaults() { o.Common.FillDefaults(Type) }

// ResolvePaths makes the folder absolute.
func (o *Options) ResolvePaths(abs func(*string)) { abs(&o.Dir) }

// ResolveSecrets has nothing to read.
func (o *Options) ResolveSecrets(_, _ func(field, name string) (string, bool)) []error { return nil }

// Validate checks the options.
func (o *Options) Validate() []error {
	var errs []error
	if strings.TrimSpace(o.Dir) == "" {
		errs = append(errs, &sources.FieldError{Path: "dir", Msg: "is empty"})
	}
	return append(errs, o.Common.Validate()...)
}

// CheckFolder says what keeps the folder from giving the access asked
// (write: also creating files in it and its archive folders), at its
// field, dir.
func (o *Options) CheckFolder(write bool) (field string, problems []string) {
	if o.Dir == "" {
		return "dir", nil
	}
	return "dir", Check(o.Dir, write).Problems
}

// Describe names the folder and its state.
func (o *Options) Describe() string {
	st := Check(o.Dir, true)
	out := "drop folder " + o.Dir + " (readable and writable"
	if len(st.Missing) > 0 {
		out += "; " + strings.Join(st.Missing, "/, ") + "/ created by the first run"
	}
	return out + ")"
}

// Files reads the given files in place.
func (o *Options) Files(files []string) (func(context.Context) ([]sources.Export, error), error) {
	return o.Common.Files(files, PathExport)
}

// Open opens the folder. Each listing first checks that the folder and its
// archive folders can still be read and written, so that a folder gone,
// unreadable or read-only fails the run before any call, rather than after
// the calls when the export cannot be archived.
func (o *Options) Open(_ context.Context, env registry.Env) (registry.Source, error) {
	cfg, dir := o.Config(env), o.Dir
	return dropkind.Source(func() (sources.DropFolder, error) { return open(cfg) }, func() error {
		if st := Check(dir, true); len(st.Problems) > 0 {
			return errors.New("drop folder: " + strings.Join(st.Problems, "; "))
		}
		return nil
	}), nil
}
