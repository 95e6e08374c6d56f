package directory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Memory is the reference Directory: it keeps everything in memory, under one lock, and defines by
// its behaviour (checked by directorytest) what a store-backed Directory must do. It is used by the
// SCIM handler's tests and is safe for concurrent use; its state is lost when the process ends.
type Memory struct {
	now func() time.Time

	mu      sync.Mutex
	tenants map[string]*memTenant
}

type memTenant struct {
	users    map[string]*memUser // by id
	userName map[string]string   // lower-cased userName → id
	external map[string]string   // externalId → id
	nextSeq  int64               // creation order
	audit    []AuditEntry
}

type memUser struct {
	seq  int64
	user User
}

// NewMemory returns an empty Memory. now gives the time of writes; nil means time.Now.
func NewMemory(now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	return &Memory{now: now, tenants: map[string]*memTenant{}}
}

func (m *Memory) tenant(name string) *memTenant {
	t := m.tenants[name]
	if t == nil {
		t = &memTenant{users: map[string]*memUser{}, userName: map[string]string{}, external: map[string]string{}}
		m.tenants[name] = t
	}
	return t
}

// stamp returns the write time, in UTC and to the microsecond as SQL stores keep it.
func (m *Memory) stamp() time.Time { return m.now().UTC().Truncate(time.Microsecond) }

// checkUnique fails when another user than id holds u's userName or externalId.
func (t *memTenant) checkUnique(u User, id string) error {
	if strings.TrimSpace(u.UserName) == "" {
		return fmt.Errorf("%w: userName is required", ErrInvalid)
	}
	if other, ok := t.userName[strings.ToLower(u.UserName)]; ok && other != id {
		return fmt.Errorf("%w: userName is taken", ErrConflict)
	}
	if u.ExternalID != "" {
		if other, ok := t.external[u.ExternalID]; ok && other != id {
			return fmt.Errorf("%w: externalId is taken", ErrConflict)
		}
	}
	return nil
}

func (t *memTenant) index(u User) {
	t.userName[strings.ToLower(u.UserName)] = u.ID
	if u.ExternalID != "" {
		t.external[u.ExternalID] = u.ID
	}
}

func (t *memTenant) unindex(u User) {
	delete(t.userName, strings.ToLower(u.UserName))
	if u.ExternalID != "" {
		delete(t.external, u.ExternalID)
	}
}

func (t *memTenant) record(w Write, at time.Time, action Action, before, after User) {
	id, ext := after.ID, after.ExternalID
	if action == ActionDelete {
		id, ext = before.ID, before.ExternalID
	}
	t.audit = append(t.audit, AuditEntry{
		Seq: int64(len(t.audit)) + 1, Tenant: w.Tenant, Actor: w.Actor, At: at, Action: action,
		UserID: id, ExternalID: ext, Version: after.Version, Changes: Diff(w.Tenant, before, after),
	})
}

// Create implements Directory.
func (m *Memory) Create(ctx context.Context, w Write, u User) (User, error) {
	if err := ctx.Err(); err != nil {
		return User{}, fmt.Errorf("create user: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.tenant(w.Tenant)
	u = Clone(u)
	if err := t.checkUnique(u, ""); err != nil {
		return User{}, fmt.Errorf("create user: %w", err)
	}
	now := m.stamp()
	u.ID, u.Created, u.LastModified, u.Version = uuid.NewString(), now, now, 1
	t.nextSeq++
	t.users[u.ID] = &memUser{seq: t.nextSeq, user: u}
	t.index(u)
	t.record(w, now, ActionCreate, User{}, u)
	return Clone(u), nil
}

// Get implements Directory.
func (m *Memory) Get(ctx context.Context, tenant, id string) (User, error) {
	if err := ctx.Err(); err != nil {
		return User{}, fmt.Errorf("get user: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	mu, ok := m.tenant(tenant).users[id]
	if !ok {
		return User{}, fmt.Errorf("get user: %w", ErrNotFound)
	}
	return Clone(mu.user), nil
}

func matches(u User, filter []Term) bool {
	for _, term := range filter {
		switch term.Attr {
		case AttrID:
			if u.ID != term.Value {
				return false
			}
		case AttrUserName:
			// The lower-cased forms, the key uniqueness uses (and the store's
			// index): strings.EqualFold would differ for a few runes (ſ, K).
			if key := strings.ToLower(term.Value); strings.ToLower(u.UserName) != key {
				return false
			}
		case AttrExternalID:
			if u.ExternalID != term.Value {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// List implements Directory.
func (m *Memory) List(ctx context.Context, tenant string, q Query) (Page, error) {
	if err := ctx.Err(); err != nil {
		return Page{}, fmt.Errorf("list users: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var hits []*memUser
	for _, mu := range m.tenant(tenant).users {
		if matches(mu.user, q.Filter) {
			hits = append(hits, mu)
		}
	}
	slices.SortFunc(hits, func(a, b *memUser) int { return int(a.seq - b.seq) })
	page := Page{Total: len(hits), Users: []User{}}
	start := max(q.StartIndex, 1) - 1
	for i := start; i < len(hits) && len(page.Users) < q.Count; i++ {
		page.Users = append(page.Users, Clone(hits[i].user))
	}
	return page, nil
}

// write replaces the stored user id with next (built from a copy of the current user), checking
// the version and uniqueness; it records nothing when nothing changed.
func (m *Memory) write(w Write, id string, action Action, next func(User) (User, error)) (User, error) {
	t := m.tenant(w.Tenant)
	mu, ok := t.users[id]
	if !ok {
		return User{}, ErrNotFound
	}
	cur := mu.user
	if w.IfVersion != 0 && w.IfVersion != cur.Version {
		return User{}, ErrVersionMismatch
	}
	u, err := next(Clone(cur))
	if err != nil {
		return User{}, err
	}
	u = Clone(u)
	u.ID, u.Created, u.LastModified, u.Version = cur.ID, cur.Created, cur.LastModified, cur.Version
	if len(Diff(w.Tenant, cur, u)) == 0 {
		return Clone(cur), nil
	}
	if err := t.checkUnique(u, id); err != nil {
		return User{}, err
	}
	u.LastModified, u.Version = m.stamp(), cur.Version+1
	t.unindex(cur)
	t.index(u)
	mu.user = u
	t.record(w, u.LastModified, action, cur, u)
	return Clone(u), nil
}

// Replace implements Directory.
func (m *Memory) Replace(ctx context.Context, w Write, id string, u User) (User, error) {
	if err := ctx.Err(); err != nil {
		return User{}, fmt.Errorf("replace user: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out, err := m.write(w, id, ActionReplace, func(User) (User, error) { return u, nil })
	if err != nil {
		return User{}, fmt.Errorf("replace user: %w", err)
	}
	return out, nil
}

// Update implements Directory.
func (m *Memory) Update(ctx context.Context, w Write, id string, apply func(User) (User, error)) (User, error) {
	if err := ctx.Err(); err != nil {
		return User{}, fmt.Errorf("update user: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out, err := m.write(w, id, ActionPatch, apply)
	if err != nil {
		return User{}, fmt.Errorf("update user: %w", err)
	}
	return out, nil
}

// Delete implements Directory.
func (m *Memory) Delete(ctx context.Context, w Write, id string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("delete user: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.tenant(w.Tenant)
	mu, ok := t.users[id]
	if !ok {
		return fmt.Errorf("delete user: %w", ErrNotFound)
	}
	if w.IfVersion != 0 && w.IfVersion != mu.user.Version {
		return fmt.Errorf("delete user: %w", ErrVersionMismatch)
	}
	t.unindex(mu.user)
	delete(t.users, id)
	t.record(w, m.stamp(), ActionDelete, mu.user, User{})
	return nil
}

// Audit implements Directory.
func (m *Memory) Audit(ctx context.Context, tenant string, afterSeq int64, limit int) ([]AuditEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("read audit: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []AuditEntry
	for _, e := range m.tenant(tenant).audit {
		if e.Seq > afterSeq && len(out) < limit {
			e.Changes = slices.Clone(e.Changes)
			out = append(out, e)
		}
	}
	return out, nil
}
