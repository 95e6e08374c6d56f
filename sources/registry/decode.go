package registry

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"hrsync/sources"
)

// Kinds is the registry as the config package sees it (config.SourceKinds):
// the sections a tenant's source may hold and, for one section, the empty
// options of the kind it names. cmd passes Kinds{} to config.Load.
type Kinds struct{}

// SourceSections lists the keys a tenant's source may hold, sorted.
func (Kinds) SourceSections() []string { return Sections() }

// SourceOptions picks the kind the section node (the value of a source
// key) names: the section's only kind, or the one its type: key names (its
// default when unset). It returns that kind's empty options (a pointer,
// for the caller to decode body into) and body, node without the blocks of
// the section's other kinds; each such block is an error naming its key.
// An unknown section or type returns no options and an error at its key.
func (Kinds) SourceOptions(sectionName string, node *yaml.Node) (any, *yaml.Node, []error) {
	types, ok := section(sectionName)
	if !ok {
		return nil, nil, []error{&sources.FieldError{Msg: fmt.Sprintf("no source kind %q in this program", sectionName)}}
	}
	typ := scalarAt(node, "type")
	k, ok := pick(types, typ)
	if !ok {
		return nil, nil, []error{&sources.FieldError{Path: "type", Msg: fmt.Sprintf("unknown %s type %q: use %s", nounOf(types), typ, joinOr(Types(sectionName)))}}
	}
	if typ == "" {
		typ = k.Type
	}
	body, errs := withoutOthers(node, types, k, typ)
	return k.New(), body, errs
}

// pick returns the kind of a section that typ names, or its default.
func pick(types map[string]Kind, typ string) (Kind, bool) {
	if k, ok := types[typ]; ok {
		return k, true
	}
	if typ != "" {
		return Kind{}, false
	}
	for _, k := range types {
		if k.Default || len(types) == 1 {
			return k, true
		}
	}
	return Kind{}, false
}

// nounOf is what a section configures, as its kinds name it.
func nounOf(types map[string]Kind) string {
	for _, k := range types {
		if k.Noun != "" {
			return k.Noun
		}
	}
	return "source"
}

// scalarAt returns the value of a scalar key of a mapping node, or "".
func scalarAt(node *yaml.Node, key string) string {
	if node == nil || node.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		if node.Content[i].Value == key && node.Content[i+1].Kind == yaml.ScalarNode {
			return node.Content[i+1].Value
		}
	}
	return ""
}

// withoutOthers copies node without the keys of the blocks of other kinds
// than k, reporting each of them as misplaced under typ.
func withoutOthers(node *yaml.Node, types map[string]Kind, k Kind, typ string) (*yaml.Node, []error) {
	if node == nil || node.Kind != yaml.MappingNode {
		return node, nil
	}
	others := map[string]Kind{}
	for _, o := range types {
		if o.Type != k.Type && o.Key != "" && o.Key != k.Key {
			others[o.Key] = o
		}
	}
	body := *node
	body.Content = nil
	var errs []error
	for i := 0; i+1 < len(node.Content); i += 2 {
		if o, ok := others[node.Content[i].Value]; ok {
			errs = append(errs, &sources.FieldError{Path: o.Key, Msg: o.Misplaced(typ)})
			continue
		}
		body.Content = append(body.Content, node.Content[i], node.Content[i+1])
	}
	return &body, errs
}
