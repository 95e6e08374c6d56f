package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"

	"hrsync/sources/scim/directory"
)

// listWhere renders a List filter as SQL conditions on scim_users, with its
// arguments: every term is an equality on an indexed column, userName on
// its lower-cased key. A term on an attribute the directory does not know
// matches nobody, as in directory.Memory.
func listWhere(tenant string, filter []directory.Term) (string, []any) {
	conds := []string{"tenant = ?", "deleted_at IS NULL"}
	args := []any{tenant}
	for _, t := range filter {
		switch t.Attr {
		case directory.AttrID:
			conds, args = append(conds, "id = ?"), append(args, t.Value)
		case directory.AttrExternalID:
			conds, args = append(conds, "external_id = ?"), append(args, t.Value)
		case directory.AttrUserName:
			conds, args = append(conds, "user_name_key = ?"), append(args, strings.ToLower(t.Value))
		default:
			conds = append(conds, "1 = 0")
		}
	}
	return strings.Join(conds, " AND "), args
}

// List implements directory.Directory. The filter is evaluated in SQL (see
// SCIMDirectory); the count and the page are read in one snapshot.
func (d *SCIMDirectory) List(ctx context.Context, tenant string, q directory.Query) (directory.Page, error) {
	where, args := listWhere(tenant, q.Filter)
	page := directory.Page{Users: []directory.User{}}
	err := d.s.inReadTx(ctx, "list users", func(tx *sqlx.Tx) error {
		if err := tx.QueryRowxContext(ctx, tx.Rebind(`SELECT COUNT(*) FROM scim_users WHERE `+where), args...).Scan(&page.Total); err != nil {
			return fmt.Errorf("count: %w", err)
		}
		start := max(q.StartIndex, 1) - 1
		if q.Count <= 0 || start >= page.Total {
			return nil
		}
		var rows []scimRow
		if err := tx.SelectContext(ctx, &rows, tx.Rebind(`SELECT `+scimCols+` FROM scim_users WHERE `+where+`
			ORDER BY created_seq LIMIT ? OFFSET ?`), append(args, q.Count, start)...); err != nil {
			return fmt.Errorf("select: %w", err)
		}
		for _, r := range rows {
			u, err := r.user()
			if err != nil {
				return err
			}
			page.Users = append(page.Users, u)
		}
		return nil
	})
	if err != nil {
		return directory.Page{}, err
	}
	return page, nil
}

// auditChange is one element of scim_audit.changes.
type auditChange struct {
	Attr string `json:"attr"`
	Old  string `json:"old"`
	New  string `json:"new"`
}

func auditChanges(cs []directory.Change) []auditChange {
	out := make([]auditChange, 0, len(cs))
	for _, c := range cs {
		out = append(out, auditChange(c))
	}
	return out
}

// auditRow is a row of scim_audit.
type auditRow struct {
	Tenant     string `db:"tenant"`
	Seq        int64  `db:"seq"`
	Actor      string `db:"actor"`
	At         dbTime `db:"at"`
	Action     string `db:"action"`
	UserID     string `db:"user_id"`
	ExternalID string `db:"external_id"`
	Version    int64  `db:"version"`
	Changes    []byte `db:"changes"`
}

// Audit implements directory.Directory.
func (d *SCIMDirectory) Audit(ctx context.Context, tenant string, afterSeq int64, limit int) ([]directory.AuditEntry, error) {
	if limit <= 0 {
		return nil, nil
	}
	var rows []auditRow
	if err := d.s.r.SelectContext(ctx, &rows, d.s.r.Rebind(`SELECT tenant, seq, actor, at, action, user_id, external_id,
		version, changes FROM scim_audit WHERE tenant = ? AND seq > ? ORDER BY seq LIMIT ?`), tenant, afterSeq, limit); err != nil {
		return nil, fmt.Errorf("read audit: %w", err)
	}
	out := make([]directory.AuditEntry, 0, len(rows))
	for _, r := range rows {
		var cs []auditChange
		if err := json.Unmarshal(r.Changes, &cs); err != nil {
			return nil, fmt.Errorf("read audit: entry %d: %w", r.Seq, err)
		}
		e := directory.AuditEntry{
			Seq: r.Seq, Tenant: r.Tenant, Actor: r.Actor, At: r.At.Time, Action: directory.Action(r.Action),
			UserID: r.UserID, ExternalID: r.ExternalID, Version: r.Version,
		}
		for _, c := range cs {
			e.Changes = append(e.Changes, directory.Change(c))
		}
		out = append(out, e)
	}
	return out, nil
}

// SCIMUser is a user of a tenant's SCIM directory as the people job reads
// it (directory.Entry): the user as last written, whether it was deleted
// since, and the sequence of its last change.
type SCIMUser = directory.Entry

// The store is the feed the SCIM source kind reads.
var _ directory.Feed = (*Store)(nil)

// SCIMUsers is the feed the SCIM source kind reads: the users of the
// tenant's SCIM directory whose last change has a sequence after afterSeq
// (0: every user ever created), active, deactivated and deleted alike, in
// creation order, and the tenant's last change sequence (0 when nothing was
// ever written). Both come from one snapshot, and sequences commit in order
// (see SCIMDirectory): reading again with afterSeq set to the returned
// sequence yields exactly the users changed since.
func (s *Store) SCIMUsers(ctx context.Context, tenant string, afterSeq int64) ([]SCIMUser, int64, error) {
	var out []SCIMUser
	var last int64
	err := s.inReadTx(ctx, "read scim users", func(tx *sqlx.Tx) error {
		err := tx.QueryRowxContext(ctx, tx.Rebind(`SELECT seq FROM scim_tenants WHERE tenant = ?`), tenant).Scan(&last)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("last sequence: %w", err)
		}
		var rows []scimRow
		if err := tx.SelectContext(ctx, &rows, tx.Rebind(`SELECT `+scimCols+` FROM scim_users
			WHERE tenant = ? AND change_seq > ? ORDER BY created_seq`), tenant, afterSeq); err != nil {
			return fmt.Errorf("select: %w", err)
		}
		out = make([]SCIMUser, 0, len(rows))
		for _, r := range rows {
			u, err := r.user()
			if err != nil {
				return err
			}
			out = append(out, SCIMUser{User: u, Deleted: r.Deleted.Time, Seq: r.ChangeSeq})
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return out, last, nil
}
