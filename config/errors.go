package config

import (
	"fmt"
	"strconv"
	"strings"
)

// Problem is one thing wrong with a configuration.
type Problem struct {
	// Path names the field, as in "tenants[1].safeguards.maxDepartedRatio";
	// "" when the problem concerns the whole file.
	Path string
	// Line is the 1-based line of the file the problem points at, 0 when
	// the field is not in the file (a default or an environment override).
	Line int
	// Column is the 1-based column on Line, 0 when not known. The YAML
	// parser gives it for syntax errors and unknown keys.
	Column int
	// Env names the environment variable the value came from, if any.
	Env string
	// Reason says what is wrong, without echoing any secret.
	Reason string
}

// String renders the problem as "path: reason (line N)", or
// "(line N, column C)" when the column is known.
func (p Problem) String() string {
	var b strings.Builder
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Reason)
	switch {
	case p.Env != "":
		b.WriteString(" (from " + p.Env + ")")
	case p.Line > 0 && p.Column > 0:
		b.WriteString(" (line " + strconv.Itoa(p.Line) + ", column " + strconv.Itoa(p.Column) + ")")
	case p.Line > 0:
		b.WriteString(" (line " + strconv.Itoa(p.Line) + ")")
	}
	return b.String()
}

// Error is returned by Load when a configuration cannot be used. It lists
// every problem found, so that one run of `hrsync config check` shows them
// all. Use errors.As to tell it from other failures: the CLI maps it to the
// "configuration" exit code.
type Error struct {
	// File is the configuration file, "" when none was read.
	File string
	// Problems lists what is wrong, in the order of the file.
	Problems []Problem
}

// Error renders a one-line message for one problem and an indented list for
// several.
func (e *Error) Error() string {
	prefix := "configuration"
	if e.File != "" {
		prefix = "configuration " + e.File
	}
	switch len(e.Problems) {
	case 0:
		return prefix + ": invalid"
	case 1:
		return prefix + ": " + e.Problems[0].String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d problems:", prefix, len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

// problems collects Problems while a configuration is checked.
type problems struct {
	list []Problem
}

// addf records a problem at path.
func (ps *problems) addf(path, format string, args ...any) {
	ps.list = append(ps.list, Problem{Path: path, Reason: fmt.Sprintf(format, args...)})
}
