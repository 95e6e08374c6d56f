package config

import (
	"reflect"
	"strconv"
	"strings"

	"github.com/agnivade/levenshtein"
	"gopkg.in/yaml.v3"
)

// scalarTypes are struct types read from one YAML scalar: their keys are
// not checked.
func scalarTypes() []reflect.Type {
	// A Source is checked by decodeSource, against its kind's options.
	return []reflect.Type{reflect.TypeFor[Duration](), reflect.TypeFor[ConnURL](), reflect.TypeFor[Secret](), reflect.TypeFor[Source]()}
}

// keyHints replace the suggestion for keys that must not be in the file.
func keyHints() map[string]string {
	return map[string]string{
		"api.token": "the token is never read from the file: set " + EnvAPIToken + " or api.tokenFile",
	}
}

// checkKeys walks the document against the types it decodes into and
// reports every key they do not accept, with its path, line and column, and
// the closest key accepted at that place.
func checkKeys(doc *yaml.Node) []Problem {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil
	}
	var out []Problem
	walkKeys("", doc.Content[0], reflect.TypeFor[Config](), &out)
	return out
}

// walkKeys checks the keys of n, a value decoded into t, at path.
func walkKeys(path string, n *yaml.Node, t reflect.Type, out *[]Problem) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch {
	case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
		for i, e := range n.Content {
			walkKeys(path+"["+strconv.Itoa(i)+"]", e, t.Elem(), out)
		}
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		for _, s := range scalarTypes() {
			if t == s {
				return
			}
		}
		walkStruct(path, n, t, out)
	}
}

// walkStruct checks a mapping decoded into the struct type t.
func walkStruct(path string, n *yaml.Node, t reflect.Type, out *[]Problem) {
	fields := yamlFields(t)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value == "<<" { // a merge key: its mapping holds this struct's keys
			walkKeys(path, v, t, out)
			continue
		}
		p := k.Value
		if path != "" {
			p = path + "." + k.Value
		}
		ft, ok := fields[k.Value]
		if ok {
			walkKeys(p, v, ft, out)
			continue
		}
		*out = append(*out, unknownKey(p, k, fields))
	}
}

// unknownKey is the problem of key k, at path, where the keys of known are
// accepted: with a hint, or the closest key accepted.
func unknownKey(path string, k *yaml.Node, known map[string]reflect.Type) Problem {
	reason := "unknown key " + strconv.Quote(k.Value)
	if hint, ok := keyHints()[stripIndexes(path)]; ok {
		reason += ": " + hint
	} else if s := closest(k.Value, known); s != "" {
		reason += "; did you mean " + strconv.Quote(s) + "?"
	}
	return Problem{Path: path, Line: k.Line, Column: k.Column, Reason: reason}
}

// yamlFields maps the keys a struct accepts (its yaml tags, inline
// structs included) to their types.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if strings.Contains(","+opts+",", ",inline,") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			for k, v := range yamlFields(ft) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f.Type
	}
	return out
}

// stripIndexes turns "tenants[2].source" into "tenants[].source".
func stripIndexes(path string) string {
	var b strings.Builder
	skip := false
	for _, r := range path {
		switch {
		case r == '[':
			skip = true
			b.WriteRune(r)
		case r == ']':
			skip = false
			b.WriteRune(r)
		case !skip:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// closest returns the known key nearest to name (edit distance, ignoring
// case), or "" when none is near enough to be a likely typo.
func closest(name string, known map[string]reflect.Type) string {
	best, bestD := "", -1
	lower := strings.ToLower(name)
	for k := range known {
		d := levenshtein.ComputeDistance(lower, strings.ToLower(k))
		if bestD < 0 || d < bestD || (d == bestD && k < best) {
			best, bestD = k, d
		}
	}
	limit := max(2, len([]rune(name))/3)
	if bestD < 0 || bestD > limit {
		return ""
	}
	return best
}
