package jsonstream

import (
	"fmt"
	"reflect"
	"strings"
)

// Streamer is a value that writes itself a part at a time (a list too long
// to hold encoded). Value calls StreamJSON wherever it meets one: as the
// value given, as a member of a struct written by Fields, or as an element
// of a slice. What StreamJSON writes must be what encoding/json writes for
// the value, so that a document is the same either way.
type Streamer interface {
	StreamJSON(s *Writer)
}

// stream writes v when it is a Streamer, or a slice of them, and tells
// whether it did.
func (s *Writer) stream(v any) bool {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return false
	}
	if rv.Kind() == reflect.Slice && rv.Type().Elem().Implements(reflect.TypeFor[Streamer]()) {
		if rv.IsNil() {
			s.write("null")
			return true
		}
		s.Begin('[')
		for i := range rv.Len() {
			s.Elem()
			s.Value(rv.Index(i).Interface())
		}
		s.End(']')
		return true
	}
	st, ok := v.(Streamer)
	if !ok {
		return false
	}
	if rv.Kind() == reflect.Pointer && rv.IsNil() {
		s.write("null")
		return true
	}
	st.StreamJSON(s)
	return true
}

// Fields writes the struct v (or the struct v points to) as an object, a
// member at a time, as encoding/json would: the json tags' names, "-",
// omitempty and omitzero (with the member's IsZero method where it has
// one). A member that is a Streamer streams. Embedded structs and the
// ",string" option are not supported: Fields fails on them.
func (s *Writer) Fields(v any) {
	if s.err != nil {
		return
	}
	rv := reflect.Indirect(reflect.ValueOf(v))
	if rv.Kind() != reflect.Struct {
		s.fail(fmt.Errorf("encode %T: Fields needs a struct", v))
		return
	}
	t := rv.Type()
	fields, err := s.fieldsOf(t)
	if err != nil {
		s.fail(err)
		return
	}
	s.Begin('{')
	for _, f := range fields {
		tag := f.tag
		fv := rv.Field(f.index)
		if tag.omitEmpty && isEmpty(fv) || tag.omitZero && isZero(fv) {
			continue
		}
		s.Key(tag.name)
		s.Value(fv.Interface())
	}
	s.End('}')
}

// field is a member Fields writes: the struct field's index and its tag.
type field struct {
	index int
	tag   tag
}

// fieldsOf returns the members Fields writes of the struct type t, read
// from its tags once per Writer and type.
func (s *Writer) fieldsOf(t reflect.Type) ([]field, error) {
	if fields, ok := s.types[t]; ok {
		return fields, nil
	}
	var fields []field
	for i := range t.NumField() {
		f := t.Field(i)
		tag := parseTag(f)
		switch {
		case tag.skip || !f.Anonymous && !f.IsExported():
			continue
		case f.Anonymous || tag.asString:
			return nil, fmt.Errorf("encode %s: field %s: embedded fields and the string option are not supported", t, f.Name)
		}
		fields = append(fields, field{index: i, tag: tag})
	}
	if s.types == nil {
		s.types = map[reflect.Type][]field{}
	}
	s.types[t] = fields
	return fields, nil
}

// tag is a struct field's json tag, read.
type tag struct {
	name                          string
	skip                          bool
	omitEmpty, omitZero, asString bool
}

func parseTag(f reflect.StructField) tag {
	raw, ok := f.Tag.Lookup("json")
	if raw == "-" {
		return tag{skip: true}
	}
	name, opts, _ := strings.Cut(raw, ",")
	t := tag{name: name}
	if !ok || name == "" {
		t.name = f.Name
	}
	for o := range strings.SplitSeq(opts, ",") {
		switch o {
		case "omitempty":
			t.omitEmpty = true
		case "omitzero":
			t.omitZero = true
		case "string":
			t.asString = true
		}
	}
	return t
}

// isEmpty is encoding/json's test for omitempty.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// isZeroer is what omitzero asks of a value that says itself whether it
// is zero.
type isZeroer interface{ IsZero() bool }

// isZero is encoding/json's test for omitzero.
func isZero(v reflect.Value) bool {
	if z, ok := v.Interface().(isZeroer); ok {
		if v.Kind() == reflect.Pointer && v.IsNil() {
			return true
		}
		return z.IsZero()
	}
	return v.IsZero()
}
