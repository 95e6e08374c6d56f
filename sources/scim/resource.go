package scim

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"

	"hrsync/sources/scim/directory"
)

// attrs is a resource's attributes with canonical names and checked values: strings, bools,
// float64s, nested attrs for complex attributes, []any of attrs for multi-valued ones, and each
// extension's attrs under its URN.
type attrs = map[string]any

// coreAttrs are the core User schema's attributes plus the common externalId.
func coreAttrs() []attrDef {
	return append(coreSchema().Attrs, attrDef{Name: "externalId", Type: typeString, CaseExact: true})
}

// shortName keeps error details bounded whatever a client sends as an attribute name.
func shortName(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// canonical checks m against defs and returns it with canonical names; top is the resource level,
// where extensions sit and readOnly attributes are dropped.
func canonical(defs []attrDef, m map[string]any, top bool) (attrs, error) {
	out := attrs{}
	for k, v := range m {
		if v == nil {
			continue // null is unassigned (RFC 7643 section 2.5)
		}
		if top {
			switch strings.ToLower(k) {
			case "schemas", "id", "meta":
				continue
			}
			if ext, ok := findExtension(k); ok {
				obj, ok := v.(map[string]any)
				if !ok {
					return nil, badRequest(typeInvalidValue, "%s must be an object", ext.Name)
				}
				sub, err := canonical(ext.Attrs, obj, false)
				if err != nil {
					return nil, err
				}
				out[ext.ID] = sub
				continue
			}
		}
		def, ok := findAttr(defs, k)
		if !ok {
			if ignoredAttr(k) {
				continue
			}
			return nil, badRequest(typeInvalidSyntax, "unknown attribute %q", shortName(k))
		}
		cv, err := canonValue(def, v)
		if err != nil {
			return nil, err
		}
		out[def.Name] = cv
	}
	return out, nil
}

func canonValue(def attrDef, v any) (any, error) {
	if !def.Multi {
		return canonSingle(def, v)
	}
	list, ok := v.([]any)
	if !ok {
		return nil, badRequest(typeInvalidValue, "%s must be an array", def.Name)
	}
	out := make([]any, 0, len(list))
	for _, e := range list {
		if e == nil {
			continue
		}
		cv, err := canonSingle(def, e)
		if err != nil {
			return nil, err
		}
		out = append(out, cv)
	}
	return out, nil
}

func canonSingle(def attrDef, v any) (any, error) {
	switch def.Type {
	case typeString:
		s, ok := v.(string)
		if !ok {
			return nil, badRequest(typeInvalidValue, "%s must be a string", def.Name)
		}
		if def.date && s != "" {
			return canonDate(def.Name, s)
		}
		if def.birthday && s != "" {
			b, ok := directory.Birthday(s)
			if !ok {
				return nil, badRequest(typeInvalidValue, "%s must be a date (YYYY-MM-DD or --MM-DD)", def.Name)
			}
			return b, nil
		}
		return s, nil
	case typeBoolean:
		return canonBool(def.Name, v)
	case typeDecimal:
		return canonDecimal(def.Name, v)
	case typeComplex:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, badRequest(typeInvalidValue, "%s must be an object", def.Name)
		}
		return canonical(def.Sub, obj, false)
	}
	return nil, badRequest(typeInvalidValue, "%s has an unsupported type", def.Name)
}

// canonBool accepts a JSON boolean and, as Microsoft Entra ID sends them, "True" and "False".
func canonBool(name string, v any) (any, error) {
	switch b := v.(type) {
	case bool:
		return b, nil
	case string:
		switch strings.ToLower(b) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	}
	return nil, badRequest(typeInvalidValue, "%s must be a boolean", name)
}

func canonDecimal(name string, v any) (any, error) {
	var f float64
	var err error
	switch n := v.(type) {
	case json.Number:
		f, err = n.Float64()
	case float64:
		f = n
	case string:
		f, err = strconv.ParseFloat(strings.TrimSpace(n), 64)
	default:
		return nil, badRequest(typeInvalidValue, "%s must be a number", name)
	}
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return nil, badRequest(typeInvalidValue, "%s must be a number of zero or more", name)
	}
	return f, nil
}

// canonDate keeps a calendar day: YYYY-MM-DD as is, an RFC 3339 dateTime cut to its day.
func canonDate(name, s string) (any, error) {
	if _, err := time.Parse(time.DateOnly, s); err == nil {
		return s, nil
	}
	if _, err := time.Parse(time.RFC3339, s); err == nil {
		return s[:len(time.DateOnly)], nil
	}
	return nil, badRequest(typeInvalidValue, "%s must be a date (YYYY-MM-DD)", name)
}

// checkSchemas checks a request's schemas: present, all known, the core User among them.
func checkSchemas(m map[string]any, want string) error {
	raw, ok := m["schemas"].([]any)
	if !ok || len(raw) == 0 {
		return badRequest(typeInvalidSyntax, "schemas is required and must be an array of URNs")
	}
	found := false
	for _, r := range raw {
		s, ok := r.(string)
		if !ok {
			return badRequest(typeInvalidSyntax, "schemas must be an array of URNs")
		}
		if want == SchemaUser && !knownSchema(s) {
			return badRequest(typeInvalidSyntax, "unknown schema %q", shortName(s))
		}
		found = found || strings.EqualFold(s, want)
	}
	if !found {
		return badRequest(typeInvalidSyntax, "schemas must include %s", want)
	}
	return nil
}

// parseUser reads a POST or PUT body into a user.
func parseUser(m map[string]any) (directory.User, error) {
	if err := checkSchemas(m, SchemaUser); err != nil {
		return directory.User{}, err
	}
	a, err := canonical(coreAttrs(), m, true)
	if err != nil {
		return directory.User{}, err
	}
	return userFromAttrs(a)
}

func getString(a attrs, key string) string { s, _ := a[key].(string); return s }

func getAttrs(a attrs, key string) attrs { m, _ := a[key].(attrs); return m }

// userFromAttrs builds a user from checked attributes; userName is required.
func userFromAttrs(a attrs) (directory.User, error) {
	name, ent, hr := getAttrs(a, "name"), getAttrs(a, SchemaEnterprise), getAttrs(a, SchemaHrsync)
	u := directory.User{
		ExternalID: getString(a, "externalId"), UserName: getString(a, "userName"),
		DisplayName: getString(a, "displayName"), Formatted: getString(name, "formatted"),
		GivenName: getString(name, "givenName"), FamilyName: getString(name, "familyName"),
		EmployeeNumber: getString(ent, "employeeNumber"), Department: getString(ent, "department"),
		StartDate: getString(hr, "startDate"), BirthDate: getString(hr, "birthDate"), Location: getString(hr, "location"),
	}
	if strings.TrimSpace(u.UserName) == "" {
		return directory.User{}, badRequest(typeInvalidValue, "userName is required")
	}
	if active, ok := a["active"].(bool); ok {
		u.Active = active
	} else {
		u.Active = true // RFC 7643 leaves it to the provider; a user pushed without it is active
	}
	if b, ok := hr["balanceOverride"].(float64); ok {
		u.BalanceOverride = &b
	}
	emails, _ := a["emails"].([]any)
	for _, e := range emails {
		em, _ := e.(attrs)
		primary, _ := em["primary"].(bool)
		u.Emails = append(u.Emails, directory.Email{Value: getString(em, "value"), Type: getString(em, "type"), Primary: primary})
	}
	return u, nil
}

func putString(a attrs, key, value string) {
	if value != "" {
		a[key] = value
	}
}

// userToAttrs is the inverse of userFromAttrs (id and meta excepted).
func userToAttrs(u directory.User) attrs {
	a := attrs{"userName": u.UserName, "active": u.Active}
	putString(a, "externalId", u.ExternalID)
	putString(a, "displayName", u.DisplayName)
	name := attrs{}
	putString(name, "formatted", u.Formatted)
	putString(name, "givenName", u.GivenName)
	putString(name, "familyName", u.FamilyName)
	if len(name) > 0 {
		a["name"] = name
	}
	if len(u.Emails) > 0 {
		list := make([]any, 0, len(u.Emails))
		for _, e := range u.Emails {
			em := attrs{"value": e.Value, "primary": e.Primary}
			putString(em, "type", e.Type)
			list = append(list, em)
		}
		a["emails"] = list
	}
	ent, hr := attrs{}, attrs{}
	putString(ent, "employeeNumber", u.EmployeeNumber)
	putString(ent, "department", u.Department)
	putString(hr, "startDate", u.StartDate)
	putString(hr, "birthDate", u.BirthDate)
	putString(hr, "location", u.Location)
	if u.BalanceOverride != nil {
		hr["balanceOverride"] = *u.BalanceOverride
	}
	if len(ent) > 0 {
		a[SchemaEnterprise] = ent
	}
	if len(hr) > 0 {
		a[SchemaHrsync] = hr
	}
	return a
}

// render is the JSON resource of a user, with schemas and meta.
func render(u directory.User, base string) attrs {
	a := userToAttrs(u)
	a["id"] = u.ID
	schemas := []string{SchemaUser}
	for _, ext := range []string{SchemaEnterprise, SchemaHrsync} {
		if _, ok := a[ext]; ok {
			schemas = append(schemas, ext)
		}
	}
	a["schemas"] = schemas
	a["meta"] = attrs{
		"resourceType": "User",
		"created":      u.Created.UTC().Format(time.RFC3339Nano),
		"lastModified": u.LastModified.UTC().Format(time.RFC3339Nano),
		"version":      etag(u.Version),
		"location":     base + "/Users/" + u.ID,
	}
	return a
}

// etag is a user's version as a weak entity tag.
func etag(version int64) string { return `W/"` + strconv.FormatInt(version, 10) + `"` }

// ifMatch reads If-Match into a version for the directory: 0 for none or "*", -1 for a tag that
// can be no version of ours (so the write fails with 412).
func ifMatch(header string) int64 {
	h := strings.TrimSpace(header)
	if h == "" || h == "*" {
		return 0
	}
	first, _, _ := strings.Cut(h, ",")
	tag := strings.Trim(strings.TrimPrefix(strings.TrimSpace(first), "W/"), `"`)
	v, err := strconv.ParseInt(tag, 10, 64)
	if err != nil || v < 1 {
		return -1
	}
	return v
}
