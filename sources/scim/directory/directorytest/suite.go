// Package directorytest is the conformance suite every directory.Directory runs: the in-memory
// reference implementation today, store-backed ones (SQLite, PostgreSQL) when they come.
package directorytest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"hrsync/sources/scim/directory"
)

// Factory returns a new, empty Directory for one subtest; it registers its own cleanup on t.
type Factory func(t *testing.T) directory.Directory

// Run runs the whole suite against directories made by newDir.
func Run(t *testing.T, newDir Factory) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(*testing.T, directory.Directory)
	}{
		{"CreateAndGet", testCreateAndGet},
		{"Uniqueness", testUniqueness},
		{"TenantsAreApart", testTenantsApart},
		{"ListFilters", testListFilters},
		{"ListPages", testListPages},
		{"Replace", testReplace},
		{"Update", testUpdate},
		{"Versions", testVersions},
		{"Delete", testDelete},
		{"Audit", testAudit},
		{"ConcurrentCreates", testConcurrentCreates},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newDir(t)) })
	}
}

const tenantA, tenantB = "acme", "globex"

func writeA() directory.Write { return directory.Write{Tenant: tenantA, Actor: "scim:acme"} }

func sample(i int) directory.User {
	b := 25.5
	return directory.User{
		ExternalID: fmt.Sprintf("ext-%03d", i), UserName: fmt.Sprintf("User%03d@Example.com", i),
		DisplayName: "Person", GivenName: "Given", FamilyName: "Family", Active: true,
		Emails:         []directory.Email{{Value: fmt.Sprintf("user%03d@example.com", i), Type: "work", Primary: true}},
		EmployeeNumber: fmt.Sprint(1000 + i), Department: "Sales", StartDate: "2026-03-02",
		BirthDate: "--05-17", Location: "Lyon", BalanceOverride: &b,
	}
}

func mustCreate(t *testing.T, d directory.Directory, w directory.Write, u directory.User) directory.User {
	t.Helper()
	got, err := d.Create(context.Background(), w, u)
	if err != nil {
		t.Fatalf("create %s: %v", u.ExternalID, err)
	}
	return got
}

func wantErr(t *testing.T, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("error = %v, want %v", err, want)
	}
}

func testCreateAndGet(t *testing.T, d directory.Directory) {
	ctx := context.Background()
	in := sample(1)
	got := mustCreate(t, d, writeA(), in)
	if got.ID == "" || got.Version != 1 || got.Created.IsZero() || !got.LastModified.Equal(got.Created) {
		t.Fatalf("created metadata = %q v%d %v %v", got.ID, got.Version, got.Created, got.LastModified)
	}
	read, err := d.Get(ctx, tenantA, got.ID)
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if read.UserName != in.UserName || read.Emails[0].Value != in.Emails[0].Value || *read.BalanceOverride != 25.5 ||
		read.BirthDate != in.BirthDate || read.Department != "Sales" || !read.Active || !read.Created.Equal(got.Created) {
		t.Fatalf("read back %+v, want %+v", read, in)
	}
	_, err = d.Get(ctx, tenantA, "no-such-id")
	wantErr(t, err, directory.ErrNotFound)
	_, err = d.Create(ctx, writeA(), directory.User{ExternalID: "x"})
	wantErr(t, err, directory.ErrInvalid)
}

func testUniqueness(t *testing.T, d directory.Directory) {
	ctx := context.Background()
	first := mustCreate(t, d, writeA(), sample(1))
	dup := sample(2)
	dup.UserName = strings.ToUpper(first.UserName)
	_, err := d.Create(ctx, writeA(), dup)
	wantErr(t, err, directory.ErrConflict)
	dup = sample(2)
	dup.ExternalID = first.ExternalID
	_, err = d.Create(ctx, writeA(), dup)
	wantErr(t, err, directory.ErrConflict)
	noExt := sample(3)
	noExt.ExternalID = ""
	mustCreate(t, d, writeA(), noExt)
	noExt2 := sample(4)
	noExt2.ExternalID = ""
	mustCreate(t, d, writeA(), noExt2) // empty externalIds do not collide
	if page, _ := d.List(ctx, tenantA, directory.Query{Count: 10}); page.Total != 3 {
		t.Fatalf("total = %d after refused creates, want 3", page.Total)
	}
}

func testTenantsApart(t *testing.T, d directory.Directory) {
	ctx := context.Background()
	a := mustCreate(t, d, writeA(), sample(1))
	b := mustCreate(t, d, directory.Write{Tenant: tenantB, Actor: "scim:globex"}, sample(1))
	if a.ID == b.ID {
		t.Fatal("two tenants got the same id")
	}
	_, err := d.Get(ctx, tenantB, a.ID)
	wantErr(t, err, directory.ErrNotFound)
	_, err = d.Update(ctx, directory.Write{Tenant: tenantB}, a.ID, func(u directory.User) (directory.User, error) { return u, nil })
	wantErr(t, err, directory.ErrNotFound)
	wantErr(t, d.Delete(ctx, directory.Write{Tenant: tenantB}, a.ID), directory.ErrNotFound)
	if page, _ := d.List(ctx, tenantB, directory.Query{Count: 10}); page.Total != 1 || page.Users[0].ID != b.ID {
		t.Fatalf("tenant B lists %+v", page)
	}
}

func testListFilters(t *testing.T, d directory.Directory) {
	ctx := context.Background()
	var made []directory.User
	for i := range 5 {
		made = append(made, mustCreate(t, d, writeA(), sample(i)))
	}
	cases := []struct {
		name   string
		filter []directory.Term
		want   []int
	}{
		{"userName without case", []directory.Term{{Attr: directory.AttrUserName, Value: "USER002@example.COM"}}, []int{2}},
		{"externalId exact", []directory.Term{{Attr: directory.AttrExternalID, Value: "ext-003"}}, []int{3}},
		{"externalId case matters", []directory.Term{{Attr: directory.AttrExternalID, Value: "EXT-003"}}, nil},
		{"id", []directory.Term{{Attr: directory.AttrID, Value: made[4].ID}}, []int{4}},
		{"and", []directory.Term{{Attr: directory.AttrUserName, Value: "user001@example.com"}, {Attr: directory.AttrExternalID, Value: "ext-001"}}, []int{1}},
		{"and disjoint", []directory.Term{{Attr: directory.AttrUserName, Value: "user001@example.com"}, {Attr: directory.AttrExternalID, Value: "ext-002"}}, nil},
		{"none", nil, []int{0, 1, 2, 3, 4}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			page, err := d.List(ctx, tenantA, directory.Query{Filter: tc.filter, Count: 100})
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			if page.Total != len(tc.want) || len(page.Users) != len(tc.want) {
				t.Fatalf("got %d of %d, want %d", len(page.Users), page.Total, len(tc.want))
			}
			for i, w := range tc.want {
				if page.Users[i].ID != made[w].ID {
					t.Fatalf("user %d = %s, want %s", i, page.Users[i].ExternalID, made[w].ExternalID)
				}
			}
		})
	}
}

func testListPages(t *testing.T, d directory.Directory) {
	ctx := context.Background()
	var made []directory.User
	for i := range 7 {
		made = append(made, mustCreate(t, d, writeA(), sample(i)))
	}
	cases := []struct{ start, count, first, n int }{
		{1, 3, 0, 3}, {4, 3, 3, 3}, {7, 3, 6, 1}, {8, 3, 0, 0}, {0, 2, 0, 2}, {-5, 2, 0, 2}, {1, 0, 0, 0}, {2, 100, 1, 6},
	}
	for _, tc := range cases {
		page, err := d.List(ctx, tenantA, directory.Query{StartIndex: tc.start, Count: tc.count})
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		if page.Total != 7 || len(page.Users) != tc.n || page.Users == nil {
			t.Fatalf("start %d count %d: %d users of %d, want %d of 7", tc.start, tc.count, len(page.Users), page.Total, tc.n)
		}
		for i, u := range page.Users {
			if u.ID != made[tc.first+i].ID {
				t.Fatalf("start %d count %d: user %d is %s, want creation order", tc.start, tc.count, i, u.ExternalID)
			}
		}
	}
}

func testReplace(t *testing.T, d directory.Directory) {
	ctx := context.Background()
	u := mustCreate(t, d, writeA(), sample(1))
	other := mustCreate(t, d, writeA(), sample(2))
	next := sample(1)
	next.Department, next.BalanceOverride, next.Emails = "Support", nil, nil
	got, err := d.Replace(ctx, writeA(), u.ID, next)
	if err != nil {
		t.Fatalf("replace: %v", err)
	}
	if got.Version != 2 || got.Department != "Support" || got.BalanceOverride != nil || len(got.Emails) != 0 ||
		!got.Created.Equal(u.Created) || got.LastModified.Before(u.LastModified) || got.ID != u.ID {
		t.Fatalf("replaced %+v", got)
	}
	same, err := d.Replace(ctx, writeA(), u.ID, next)
	if err != nil || same.Version != 2 {
		t.Fatalf("replace without change: v%d %v, want v2", same.Version, err)
	}
	clash := sample(1)
	clash.UserName = other.UserName
	_, err = d.Replace(ctx, writeA(), u.ID, clash)
	wantErr(t, err, directory.ErrConflict)
	_, err = d.Replace(ctx, writeA(), "missing", next)
	wantErr(t, err, directory.ErrNotFound)
	// the user keeps its own userName when only its case changes
	recase := next
	recase.UserName = strings.ToLower(next.UserName)
	if _, err := d.Replace(ctx, writeA(), u.ID, recase); err != nil {
		t.Fatalf("replace with own userName in other case: %v", err)
	}
}

func testUpdate(t *testing.T, d directory.Directory) {
	ctx := context.Background()
	u := mustCreate(t, d, writeA(), sample(1))
	got, err := d.Update(ctx, writeA(), u.ID, func(cur directory.User) (directory.User, error) {
		cur.Active = false
		return cur, nil
	})
	if err != nil || got.Active || got.Version != 2 {
		t.Fatalf("update: %+v %v", got, err)
	}
	boom := errors.New("boom")
	_, err = d.Update(ctx, writeA(), u.ID, func(cur directory.User) (directory.User, error) {
		cur.Department = "Lost"
		return cur, boom
	})
	wantErr(t, err, boom)
	read, _ := d.Get(ctx, tenantA, u.ID)
	if read.Department != "Sales" || read.Version != 2 {
		t.Fatalf("a failed update stored %+v", read)
	}
	same, err := d.Update(ctx, writeA(), u.ID, func(cur directory.User) (directory.User, error) { return cur, nil })
	if err != nil || same.Version != 2 {
		t.Fatalf("update without change: v%d %v", same.Version, err)
	}
}

func testVersions(t *testing.T, d directory.Directory) {
	ctx := context.Background()
	u := mustCreate(t, d, writeA(), sample(1))
	stale := writeA()
	stale.IfVersion = 7
	_, err := d.Replace(ctx, stale, u.ID, sample(1))
	wantErr(t, err, directory.ErrVersionMismatch)
	_, err = d.Update(ctx, stale, u.ID, func(c directory.User) (directory.User, error) { c.Active = false; return c, nil })
	wantErr(t, err, directory.ErrVersionMismatch)
	wantErr(t, d.Delete(ctx, stale, u.ID), directory.ErrVersionMismatch)
	current := writeA()
	current.IfVersion = 1
	next := sample(1)
	next.Location = "Paris"
	if got, err := d.Replace(ctx, current, u.ID, next); err != nil || got.Version != 2 {
		t.Fatalf("replace at the current version: %v", err)
	}
}

func testDelete(t *testing.T, d directory.Directory) {
	ctx := context.Background()
	u := mustCreate(t, d, writeA(), sample(1))
	if err := d.Delete(ctx, writeA(), u.ID); err != nil {
		t.Fatalf("delete: %v", err)
	}
	_, err := d.Get(ctx, tenantA, u.ID)
	wantErr(t, err, directory.ErrNotFound)
	wantErr(t, d.Delete(ctx, writeA(), u.ID), directory.ErrNotFound)
	mustCreate(t, d, writeA(), sample(1)) // userName and externalId are free again
}

func testAudit(t *testing.T, d directory.Directory) {
	ctx := context.Background()
	u := mustCreate(t, d, writeA(), sample(1))
	if _, err := d.Update(ctx, writeA(), u.ID, func(c directory.User) (directory.User, error) {
		c.Active, c.Emails = false, []directory.Email{{Value: "new@example.com", Type: "work"}}
		return c, nil
	}); err != nil {
		t.Fatalf("update: %v", err)
	}
	if err := d.Delete(ctx, writeA(), u.ID); err != nil {
		t.Fatalf("delete: %v", err)
	}
	entries, err := d.Audit(ctx, tenantA, 0, 100)
	if err != nil || len(entries) != 3 {
		t.Fatalf("audit: %d entries, %v", len(entries), err)
	}
	checkAuditEntries(t, entries, u.ID)
	patched := map[string]directory.Change{}
	for _, c := range entries[1].Changes {
		patched[c.Attr] = c
	}
	if len(patched) != 2 || patched["active"].New != "false" || !strings.HasPrefix(patched["emails"].New, "sha256:") {
		t.Fatalf("patch changes = %+v", entries[1].Changes)
	}
	later, _ := d.Audit(ctx, tenantA, entries[1].Seq, 100)
	if len(later) != 1 || later[0].Action != directory.ActionDelete {
		t.Fatalf("audit after seq %d = %+v", entries[1].Seq, later)
	}
	if other, _ := d.Audit(ctx, tenantB, 0, 100); len(other) != 0 {
		t.Fatalf("tenant B sees %d entries of A", len(other))
	}
}

func checkAuditEntries(t *testing.T, entries []directory.AuditEntry, userID string) {
	t.Helper()
	wantActions := []directory.Action{directory.ActionCreate, directory.ActionPatch, directory.ActionDelete}
	for i, e := range entries {
		if e.Action != wantActions[i] || e.Actor != "scim:acme" || e.UserID != userID || e.ExternalID != "ext-001" ||
			e.At.IsZero() || e.Tenant != tenantA || (i > 0 && e.Seq <= entries[i-1].Seq) {
			t.Fatalf("entry %d = %+v", i, e)
		}
		for _, c := range e.Changes {
			for _, v := range []string{c.Old, c.New} {
				if strings.Contains(strings.ToLower(v), "example.com") || strings.Contains(v, "1990") || v == "Given" {
					t.Fatalf("entry %d keeps personal data in clear: %+v", i, c)
				}
			}
		}
	}
}

func testConcurrentCreates(t *testing.T, d directory.Directory) {
	ctx := context.Background()
	const n = 16
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			u := sample(i)
			u.UserName = "same@example.com"
			_, errs[i] = d.Create(ctx, writeA(), u)
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, directory.ErrConflict):
			t.Fatalf("create: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d concurrent creates of one userName succeeded, want 1", won)
	}
}
