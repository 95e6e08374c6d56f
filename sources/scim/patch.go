package scim

import (
	"slices"
	"strings"

	filter "github.com/scim2/filter-parser/v2"
)

// patchRequest is a PATCH body (RFC 7644 section 3.5.2); field names match without case, so
// Entra's and Okta's spellings both decode.
type patchRequest struct {
	Schemas    []string  `json:"schemas"`
	Operations []patchOp `json:"Operations"`
}

// patchOp is one operation; Op is matched without case ("Replace" as Entra sends it).
type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

const (
	opAdd     = "add"
	opReplace = "replace"
	opRemove  = "remove"
)

func (p patchRequest) check() error {
	found := false
	for _, s := range p.Schemas {
		found = found || strings.EqualFold(s, schemaPatchOp)
	}
	if !found {
		return badRequest(typeInvalidSyntax, "schemas must include %s", schemaPatchOp)
	}
	if len(p.Operations) == 0 {
		return badRequest(typeInvalidSyntax, "Operations must hold at least one operation")
	}
	return nil
}

// applyPatch applies the operations in order to a user's attributes.
func applyPatch(a attrs, ops []patchOp) error {
	for _, op := range ops {
		kind := strings.ToLower(op.Op)
		if kind != opAdd && kind != opReplace && kind != opRemove {
			return badRequest(typeInvalidSyntax, "op must be add, replace or remove")
		}
		var err error
		if strings.TrimSpace(op.Path) == "" {
			err = applyNoPath(a, kind, op.Value)
		} else {
			err = applyPath(a, kind, op.Path, op.Value)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// applyNoPath applies an add or replace whose value is an object of attribute paths (plain names,
// dotted sub-attributes or URN-qualified names, as Entra sends) or extension objects.
func applyNoPath(a attrs, kind string, value any) error {
	if kind == opRemove {
		return badRequest(typeNoTarget, "remove needs a path")
	}
	obj, ok := value.(map[string]any)
	if !ok {
		return badRequest(typeInvalidValue, "an operation without path needs an object value")
	}
	for k, v := range obj {
		if strings.EqualFold(k, "schemas") {
			continue
		}
		ext, isExt := findExtension(k)
		if !isExt {
			if err := applyPath(a, kind, k, v); err != nil {
				return err
			}
			continue
		}
		sub, ok := v.(map[string]any)
		if !ok {
			return badRequest(typeInvalidValue, "%s must be an object", ext.Name)
		}
		for k2, v2 := range sub {
			if err := applyPath(a, kind, ext.ID+":"+k2, v2); err != nil {
				return err
			}
		}
	}
	return nil
}

// target is where a path points: the attribute's container, its definition and, when the path
// names one, the sub-attribute.
type target struct {
	container attrs
	def       attrDef
	sub       *attrDef
	filter    filter.Expression
}

// resolve finds the target of a path; ok is false for attributes hrsync accepts but does not keep.
func resolve(a attrs, kind, raw string) (t target, ok bool, err error) {
	p, perr := filter.ParsePath([]byte(raw))
	if perr != nil {
		return target{}, false, badRequest(typeInvalidPath, "the path does not parse")
	}
	defs, container := coreAttrs(), a
	if uri := p.AttributePath.URI(); uri != "" && !strings.EqualFold(uri, SchemaUser) {
		ext, found := findExtension(uri)
		if !found {
			return target{}, false, badRequest(typeInvalidPath, "unknown schema in path")
		}
		defs, container = ext.Attrs, getAttrs(a, ext.ID)
		if container == nil {
			container = attrs{}
			a[ext.ID] = container
		}
	}
	name := p.AttributePath.AttributeName
	switch strings.ToLower(name) {
	case "id", "meta":
		return target{}, false, badRequest(typeMutability, "%s is read-only", strings.ToLower(name))
	case "schemas":
		return target{}, false, nil
	}
	def, found := findAttr(defs, name)
	if !found {
		if ignoredAttr(name) {
			return target{}, false, nil
		}
		return target{}, false, badRequest(typeInvalidPath, "unknown attribute %q", shortName(name))
	}
	t = target{container: container, def: def, filter: p.ValueExpression}
	sub := p.AttributePath.SubAttributeName()
	if sub == "" {
		sub = p.SubAttributeName()
	}
	if sub != "" {
		sd, found := findAttr(def.Sub, sub)
		if !found {
			if ignoredAttr(sub) {
				return target{}, false, nil
			}
			return target{}, false, badRequest(typeInvalidPath, "unknown sub-attribute %q", shortName(sub))
		}
		t.sub = &sd
	}
	if t.filter != nil && !def.Multi {
		return target{}, false, badRequest(typeInvalidPath, "%s is not multi-valued", def.Name)
	}
	return t, true, nil
}

func applyPath(a attrs, kind, raw string, value any) error {
	t, ok, err := resolve(a, kind, raw)
	if err != nil || !ok {
		return err
	}
	switch {
	case t.def.Multi && (t.filter != nil || t.sub != nil):
		return patchElements(t, kind, value)
	case t.sub != nil:
		return patchSub(t, kind, value)
	default:
		return patchWhole(t, kind, value)
	}
}

func patchWhole(t target, kind string, value any) error {
	name := t.def.Name
	if kind == opRemove || value == nil {
		delete(t.container, name)
		return nil
	}
	if _, isList := value.([]any); t.def.Multi && !isList {
		value = []any{value}
	}
	cv, err := canonValue(t.def, value)
	if err != nil {
		return err
	}
	switch {
	case t.def.Multi && kind == opAdd:
		list, _ := t.container[name].([]any)
		t.container[name] = addElements(list, cv.([]any))
	case t.def.Type == typeComplex && !t.def.Multi:
		merged := getAttrs(t.container, name)
		if merged == nil {
			merged = attrs{}
		}
		for k, v := range cv.(attrs) {
			merged[k] = v
		}
		t.container[name] = merged
	default:
		t.container[name] = cv
	}
	return nil
}

func patchSub(t target, kind string, value any) error {
	m := getAttrs(t.container, t.def.Name)
	if m == nil {
		if kind == opRemove {
			return nil
		}
		m = attrs{}
		t.container[t.def.Name] = m
	}
	if kind == opRemove || value == nil {
		delete(m, t.sub.Name)
		return nil
	}
	cv, err := canonSingle(*t.sub, value)
	if err != nil {
		return err
	}
	m[t.sub.Name] = cv
	return nil
}

// patchElements applies an operation to the elements of a multi-valued attribute that the value
// filter selects (all of them without a filter).
func patchElements(t target, kind string, value any) error {
	list, _ := t.container[t.def.Name].([]any)
	var hit []int
	for i, e := range list {
		em, _ := e.(attrs)
		ok := true
		if t.filter != nil {
			var err error
			if ok, err = matchValue(t.filter, em); err != nil {
				return err
			}
		}
		if ok {
			hit = append(hit, i)
		}
	}
	if kind == opRemove {
		removeElements(t, list, hit)
		return nil
	}
	if len(hit) == 0 {
		return seedElement(t, kind, list, value)
	}
	for _, i := range hit {
		if err := setElement(t, list[i].(attrs), value); err != nil {
			return err
		}
	}
	onePrimary(list, hit[0])
	return nil
}

func removeElements(t target, list []any, hit []int) {
	if t.sub != nil {
		for _, i := range hit {
			delete(list[i].(attrs), t.sub.Name)
		}
		return
	}
	var kept []any
	for i, e := range list {
		if !slices.Contains(hit, i) {
			kept = append(kept, e)
		}
	}
	if len(kept) == 0 {
		delete(t.container, t.def.Name)
		return
	}
	t.container[t.def.Name] = kept
}

// seedElement handles an add (or a replace without filter) that selects nothing: it creates the
// element the filter describes. A replace with a filter that selects nothing is noTarget.
func seedElement(t target, kind string, list []any, value any) error {
	if kind == opReplace && t.filter != nil {
		return badRequest(typeNoTarget, "no %s value matches the filter", t.def.Name)
	}
	seed := attrs{}
	if t.filter != nil {
		raw, ok := seedFromFilter(t.filter)
		if !ok {
			return badRequest(typeNoTarget, "no %s value matches the filter", t.def.Name)
		}
		var err error
		if seed, err = canonical(t.def.Sub, raw, false); err != nil {
			return err
		}
	}
	if err := setElement(t, seed, value); err != nil {
		return err
	}
	list = append(list, seed)
	t.container[t.def.Name] = list
	onePrimary(list, len(list)-1)
	return nil
}

func setElement(t target, em attrs, value any) error {
	if t.sub != nil {
		cv, err := canonSingle(*t.sub, value)
		if err != nil {
			return err
		}
		em[t.sub.Name] = cv
		return nil
	}
	cv, err := canonSingle(t.def, value)
	if err != nil {
		return err
	}
	for k, v := range cv.(attrs) {
		em[k] = v
	}
	return nil
}

// addElements appends values not already present (same value, without case).
func addElements(list, add []any) []any {
	for _, n := range add {
		nm, _ := n.(attrs)
		dup := slices.ContainsFunc(list, func(e any) bool {
			em, _ := e.(attrs)
			return strings.EqualFold(getString(em, "value"), getString(nm, "value"))
		})
		if !dup {
			list = append(list, nm)
			onePrimary(list, len(list)-1)
		}
	}
	return list
}

// onePrimary keeps at most one primary element: when list[keep] is primary, the others stop being.
func onePrimary(list []any, keep int) {
	if p, _ := list[keep].(attrs)["primary"].(bool); !p {
		return
	}
	for i, e := range list {
		if em, _ := e.(attrs); i != keep && em != nil {
			if _, has := em["primary"]; has {
				em["primary"] = false
			}
		}
	}
}
