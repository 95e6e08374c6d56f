package scim

import (
	"fmt"
	"strings"

	filter "github.com/scim2/filter-parser/v2"

	"hrsync/sources/scim/directory"
)

// listFilter turns a list request's filter into directory terms: eq on userName, externalId or id,
// joined by and. Anything else is answered 400 invalidFilter.
func listFilter(raw string) ([]directory.Term, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, nil
	}
	expr, err := filter.ParseFilter([]byte(raw))
	if err != nil {
		return nil, badRequest(typeInvalidFilter, "the filter does not parse")
	}
	return filterTerms(expr)
}

func filterTerms(expr filter.Expression) ([]directory.Term, error) {
	switch e := expr.(type) {
	case *filter.LogicalExpression:
		if !strings.EqualFold(string(e.Operator), string(filter.AND)) {
			return nil, badRequest(typeInvalidFilter, "only and joins filter terms")
		}
		left, err := filterTerms(e.Left)
		if err != nil {
			return nil, err
		}
		right, err := filterTerms(e.Right)
		if err != nil {
			return nil, err
		}
		return append(left, right...), nil
	case *filter.AttributeExpression:
		return attrTerm(e)
	}
	return nil, badRequest(typeInvalidFilter, "only eq on userName, externalId or id, joined by and, is supported")
}

func attrTerm(e *filter.AttributeExpression) ([]directory.Term, error) {
	p := e.AttributePath
	if !strings.EqualFold(string(e.Operator), string(filter.EQ)) || p.SubAttribute != nil ||
		(p.URIPrefix != nil && !strings.EqualFold(*p.URIPrefix, SchemaUser)) {
		return nil, badRequest(typeInvalidFilter, "only eq on userName, externalId or id is supported")
	}
	value, ok := e.CompareValue.(string)
	if !ok {
		return nil, badRequest(typeInvalidFilter, "%s is compared with a string", shortName(p.AttributeName))
	}
	for _, a := range []directory.Attr{directory.AttrUserName, directory.AttrExternalID, directory.AttrID} {
		if strings.EqualFold(p.AttributeName, string(a)) {
			return []directory.Term{{Attr: a, Value: value}}, nil
		}
	}
	return nil, badRequest(typeInvalidFilter, "filtering on %q is not supported", shortName(p.AttributeName))
}

// matchValue evaluates a value filter (the part in brackets of emails[type eq "work"]) on one
// element of a multi-valued attribute. Strings compare without case, as emails' sub-attributes do.
func matchValue(expr filter.Expression, elem attrs) (bool, error) {
	switch e := expr.(type) {
	case *filter.LogicalExpression:
		l, err := matchValue(e.Left, elem)
		if err != nil {
			return false, err
		}
		r, err := matchValue(e.Right, elem)
		if err != nil {
			return false, err
		}
		if strings.EqualFold(string(e.Operator), string(filter.AND)) {
			return l && r, nil
		}
		return l || r, nil
	case *filter.NotExpression:
		m, err := matchValue(e.Expression, elem)
		return !m, err
	case *filter.AttributeExpression:
		return matchAttr(e, elem)
	}
	return false, badRequest(typeInvalidFilter, "unsupported value filter")
}

func lookup(elem attrs, name string) (any, bool) {
	for k, v := range elem {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return nil, false
}

func matchAttr(e *filter.AttributeExpression, elem attrs) (bool, error) {
	got, present := lookup(elem, e.AttributePath.AttributeName)
	op := filter.CompareOperator(strings.ToLower(string(e.Operator)))
	if op == filter.PR {
		return present && got != "", nil
	}
	if b, ok := e.CompareValue.(bool); ok {
		gb, _ := got.(bool)
		switch op {
		case filter.EQ:
			return gb == b, nil
		case filter.NE:
			return gb != b, nil
		}
		return false, badRequest(typeInvalidFilter, "booleans compare with eq or ne")
	}
	want := strings.ToLower(fmt.Sprint(e.CompareValue))
	have := ""
	if s, ok := got.(string); ok {
		have = strings.ToLower(s)
	}
	switch op {
	case filter.EQ:
		return have == want, nil
	case filter.NE:
		return have != want, nil
	case filter.CO:
		return strings.Contains(have, want), nil
	case filter.SW:
		return strings.HasPrefix(have, want), nil
	case filter.EW:
		return strings.HasSuffix(have, want), nil
	}
	return false, badRequest(typeInvalidFilter, "operator %s is not supported in a value filter", op)
}

// seedFromFilter is the element an add with a value filter creates when nothing matches: the
// sub-attributes the filter sets with eq (emails[type eq "work"] gives {type: work}).
func seedFromFilter(expr filter.Expression) (attrs, bool) {
	switch e := expr.(type) {
	case *filter.AttributeExpression:
		if !strings.EqualFold(string(e.Operator), string(filter.EQ)) {
			return nil, false
		}
		return attrs{e.AttributePath.AttributeName: e.CompareValue}, true
	case *filter.LogicalExpression:
		if !strings.EqualFold(string(e.Operator), string(filter.AND)) {
			return nil, false
		}
		l, okL := seedFromFilter(e.Left)
		r, okR := seedFromFilter(e.Right)
		if !okL || !okR {
			return nil, false
		}
		for k, v := range r {
			l[k] = v
		}
		return l, true
	}
	return nil, false
}
