package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"hrsync/sources/scim/directory"
)

// SCIMDirectory is the tenants' SCIM directories kept in the store (tables
// scim_tenants, scim_users, scim_audit): a directory.Directory that passes
// the same conformance suite (directorytest) as directory.Memory.
//
// Every method is one transaction. A write and its audit entry commit
// together, before the method returns (DESIGN.md, invariant 10). Uniqueness
// of userName (per tenant, lower-cased) and of externalId (per tenant, when
// set) is enforced by unique indexes over the live users: a write that
// breaks one fails with directory.ErrConflict and stores nothing. Update
// and Replace read the user with the dialect's row lock (ForUpdate), so two
// updates of one user serialize and neither is lost.
//
// Every write that changes a user first takes the tenant's next change
// sequence (scim_tenants), which is also the sequence of its audit entry.
// That row's lock serializes a tenant's writes on PostgreSQL (SQLite's one
// writer serializes all of them): the sequences of a tenant commit in order,
// which is what lets the people job read "changes since N" (SCIMUsers), and
// the look for a taken userName or externalId that precedes each write sees
// every earlier write, so the error names the attribute taken; the indexes
// stay the guarantee.
//
// List filters are evaluated in SQL: a filter's terms are only equality on
// id, externalId (exact) and userName (on the lower-cased key, the same key
// uniqueness uses), all of them indexed.
type SCIMDirectory struct{ s *Store }

var _ directory.Directory = (*SCIMDirectory)(nil)

// SCIMDirectory returns the store's SCIM directory.
func (s *Store) SCIMDirectory() *SCIMDirectory { return &SCIMDirectory{s: s} }

// scimAttrs is the JSON of scim_users.attrs: a user's attributes that have no
// column of their own.
type scimAttrs struct {
	DisplayName     string      `json:"displayName,omitempty"`
	Formatted       string      `json:"formatted,omitempty"`
	GivenName       string      `json:"givenName,omitempty"`
	FamilyName      string      `json:"familyName,omitempty"`
	Emails          []scimEmail `json:"emails,omitempty"`
	EmployeeNumber  string      `json:"employeeNumber,omitempty"`
	Department      string      `json:"department,omitempty"`
	StartDate       string      `json:"startDate,omitempty"`
	BirthDate       string      `json:"birthDate,omitempty"`
	Location        string      `json:"location,omitempty"`
	BalanceOverride *float64    `json:"balanceOverride,omitempty"`
}

type scimEmail struct {
	Value   string `json:"value"`
	Type    string `json:"type,omitempty"`
	Primary bool   `json:"primary,omitempty"`
}

// scimRow is a row of scim_users.
type scimRow struct {
	ID         string         `db:"id"`
	UserName   string         `db:"user_name"`
	ExternalID sql.NullString `db:"external_id"`
	Active     bool           `db:"active"`
	Attrs      []byte         `db:"attrs"`
	Version    int64          `db:"version"`
	Created    dbTime         `db:"created_at"`
	Modified   dbTime         `db:"modified_at"`
	Deleted    dbTime         `db:"deleted_at"`
	ChangeSeq  int64          `db:"change_seq"`
}

const scimCols = `id, user_name, external_id, active, attrs, version, created_at, modified_at, deleted_at, change_seq`

func (r scimRow) user() (directory.User, error) {
	var a scimAttrs
	if err := json.Unmarshal(r.Attrs, &a); err != nil {
		return directory.User{}, fmt.Errorf("user %s: attrs: %w", r.ID, err)
	}
	u := directory.User{
		ID: r.ID, ExternalID: r.ExternalID.String, UserName: r.UserName, Active: r.Active,
		DisplayName: a.DisplayName, Formatted: a.Formatted, GivenName: a.GivenName, FamilyName: a.FamilyName,
		EmployeeNumber: a.EmployeeNumber, Department: a.Department, StartDate: a.StartDate,
		BirthDate: a.BirthDate, Location: a.Location, BalanceOverride: a.BalanceOverride,
		Created: r.Created.Time, LastModified: r.Modified.Time, Version: r.Version,
	}
	for _, e := range a.Emails {
		u.Emails = append(u.Emails, directory.Email{Value: e.Value, Type: e.Type, Primary: e.Primary})
	}
	return u, nil
}

func attrsJSON(u directory.User) (string, error) {
	a := scimAttrs{
		DisplayName: u.DisplayName, Formatted: u.Formatted, GivenName: u.GivenName, FamilyName: u.FamilyName,
		EmployeeNumber: u.EmployeeNumber, Department: u.Department, StartDate: u.StartDate,
		Location: u.Location, BalanceOverride: u.BalanceOverride,
	}
	// The state keeps no year of birth, whoever writes (DESIGN.md,
	// invariant 5): the month and day alone, and nothing of a value that
	// is not a date.
	a.BirthDate, _ = directory.Birthday(u.BirthDate)
	for _, e := range u.Emails {
		a.Emails = append(a.Emails, scimEmail{Value: e.Value, Type: e.Type, Primary: e.Primary})
	}
	b, err := json.Marshal(a)
	if err != nil {
		return "", fmt.Errorf("attrs: %w", err)
	}
	return string(b), nil
}

// checkUserName refuses a user without a userName.
func checkUserName(u directory.User) error {
	if strings.TrimSpace(u.UserName) == "" {
		return fmt.Errorf("%w: userName is required", directory.ErrInvalid)
	}
	return nil
}

// checkUnique fails with directory.ErrConflict, naming the attribute as
// directory.Memory does, when another live user of the tenant than id holds
// u's userName or externalId. The unique indexes enforce the same; this
// look first only names which attribute is taken.
func checkUnique(ctx context.Context, tx *sqlx.Tx, tenant, id string, u directory.User) error {
	var n int
	if err := tx.QueryRowxContext(ctx, tx.Rebind(`SELECT COUNT(*) FROM scim_users
		WHERE tenant = ? AND user_name_key = ? AND deleted_at IS NULL AND id <> ?`),
		tenant, strings.ToLower(u.UserName), id).Scan(&n); err != nil {
		return fmt.Errorf("check userName: %w", err)
	}
	if n > 0 {
		return fmt.Errorf("%w: userName is taken", directory.ErrConflict)
	}
	if u.ExternalID == "" {
		return nil
	}
	if err := tx.QueryRowxContext(ctx, tx.Rebind(`SELECT COUNT(*) FROM scim_users
		WHERE tenant = ? AND external_id = ? AND deleted_at IS NULL AND id <> ?`),
		tenant, u.ExternalID, id).Scan(&n); err != nil {
		return fmt.Errorf("check externalId: %w", err)
	}
	if n > 0 {
		return fmt.Errorf("%w: externalId is taken", directory.ErrConflict)
	}
	return nil
}

// conflict maps a unique violation of scim_users to directory.ErrConflict:
// a concurrent write took the userName (or, more rarely, the externalId)
// after checkUnique looked.
func (d *SCIMDirectory) conflict(err error) error {
	if d.s.db.IsUniqueViolation(err) {
		return fmt.Errorf("%w: userName is taken (by a concurrent write)", directory.ErrConflict)
	}
	return err
}

// nextSeq takes the tenant's next change sequence, holding its row until the
// transaction ends.
func nextSeq(ctx context.Context, tx *sqlx.Tx, tenant string) (int64, error) {
	var seq int64
	err := tx.QueryRowxContext(ctx, tx.Rebind(`INSERT INTO scim_tenants (tenant, seq) VALUES (?, 1)
		ON CONFLICT (tenant) DO UPDATE SET seq = scim_tenants.seq + 1 RETURNING seq`), tenant).Scan(&seq)
	if err != nil {
		return 0, fmt.Errorf("next change sequence: %w", err)
	}
	return seq, nil
}

// audit records the change of a write, with directory.Diff's changes.
func audit(ctx context.Context, tx *sqlx.Tx, w directory.Write, seq int64, at time.Time, action directory.Action, before, after directory.User) error {
	id, ext := after.ID, after.ExternalID
	if action == directory.ActionDelete {
		id, ext = before.ID, before.ExternalID
	}
	changes := directory.Diff(w.Tenant, before, after)
	if changes == nil {
		changes = []directory.Change{}
	}
	b, err := json.Marshal(auditChanges(changes))
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if _, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO scim_audit
		(tenant, seq, actor, at, action, user_id, external_id, version, changes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		w.Tenant, seq, w.Actor, at, string(action), id, ext, after.Version, string(b)); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// Create implements directory.Directory.
func (d *SCIMDirectory) Create(ctx context.Context, w directory.Write, u directory.User) (directory.User, error) {
	u = directory.Clone(u)
	if err := checkUserName(u); err != nil {
		return directory.User{}, fmt.Errorf("create user: %w", err)
	}
	attrs, err := attrsJSON(u)
	if err != nil {
		return directory.User{}, fmt.Errorf("create user: %w", err)
	}
	now := d.s.stamp()
	u.ID, u.Created, u.LastModified, u.Version = uuid.NewString(), now, now, 1
	err = d.s.inTx(ctx, "create user", func(tx *sqlx.Tx) error {
		seq, err := nextSeq(ctx, tx, w.Tenant)
		if err != nil {
			return err
		}
		if err := checkUnique(ctx, tx, w.Tenant, "", u); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO scim_users (tenant, id, user_name, user_name_key,
			external_id, active, attrs, version, created_at, modified_at, created_seq, change_seq)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
			w.Tenant, u.ID, u.UserName, strings.ToLower(u.UserName), nullStr(u.ExternalID), u.Active, attrs,
			u.Version, now, now, seq, seq); err != nil {
			return d.conflict(err)
		}
		return audit(ctx, tx, w, seq, now, directory.ActionCreate, directory.User{}, u)
	})
	if err != nil {
		return directory.User{}, err
	}
	return directory.Clone(u), nil
}

// queryer is a transaction or a pool: what get reads through.
type queryer interface {
	sqlx.QueryerContext
	Rebind(query string) string
}

// get reads a live user of the tenant, with lock appended to the SELECT.
func get(ctx context.Context, q queryer, tenant, id, lock string) (directory.User, error) {
	var r scimRow
	err := sqlx.GetContext(ctx, q, &r, q.Rebind(`SELECT `+scimCols+` FROM scim_users
		WHERE tenant = ? AND id = ? AND deleted_at IS NULL`+lock), tenant, id)
	if errors.Is(err, sql.ErrNoRows) {
		return directory.User{}, directory.ErrNotFound
	}
	if err != nil {
		return directory.User{}, fmt.Errorf("read user: %w", err)
	}
	return r.user()
}

// Get implements directory.Directory.
func (d *SCIMDirectory) Get(ctx context.Context, tenant, id string) (directory.User, error) {
	u, err := get(ctx, d.s.r, tenant, id, "")
	if err != nil {
		return directory.User{}, fmt.Errorf("get user: %w", err)
	}
	return u, nil
}

// Replace implements directory.Directory.
func (d *SCIMDirectory) Replace(ctx context.Context, w directory.Write, id string, u directory.User) (directory.User, error) {
	return d.write(ctx, "replace user", w, id, directory.ActionReplace, func(directory.User) (directory.User, error) { return u, nil })
}

// Update implements directory.Directory.
func (d *SCIMDirectory) Update(ctx context.Context, w directory.Write, id string, apply func(directory.User) (directory.User, error)) (directory.User, error) {
	return d.write(ctx, "update user", w, id, directory.ActionPatch, apply)
}

// write replaces user id with what next makes of a copy of it, in one
// transaction that reads the user with the dialect's row lock, checks the
// version, writes and records the change; it stores nothing when nothing
// changed.
func (d *SCIMDirectory) write(ctx context.Context, what string, w directory.Write, id string, action directory.Action,
	next func(directory.User) (directory.User, error),
) (directory.User, error) {
	var out directory.User
	err := d.s.inTx(ctx, what, func(tx *sqlx.Tx) error {
		cur, err := get(ctx, tx, w.Tenant, id, d.s.db.ForUpdate())
		if err != nil {
			return err
		}
		if w.IfVersion != 0 && w.IfVersion != cur.Version {
			return directory.ErrVersionMismatch
		}
		u, err := next(directory.Clone(cur))
		if err != nil {
			return errApply{err}
		}
		u = directory.Clone(u)
		u.ID, u.Created, u.LastModified, u.Version = cur.ID, cur.Created, cur.LastModified, cur.Version
		if len(directory.Diff(w.Tenant, cur, u)) == 0 {
			out = cur
			return nil
		}
		if err := checkUserName(u); err != nil {
			return err
		}
		u.LastModified, u.Version = d.s.stamp(), cur.Version+1
		if err := d.store(ctx, tx, w, action, cur, u); err != nil {
			return err
		}
		out = u
		return nil
	})
	var ae errApply
	if errors.As(err, &ae) {
		return directory.User{}, ae.err
	}
	if err != nil {
		return directory.User{}, err
	}
	return directory.Clone(out), nil
}

// errApply carries the error of an Update's function out of its transaction,
// to be returned unchanged.
type errApply struct{ err error }

func (e errApply) Error() string { return e.err.Error() }
func (e errApply) Unwrap() error { return e.err }

// store writes u over cur and records the change.
func (d *SCIMDirectory) store(ctx context.Context, tx *sqlx.Tx, w directory.Write, action directory.Action, cur, u directory.User) error {
	attrs, err := attrsJSON(u)
	if err != nil {
		return err
	}
	seq, err := nextSeq(ctx, tx, w.Tenant)
	if err != nil {
		return err
	}
	if err := checkUnique(ctx, tx, w.Tenant, u.ID, u); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE scim_users SET user_name = ?, user_name_key = ?, external_id = ?,
		active = ?, attrs = ?, version = ?, modified_at = ?, change_seq = ? WHERE tenant = ? AND id = ?`),
		u.UserName, strings.ToLower(u.UserName), nullStr(u.ExternalID), u.Active, attrs, u.Version,
		u.LastModified, seq, w.Tenant, u.ID); err != nil {
		return d.conflict(err)
	}
	return audit(ctx, tx, w, seq, u.LastModified, action, cur, u)
}

// Delete implements directory.Directory: the user's row stays as a
// tombstone, its userName and externalId free again.
func (d *SCIMDirectory) Delete(ctx context.Context, w directory.Write, id string) error {
	return d.s.inTx(ctx, "delete user", func(tx *sqlx.Tx) error {
		cur, err := get(ctx, tx, w.Tenant, id, d.s.db.ForUpdate())
		if err != nil {
			return err
		}
		if w.IfVersion != 0 && w.IfVersion != cur.Version {
			return directory.ErrVersionMismatch
		}
		seq, err := nextSeq(ctx, tx, w.Tenant)
		if err != nil {
			return err
		}
		now := d.s.stamp()
		if _, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE scim_users SET deleted_at = ?, modified_at = ?, change_seq = ?
			WHERE tenant = ? AND id = ?`), now, now, seq, w.Tenant, id); err != nil {
			return fmt.Errorf("delete: %w", err)
		}
		return audit(ctx, tx, w, seq, now, directory.ActionDelete, cur, directory.User{})
	})
}
