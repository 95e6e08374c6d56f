package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// SourceKinds is how the configuration reads a tenant's source section
// without knowing any kind of source: the program's source registry
// implements it (sources/registry.Kinds) and cmd passes it to Load.
type SourceKinds interface {
	// SourceSections lists the keys a tenant's source may hold ("csv",
	// "sql"), sorted.
	SourceSections() []string
	// SourceOptions returns the empty options (a pointer implementing
	// SourceOptions) of the kind that node, the value of the source key
	// section, names, and body, the part of node to decode into them. errs
	// are problems found on the way (errors with Field and Reason methods,
	// the field relative to the section); no options when the kind is
	// unknown.
	SourceOptions(section string, node *yaml.Node) (opts any, body *yaml.Node, errs []error)
}

// SourceOptions are the options of one kind of source, decoded from its
// section. Their methods take only standard types, so that a kind needs no
// import of this package.
type SourceOptions interface {
	// Kind names the kind ("local", "sftp", "s3", "sql").
	Kind() string
	// FillDefaults sets the defaults of the options left empty.
	FillDefaults()
	// ResolvePaths makes relative paths absolute with abs.
	ResolvePaths(abs func(*string))
	// ResolveSecrets reads the secrets the options name through env (an
	// environment variable) or file (a mounted file), each reporting its
	// own problem at field; the errors returned are the options' own.
	ResolveSecrets(env, file func(field, name string) (string, bool)) []error
	// Validate checks the options.
	Validate() []error
	// BalanceMax is the largest addBalance a row may ask for.
	BalanceMax() float64
	// SetReportMode sets the mode of the reports written beside an
	// archived export (reports.mode).
	SetReportMode(mode fs.FileMode)
}

// folderChecker is a source with a folder on this machine that LoadChecked
// checks: CheckFolder says what keeps it from giving the access asked, at
// field.
type folderChecker interface {
	CheckFolder(write bool) (field string, problems []string)
}

// fieldError is a problem a kind found, at a field relative to its section.
type fieldError interface {
	Field() string
	Reason() string
}

// Source is where a tenant's people come from: one section (csv, sql...)
// holding the options of one kind of source, decoded by that kind.
type Source struct {
	// Section is the key the source is written under ("csv", "sql").
	Section string
	// Options are the kind's options; nil when the section was not read.
	Options SourceOptions

	// node is the section as written, kept from decoding the file until
	// decodeSource reads it.
	node *yaml.Node
}

// UnmarshalYAML keeps the source as written, for decodeSource.
func (s *Source) UnmarshalYAML(n *yaml.Node) error {
	s.node = n
	return nil
}

// tree is the source as its file writes it.
func (s Source) tree() map[string]any {
	if s.Options == nil {
		return map[string]any{}
	}
	return map[string]any{s.Section: s.Options}
}

// MarshalYAML writes the source as its section (secrets redacted by the
// kind's options).
func (s Source) MarshalYAML() (any, error) { return s.tree(), nil }

// MarshalJSON writes the source as its section.
func (s Source) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(s.tree())
	if err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	return b, nil
}

// Kind returns the section of the source ("csv", "sql"), or "" when none
// is set.
func (s Source) Kind() string { return s.Section }

// decode reads the source's section through kinds. path is the source's
// path.
func (s *Source) decode(kinds SourceKinds, path string, idx *nodeIndex, ps *problems) {
	n := s.node
	s.node = nil
	if kinds == nil {
		ps.addf(path, "this program reads no kind of source")
		return
	}
	sections := kinds.SourceSections()
	present := presentSections(path, n, sections, ps)
	switch {
	case len(present) == 0:
		ps.addf(path, "set exactly one of %s", joinAnd(sections))
	case len(present) > 1:
		ps.addf(path, "set exactly one of %s, not both", joinAnd(sections))
	}
	for _, sec := range present {
		opts := decodeSection(kinds, path+"."+sec, sec, sectionNode(n, sec), idx, ps)
		switch {
		case opts == nil:
		case s.Options == nil:
			s.Section, s.Options = sec, opts
		default: // a second section, already a problem: checked all the same
			opts.FillDefaults()
			addFieldErrors(path+"."+sec, opts.Validate(), ps)
		}
	}
}

// presentSections lists the sections n sets, in document order, and
// records a problem at each other key.
func presentSections(path string, n *yaml.Node, sections []string, ps *problems) []string {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	known := make(map[string]reflect.Type, len(sections))
	for _, sec := range sections {
		known[sec] = nil
	}
	var present []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if _, ok := known[k.Value]; ok {
			present = append(present, k.Value)
			continue
		}
		ps.list = append(ps.list, unknownKey(path+"."+k.Value, k, known))
	}
	return present
}

// sectionNode returns the value of key sec in the mapping n.
func sectionNode(n *yaml.Node, sec string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == sec {
			return n.Content[i+1]
		}
	}
	return nil
}

// decodeSection decodes one section into the options of the kind it names,
// recording every problem (unknown keys and values of the wrong type with
// their lines) at path.
func decodeSection(kinds SourceKinds, path, sec string, n *yaml.Node, idx *nodeIndex, ps *problems) SourceOptions {
	v, body, errs := kinds.SourceOptions(sec, n)
	addFieldErrors(path, errs, ps)
	if v == nil {
		return nil
	}
	opts, ok := v.(SourceOptions)
	if !ok {
		ps.addf(path, "the kind's options (%T) cannot be configured", v)
		return nil
	}
	if body == nil {
		return opts
	}
	walkKeys(path, body, reflect.TypeOf(v), &ps.list)
	if err := body.Decode(v); err != nil {
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			ps.addf(path, "%v", err)
			return opts
		}
		for _, msg := range te.Errors {
			ps.list = append(ps.list, idx.typeProblem(msg))
		}
	}
	return opts
}

// fillDefaults sets the defaults of the source's kind.
func (s *Source) fillDefaults() {
	if s.Options != nil {
		s.Options.FillDefaults()
	}
}

// resolvePaths makes the source's relative paths absolute with abs.
func (s *Source) resolvePaths(abs func(*string)) {
	if s.Options != nil {
		s.Options.ResolvePaths(abs)
	}
}

// resolveSecrets reads the source's secrets. path is the source's path.
func (s *Source) resolveSecrets(path string, env func(string) (string, bool), ps *problems) {
	if s.Options == nil {
		return
	}
	path += "." + s.Section
	fromEnv := func(field, name string) (string, bool) { return readEnvSecret(env, name, path+"."+field, ps) }
	fromFile := func(field, name string) (string, bool) { return readFileSecret(name, path+"."+field, ps) }
	addFieldErrors(path, s.Options.ResolveSecrets(fromEnv, fromFile), ps)
}

// validate checks the source's options. path is the source's path.
func (s *Source) validate(path string, ps *problems) {
	if s.Options != nil {
		addFieldErrors(path+"."+s.Section, s.Options.Validate(), ps)
	}
}

// checkFolder records what keeps the source's folder on this machine, if
// it has one, from giving access. path is the source's path.
func (s *Source) checkFolder(path string, access FolderAccess, ps *problems) {
	fc, ok := s.Options.(folderChecker)
	if !ok || access == FoldersUnchecked {
		return
	}
	field, problems := fc.CheckFolder(access == FoldersWritable)
	for _, reason := range problems {
		ps.addf(path+"."+s.Section+"."+field, "%s", reason)
	}
}

// addFieldErrors records a kind's errors under prefix.
func addFieldErrors(prefix string, errs []error, ps *problems) {
	for _, err := range errs {
		var fe fieldError
		if errors.As(err, &fe) {
			p := prefix
			if fe.Field() != "" {
				p += "." + fe.Field()
			}
			ps.addf(p, "%s", strings.TrimSpace(fe.Reason()))
			continue
		}
		ps.addf(prefix, "%v", err)
	}
}

// joinAnd lists names as "a, b and c".
func joinAnd(names []string) string {
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
