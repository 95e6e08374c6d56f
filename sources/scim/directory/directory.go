// Package directory is the state a SCIM 2.0 service provider keeps for each tenant: the users an
// identity provider (Okta, Microsoft Entra ID) pushed, with their versions and an audit trail of every
// change. It owns the Directory interface the SCIM handler depends on, the reference in-memory
// implementation (Memory) and the attribute diff every implementation records for audit, so a
// store-backed implementation (SQLite, PostgreSQL) behaves the same way and passes the same suite
// (package directorytest).
package directory

import (
	"context"
	"errors"
	"time"
)

// Errors a Directory returns, wrapped with details; compare them with errors.Is.
var (
	// ErrNotFound: no user with that id in the tenant.
	ErrNotFound = errors.New("user not found")
	// ErrConflict: another user of the tenant already has the userName (compared without case) or
	// the externalId.
	ErrConflict = errors.New("user already exists")
	// ErrVersionMismatch: the write named a version (If-Match) that is not the user's current one.
	ErrVersionMismatch = errors.New("version mismatch")
	// ErrInvalid: the user lacks what every user must have (a userName).
	ErrInvalid = errors.New("invalid user")
)

// Email is one of a user's e-mail addresses.
type Email struct {
	Value   string
	Type    string
	Primary bool
}

// User is one person as the identity provider describes them: the SCIM core User attributes hrsync
// keeps, the enterprise extension's employeeNumber and department, and the hrsync extension.
type User struct {
	// ID is the service provider's identifier, assigned by Create and never changed.
	ID string
	// ExternalID is the identity provider's identifier; unique within the tenant when set.
	ExternalID string
	// UserName is required and unique within the tenant, compared without case.
	UserName    string
	DisplayName string
	// Formatted, GivenName and FamilyName are the name's sub-attributes.
	Formatted  string
	GivenName  string
	FamilyName string
	Emails     []Email
	// Active is false for a deactivated user.
	Active bool

	// EmployeeNumber and Department come from the enterprise extension.
	EmployeeNumber string
	Department     string

	// StartDate is a calendar day (YYYY-MM-DD) from the hrsync extension.
	StartDate string
	// BirthDate is the hrsync extension's birth date as a directory keeps it: the month and day
	// alone, "--MM-DD" (see Birthday); the SCIM handler drops the year as it reads a request.
	BirthDate string
	// Location is the hrsync extension's office or site.
	Location string
	// BalanceOverride, when set, replaces the balance a rule would grant.
	BalanceOverride *float64

	// Created, LastModified and Version are set by the directory: Version starts at 1 and grows by
	// one with every write that changes the user.
	Created      time.Time
	LastModified time.Time
	Version      int64
}

// Attr names an attribute a Filter can match.
type Attr string

// The attributes a Filter can match.
const (
	AttrID         Attr = "id"
	AttrUserName   Attr = "userName"
	AttrExternalID Attr = "externalId"
)

// Term is one equality test: userName is compared without case (as strings.ToLower makes it, the
// key of its uniqueness), id and externalId exactly.
type Term struct {
	Attr  Attr
	Value string
}

// Query selects users for List: every Term must hold (an empty filter selects everyone). Users come
// in creation order; StartIndex is 1-based (below 1 means 1) and Count is the most returned (0: none,
// only the total).
type Query struct {
	Filter     []Term
	StartIndex int
	Count      int
}

// Page is one page of a List: the users of the page and how many users matched in all.
type Page struct {
	Total int
	Users []User
}

// Write says who writes, for which tenant, and on which version.
type Write struct {
	Tenant string
	// Actor is who made the change, for audit: the tenant's token name, never a person's data.
	Actor string
	// IfVersion, when not zero, must be the user's current version or the write fails with
	// ErrVersionMismatch.
	IfVersion int64
}

// Action is the kind of a change in the audit trail.
type Action string

// The actions recorded.
const (
	ActionCreate  Action = "create"
	ActionReplace Action = "replace"
	ActionPatch   Action = "patch"
	ActionDelete  Action = "delete"
)

// Directory is a tenant-partitioned store of SCIM users. Every write is committed, with its audit
// entry, before it returns; a write that changes nothing neither bumps the version nor records an
// entry. Implementations are safe for concurrent use.
type Directory interface {
	// Create stores a new user, assigning ID, Created, LastModified and Version 1.
	Create(ctx context.Context, w Write, u User) (User, error)
	// Get returns the user with the id.
	Get(ctx context.Context, tenant, id string) (User, error)
	// List returns the users the query selects.
	List(ctx context.Context, tenant string, q Query) (Page, error)
	// Replace replaces every attribute of the user with those of u (ID and the metadata excepted).
	Replace(ctx context.Context, w Write, id string, u User) (User, error)
	// Update reads the user, calls apply on a copy and stores what apply returns, all atomically.
	// apply must not call the directory; an error from apply is returned unchanged, nothing stored.
	Update(ctx context.Context, w Write, id string, apply func(User) (User, error)) (User, error)
	// Delete removes the user.
	Delete(ctx context.Context, w Write, id string) error
	// Audit returns up to limit entries of the tenant's trail with a sequence after afterSeq, oldest
	// first.
	Audit(ctx context.Context, tenant string, afterSeq int64, limit int) ([]AuditEntry, error)
}

// Entry is a user as a reader of the whole directory sees it (the people job, through the SCIM
// source kind): the user as last written, and whether it was deleted since.
type Entry struct {
	User
	// Deleted is when the user was deleted; zero while it exists. A deleted user keeps the
	// attributes it had when it was deleted.
	Deleted time.Time
	// Seq is the change sequence of the user's last change (its deletion included).
	Seq int64
}

// Feed reads a tenant's directory whole, as the people job does: the users whose last change has a
// sequence after afterSeq (0: every user ever created, deleted ones included), in creation order,
// and the tenant's last change sequence (0 when nothing was ever written), from one snapshot.
// *store.Store is one (its SCIMUsers method).
type Feed interface {
	SCIMUsers(ctx context.Context, tenant string, afterSeq int64) ([]Entry, int64, error)
}
