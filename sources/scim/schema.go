package scim

import "strings"

// URNs of the schemas and messages this service provider speaks.
const (
	SchemaUser       = "urn:ietf:params:scim:schemas:core:2.0:User"
	SchemaEnterprise = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
	// SchemaHrsync is hrsync's extension: what the gifting platform needs that no standard schema
	// holds (start date, birth date, location, balance override).
	SchemaHrsync = "urn:ietf:params:scim:schemas:extension:hrsync:2.0:User"

	schemaListResponse = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
	schemaPatchOp      = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
	schemaError        = "urn:ietf:params:scim:api:messages:2.0:Error"
	schemaSPConfig     = "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"
	schemaResourceType = "urn:ietf:params:scim:schemas:core:2.0:ResourceType"
	schemaSchema       = "urn:ietf:params:scim:schemas:core:2.0:Schema"

	mediaType = "application/scim+json"
)

// Attribute types (RFC 7643 section 2.3) used here.
const (
	typeString  = "string"
	typeBoolean = "boolean"
	typeDecimal = "decimal"
	typeComplex = "complex"
)

// attrDef describes one attribute: it drives validation, PATCH and the /Schemas answer alike.
type attrDef struct {
	Name        string
	Type        string
	Multi       bool
	Required    bool
	CaseExact   bool
	Mutability  string // readWrite unless set
	Uniqueness  string // none unless set
	Description string
	Sub         []attrDef
	// date marks a string holding a calendar day (YYYY-MM-DD).
	date bool
	// birthday marks a birth date, of which only the month and day are
	// kept (directory.Birthday).
	birthday bool
}

// schemaDef is one schema: a URN, a name and its attributes.
type schemaDef struct {
	ID          string
	Name        string
	Description string
	Attrs       []attrDef
}

func str(name, desc string) attrDef { return attrDef{Name: name, Type: typeString, Description: desc} }

func coreSchema() schemaDef {
	return schemaDef{ID: SchemaUser, Name: "User", Description: "User account (RFC 7643 section 4.1), as hrsync keeps it", Attrs: []attrDef{
		{Name: "userName", Type: typeString, Required: true, Uniqueness: "server",
			Description: "Unique identifier for the user within the tenant, compared without case (usually the work e-mail or UPN)."},
		{Name: "name", Type: typeComplex, Description: "The user's name.", Sub: []attrDef{
			str("formatted", "The full name."),
			str("familyName", "The family name."),
			str("givenName", "The given name."),
		}},
		str("displayName", "The name shown for the user."),
		{Name: "emails", Type: typeComplex, Multi: true, Description: "E-mail addresses; the primary (else the work, else the first) is the one the platform gets.", Sub: []attrDef{
			str("value", "The e-mail address."),
			str("type", "work, home or other."),
			{Name: "primary", Type: typeBoolean, Description: "Whether this is the primary address."},
		}},
		{Name: "active", Type: typeBoolean, Description: "false when the user is deactivated (a departure for hrsync)."},
	}}
}

func enterpriseSchema() schemaDef {
	return schemaDef{ID: SchemaEnterprise, Name: "EnterpriseUser", Description: "Enterprise user (RFC 7643 section 4.3), the attributes hrsync keeps", Attrs: []attrDef{
		str("employeeNumber", "The employee number the HR system knows."),
		str("department", "The department."),
	}}
}

func hrsyncSchema() schemaDef {
	return schemaDef{ID: SchemaHrsync, Name: "HrsyncUser", Description: "What the gifting platform needs about a person", Attrs: []attrDef{
		{Name: "startDate", Type: typeString, date: true, Description: "First working day, YYYY-MM-DD (a dateTime is cut to its day)."},
		{Name: "birthDate", Type: typeString, birthday: true,
			Description: "Birth date (YYYY-MM-DD, or --MM-DD) for birthday grants; only the month and day are kept and returned, as --MM-DD."},
		str("location", "Office or site."),
		{Name: "balanceOverride", Type: typeDecimal, Description: "Balance to grant instead of the rule's amount."},
	}}
}

func allSchemas() []schemaDef { return []schemaDef{coreSchema(), enterpriseSchema(), hrsyncSchema()} }

// extensionSchemas are the schemas whose attributes sit under their URN in a resource.
func extensionSchemas() []schemaDef { return []schemaDef{enterpriseSchema(), hrsyncSchema()} }

// ignoredCore names the RFC 7643 User attributes (and enterprise ones) that clients send but hrsync
// does not keep: they are accepted and dropped instead of refused as unknown.
func ignoredAttr(name string) bool {
	switch strings.ToLower(name) {
	case "nickname", "profileurl", "title", "usertype", "preferredlanguage", "locale", "timezone",
		"password", "phonenumbers", "ims", "photos", "addresses", "groups", "entitlements", "roles",
		"x509certificates", "costcenter", "organization", "division", "manager",
		"middlename", "honorificprefix", "honorificsuffix", "display":
		return true
	}
	return false
}

func findAttr(defs []attrDef, name string) (attrDef, bool) {
	for _, d := range defs {
		if strings.EqualFold(d.Name, name) {
			return d, true
		}
	}
	return attrDef{}, false
}

func findExtension(urn string) (schemaDef, bool) {
	for _, s := range extensionSchemas() {
		if strings.EqualFold(s.ID, urn) {
			return s, true
		}
	}
	return schemaDef{}, false
}

func knownSchema(urn string) bool {
	for _, s := range allSchemas() {
		if strings.EqualFold(s.ID, urn) {
			return true
		}
	}
	return false
}
