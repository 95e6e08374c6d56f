// Package dropkind holds what the drop-folder kinds of the source registry
// share (local, sftp, s3): the options of the csv section common to them
// (type, the folder's protocol, the way files are read) and the adapter
// that makes any sources.DropFolder a registry.Source. A backend embeds
// Common in its options, adds its own block, and registers itself.
package dropkind

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"

	"hrsync/sources"
	"hrsync/sources/registry"
)

// Section is the key of a tenant's source the drop folders are written
// under.
const Section = "csv"

// Noun is what the csv section configures, in errors.
const Noun = "drop folder"

// Common are the options every drop-folder kind reads.
type Common struct {
	// Type is the backend holding the folder ("local", the default,
	// "sftp", "s3").
	Type                      string `yaml:"type,omitempty"`
	sources.DropFolderOptions `yaml:",inline"`
	sources.CSVOptions        `yaml:",inline"`
}

// FillDefaults sets the defaults of the common options; typ is the kind's
// type.
func (c *Common) FillDefaults(typ string) {
	c.Type = typ
	c.DropFolderOptions = c.DropFolderOptions.WithDefaults()
	c.CSVOptions = c.CSVOptions.WithDefaults()
}

// Validate checks the common options.
func (c *Common) Validate() []error {
	return append(c.DropFolderOptions.Validate(), c.CSVOptions.Validate()...)
}

// BalanceMax is the mapping's largest addBalance.
func (c *Common) BalanceMax() float64 { return c.Mapping.BalanceMax() }

// SetReportMode sets the mode of the reports written beside an archived
// export.
func (c *Common) SetReportMode(mode fs.FileMode) { c.ReportMode = mode }

// HasFolder is true: every drop-folder kind has a folder.
func (c *Common) HasFolder() bool { return true }

// SecretsSet is empty: a drop folder's secrets stay in mounted files.
func (c *Common) SecretsSet() []string { return nil }

// PathExport makes a file named on the command line an export read in
// place (dropfolder.PathExport).
type PathExport func(path string, fi os.FileInfo, opts sources.CSVOptions) sources.Export

// Files lists the given files as exports read in place with the options'
// CSV reading, each stat'ed when the lister is called.
func (c *Common) Files(files []string, export PathExport) (func(context.Context) ([]sources.Export, error), error) {
	opts := c.CSVOptions
	return func(context.Context) ([]sources.Export, error) {
		out := make([]sources.Export, 0, len(files))
		for _, f := range files {
			fi, err := os.Stat(f)
			if err != nil {
				return nil, fmt.Errorf("export %s: %w", strconv.Quote(f), withoutPath(err))
			}
			out = append(out, export(f, fi, opts))
		}
		return out, nil
	}, nil
}

// withoutPath drops the path a *fs.PathError repeats (the caller names the
// file already).
func withoutPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Config is the sources.DropConfig a backend opens its folder with.
func (c *Common) Config(env registry.Env) sources.DropConfig {
	return sources.DropConfig{Folder: c.DropFolderOptions, CSV: c.CSVOptions, Warn: env.Warn}
}
