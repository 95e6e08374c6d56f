package directory

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"time"
)

// AuditEntry is one change in a tenant's trail.
type AuditEntry struct {
	// Seq orders the tenant's entries; it only grows.
	Seq    int64
	Tenant string
	Actor  string
	At     time.Time
	Action Action
	UserID string
	// ExternalID names the person the way hrsync's logs do.
	ExternalID string
	// Version is the user's version after the change (0 after a delete).
	Version int64
	Changes []Change
}

// Change is one attribute that changed. Values of attributes that are personal data are recorded
// as hashes ("sha256:" and 16 hex digits of the SHA-256 of tenant, NUL, value), others as they are;
// an empty side means the attribute was absent.
type Change struct {
	Attr string
	Old  string
	New  string
}

type field struct {
	name string
	pii  bool
	get  func(User) string
}

func emailsText(u User) string {
	parts := make([]string, 0, len(u.Emails))
	for _, e := range u.Emails {
		parts = append(parts, strings.ToLower(e.Value)+"|"+e.Type+"|"+strconv.FormatBool(e.Primary))
	}
	return strings.Join(parts, ",")
}

func balanceText(u User) string {
	if u.BalanceOverride == nil {
		return ""
	}
	return strconv.FormatFloat(*u.BalanceOverride, 'f', -1, 64)
}

// fields lists the audited attributes in a stable order.
func fields() []field {
	return []field{
		{"externalId", false, func(u User) string { return u.ExternalID }},
		{"userName", true, func(u User) string { return u.UserName }},
		{"displayName", true, func(u User) string { return u.DisplayName }},
		{"name.formatted", true, func(u User) string { return u.Formatted }},
		{"name.givenName", true, func(u User) string { return u.GivenName }},
		{"name.familyName", true, func(u User) string { return u.FamilyName }},
		{"emails", true, emailsText},
		{"active", false, func(u User) string { return strconv.FormatBool(u.Active) }},
		{"employeeNumber", false, func(u User) string { return u.EmployeeNumber }},
		{"department", false, func(u User) string { return u.Department }},
		{"startDate", false, func(u User) string { return u.StartDate }},
		{"birthDate", true, func(u User) string { return u.BirthDate }},
		{"location", false, func(u User) string { return u.Location }},
		{"balanceOverride", false, balanceText},
	}
}

// Diff lists the attributes that differ between before and after (a zero User stands for "absent"),
// with personal data hashed for the tenant. Every implementation records exactly this.
func Diff(tenant string, before, after User) []Change {
	var out []Change
	for _, f := range fields() {
		o, n := f.get(before), f.get(after)
		if o == n {
			continue
		}
		if f.pii {
			o, n = HashPII(tenant, o), HashPII(tenant, n)
		}
		out = append(out, Change{Attr: f.name, Old: o, New: n})
	}
	return out
}

// HashPII is the audit form of a personal value: empty stays empty.
func HashPII(tenant, value string) string {
	if value == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(tenant + "\x00" + value))
	return "sha256:" + hex.EncodeToString(sum[:8])
}

// Clone returns a deep copy of u, so callers never share its slices or pointers.
func Clone(u User) User {
	u.Emails = slices.Clone(u.Emails)
	if u.BalanceOverride != nil {
		b := *u.BalanceOverride
		u.BalanceOverride = &b
	}
	return u
}
