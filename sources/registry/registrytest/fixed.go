// Package registrytest holds a test-only kind of source, "fixed", written
// as the recipe of docs/architecture.md says: one options type with its
// decoding and validation, one registry.Source, one registration. Its export
// is a fixed list of people written in the configuration itself. Tests that
// need a kind of their own blank-import this package.
package registrytest

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"time"

	"hrsync/sources"
	"hrsync/sources/registry"
)

// fixedKind is a test-only kind of source, written as the recipe of
// docs/architecture.md says: one options type with its decoding and
// validation, one registry.Source, one registration. Its export is a fixed
// list of people written in the configuration itself.
func init() {
	registry.Register(registry.Kind{Section: "fixed", New: func() registry.Options { return &fixedOptions{} }})
}

// fixedOptions is the fixed section: the people, and the usual mapping.
type fixedOptions struct {
	People          []map[string]string `yaml:"people"`
	sources.Mapping `yaml:",inline"`
}

func (o *fixedOptions) Kind() string               { return "fixed" }
func (o *fixedOptions) FillDefaults()              { o.Mapping = o.WithDefaults() }
func (o *fixedOptions) ResolvePaths(func(*string)) {}
func (o *fixedOptions) BalanceMax() float64        { return o.Mapping.BalanceMax() }
func (o *fixedOptions) SetReportMode(fs.FileMode)  {}
func (o *fixedOptions) Describe() string           { return fmt.Sprintf("%d fixed people", len(o.People)) }
func (o *fixedOptions) SecretsSet() []string       { return nil }
func (o *fixedOptions) HasFolder() bool            { return false }
func (o *fixedOptions) ResolveSecrets(_, _ func(field, name string) (string, bool)) []error {
	return nil
}

func (o *fixedOptions) Validate() []error {
	errs := o.Mapping.Validate()
	if len(o.People) == 0 {
		errs = append(errs, &sources.FieldError{Path: "people", Msg: "is empty"})
	}
	return errs
}

func (o *fixedOptions) Files([]string) (func(context.Context) ([]sources.Export, error), error) {
	return nil, &registry.Refusal{Reason: "reads no files", Err: registry.ErrNoFiles}
}

func (o *fixedOptions) Open(context.Context, registry.Env) (registry.Source, error) {
	return &fixedSource{opts: o}, nil
}

// fixedSource serves the fixed export; it keeps no failed exports.
type fixedSource struct{ opts *fixedOptions }

func (s *fixedSource) Feed(context.Context) ([]sources.Export, error) {
	return []sources.Export{&fixedExport{opts: s.opts}}, nil
}

func (s *fixedSource) LastExport(context.Context, registry.LastRecord) (sources.Source, bool, error) {
	return &fixedExport{opts: s.opts}, true, nil
}

func (s *fixedSource) CheckRestore(context.Context, string) error {
	return &registry.Refusal{Reason: "keeps no failed exports", Err: registry.ErrNoRestore}
}

func (s *fixedSource) Restore(ctx context.Context, rel string) (sources.Export, error) {
	return nil, s.CheckRestore(ctx, rel)
}

func (s *fixedSource) Folder() (sources.DropFolder, error) {
	return nil, &registry.Refusal{Reason: "has no folder", Err: registry.ErrNoFolder}
}

// fixedExport reads the people through sources.Run, as every kind does.
type fixedExport struct{ opts *fixedOptions }

func (x *fixedExport) Name() string                                        { return "fixed" }
func (x *fixedExport) SHA256() string                                      { return "" }
func (x *fixedExport) Size() int64                                         { return 0 }
func (x *fixedExport) Archive(bool, sources.RenderReports) (string, error) { return "", nil }

func (x *fixedExport) Read(ctx context.Context, h sources.Handler) (sources.Stats, error) {
	v, err := sources.NewValidator("fixed", x.opts.Mapping, time.Now())
	if err != nil {
		return sources.Stats{}, err
	}
	return sources.Run(ctx, v, &fixedRows{people: x.opts.People, cols: x.opts.Columns}, h)
}

// fixedRows hands the people to sources.Run, all in one batch.
type fixedRows struct {
	people []map[string]string
	cols   map[string]string
	done   bool
}

func (r *fixedRows) Next(_ context.Context, b *sources.Batch) error {
	if r.done {
		return io.EOF
	}
	r.done = true
	b.Rows = b.Rows[:0]
	for i, p := range r.people {
		row := sources.Row{Line: i + 1}
		for f := range sources.NumFields {
			row.Text[f] = p[r.cols[f.String()]]
		}
		b.Rows = append(b.Rows, row)
	}
	return nil
}

func (r *fixedRows) Fill(*sources.Batch) error { return nil }
