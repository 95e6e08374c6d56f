package drivertest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"hrsync/sources/scim/directory"
	"hrsync/sources/scim/directory/directorytest"
)

// testSCIMDirectory runs the directory conformance suite, the one
// directory.Memory passes, on the store's SCIM directory: each of its tests
// on a fresh state.
func testSCIMDirectory(t *testing.T, d Backend) {
	directorytest.Run(t, func(t *testing.T) directory.Directory {
		return newBackend(t, d).open(t).SCIMDirectory()
	})
}

func scimUser(i int) directory.User {
	return directory.User{
		ExternalID: fmt.Sprintf("ext-%d", i), UserName: fmt.Sprintf("u%d@example.com", i), Active: true,
		GivenName: "Given", BirthDate: "1990-05-17",
	}
}

// scimCounts counts the rows of the SCIM tables.
func scimCounts(t *testing.T, b backend) (users, audit int) {
	t.Helper()
	db := b.raw(t)
	must(t, db.QueryRowContext(ctx(t), "SELECT COUNT(*) FROM scim_users").Scan(&users))
	must(t, db.QueryRowContext(ctx(t), "SELECT COUNT(*) FROM scim_audit").Scan(&audit))
	return users, audit
}

// testSCIMAuditAndRefusals: every write that changes a user leaves one
// audit row with the user's change sequence; a refused write (uniqueness,
// version, an Update whose function fails) stores nothing at all.
func testSCIMAuditAndRefusals(t *testing.T, d Backend) {
	b := newBackend(t, d)
	s := b.open(t)
	dir := s.SCIMDirectory()
	w := directory.Write{Tenant: "acme", Actor: "scim:acme"}
	c := ctx(t)
	a, err := dir.Create(c, w, scimUser(1))
	must(t, err)
	bu, err := dir.Create(c, w, scimUser(2))
	must(t, err)
	_, err = dir.Update(c, w, a.ID, func(u directory.User) (directory.User, error) { u.Active = false; return u, nil })
	must(t, err)
	must(t, dir.Delete(c, w, bu.ID))
	if users, audit := scimCounts(t, b); users != 2 || audit != 4 {
		t.Fatalf("after 4 writes: %d user rows, %d audit rows; want 2 (one a tombstone) and 4", users, audit)
	}
	_, before := scimCounts(t, b)
	_, lastBefore, err := s.SCIMUsers(c, "acme", 0)
	must(t, err)

	dup := scimUser(3)
	dup.UserName = "U1@EXAMPLE.COM"
	_, err = dir.Create(c, w, dup)
	wantErr(t, err, directory.ErrConflict)
	if strings.Contains(err.Error(), "externalId") {
		t.Fatalf("a userName conflict names externalId: %v", err)
	}
	stale := w
	stale.IfVersion = 1
	_, err = dir.Replace(c, stale, a.ID, scimUser(1))
	wantErr(t, err, directory.ErrVersionMismatch)
	_, err = dir.Update(c, w, a.ID, func(u directory.User) (directory.User, error) {
		u.ExternalID = "ext-9"
		return u, context.Canceled
	})
	wantErr(t, err, context.Canceled)
	taken, err := dir.Create(c, w, scimUser(4))
	must(t, err)
	_, err = dir.Update(c, w, taken.ID, func(u directory.User) (directory.User, error) { u.ExternalID = "ext-1"; return u, nil })
	wantErr(t, err, directory.ErrConflict)
	if !strings.Contains(err.Error(), "externalId") {
		t.Fatalf("an externalId conflict does not name it: %v", err)
	}

	users, audit := scimCounts(t, b)
	if users != 3 || audit != before+1 {
		t.Fatalf("refused writes stored something: %d user rows, %d audit rows; want 3 and %d", users, audit, before+1)
	}
	got, err := dir.Get(c, "acme", a.ID)
	must(t, err)
	if got.Version != 2 || got.ExternalID != "ext-1" || got.Active {
		t.Fatalf("user after refused writes = %+v", got)
	}
	_, last, err := s.SCIMUsers(c, "acme", 0)
	must(t, err)
	if last != lastBefore+1 {
		t.Fatalf("last sequence %d, want %d: a refused write took one", last, lastBefore+1)
	}
}

// testSCIMUsersFeed: SCIMUsers lists active, deactivated and deleted users
// with the last change sequence, and afterSeq yields the changes since. A
// birth date written with its year is kept as its month and day alone.
func testSCIMUsersFeed(t *testing.T, d Backend) {
	b := newBackend(t, d)
	s := b.open(t)
	dir := s.SCIMDirectory()
	w := directory.Write{Tenant: "acme", Actor: "scim:acme"}
	c := ctx(t)
	users, last, err := s.SCIMUsers(c, "acme", 0)
	must(t, err)
	if len(users) != 0 || last != 0 {
		t.Fatalf("empty directory: %d users, last %d", len(users), last)
	}
	var made []directory.User
	for i := range 3 {
		u, err := dir.Create(c, w, scimUser(i))
		must(t, err)
		made = append(made, u)
	}
	_, err = dir.Update(c, w, made[1].ID, func(u directory.User) (directory.User, error) { u.Active = false; return u, nil })
	must(t, err)
	must(t, dir.Delete(c, w, made[2].ID))
	_, err = dir.Create(c, directory.Write{Tenant: "globex"}, scimUser(9))
	must(t, err)

	users, last, err = s.SCIMUsers(c, "acme", 0)
	must(t, err)
	if last != 5 || len(users) != 3 {
		t.Fatalf("feed: %d users, last %d; want 3 and 5", len(users), last)
	}
	if !users[0].Active || users[1].Active || users[2].Deleted.IsZero() || !users[1].Deleted.IsZero() ||
		users[2].ExternalID != "ext-2" || users[2].Seq != 5 || users[0].BirthDate != "--05-17" {
		t.Fatalf("feed = %+v", users)
	}
	// Written with its year, a birth date is kept as its month and day
	// alone (DESIGN.md, invariant 5): no row holds the year.
	rows, err := b.raw(t).QueryContext(c, "SELECT attrs FROM scim_users")
	must(t, err)
	defer rows.Close()
	for rows.Next() {
		var attrs string
		must(t, rows.Scan(&attrs))
		if strings.Contains(attrs, "1990") {
			t.Fatalf("a user's attributes hold the year of birth: %s", attrs)
		}
	}
	must(t, rows.Err())
	since, last2, err := s.SCIMUsers(c, "acme", 3)
	must(t, err)
	if last2 != 5 || len(since) != 2 || since[0].ID != made[1].ID || since[1].ID != made[2].ID {
		t.Fatalf("feed since 3 = %+v (last %d)", since, last2)
	}
	// The deleted user's userName and externalId are free again; the
	// tombstone stays in the feed beside the new user.
	again, err := dir.Create(c, w, scimUser(2))
	must(t, err)
	since, _, err = s.SCIMUsers(c, "acme", 5)
	must(t, err)
	if len(since) != 1 || since[0].ID != again.ID || !since[0].Deleted.IsZero() {
		t.Fatalf("feed since 5 = %+v", since)
	}
}

// testSCIMConcurrentUpdates: updates of one user from many goroutines (as
// from replicas) read it under the row lock, so none is lost: each sees the
// one before it, and every one leaves its version and audit entry.
func testSCIMConcurrentUpdates(t *testing.T, d Backend) {
	b := newBackend(t, d)
	dir := b.open(t).SCIMDirectory()
	other := b.open(t).SCIMDirectory()
	w := directory.Write{Tenant: "acme", Actor: "scim:acme"}
	u, err := dir.Create(ctx(t), w, scimUser(1))
	must(t, err)
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			on := dir
			if i%2 == 1 {
				on = other
			}
			_, errs[i] = on.Update(ctx(t), w, u.ID, func(cur directory.User) (directory.User, error) {
				cur.Department += "x"
				return cur, nil
			})
		})
	}
	wg.Wait()
	for _, err := range errs {
		must(t, err)
	}
	got, err := dir.Get(ctx(t), "acme", u.ID)
	must(t, err)
	if got.Department != strings.Repeat("x", n) || got.Version != n+1 {
		t.Fatalf("after %d concurrent updates: department %q, version %d", n, got.Department, got.Version)
	}
	if users, audit := scimCounts(t, b); users != 1 || audit != n+1 {
		t.Fatalf("%d user rows, %d audit rows; want 1 and %d", users, audit, n+1)
	}
}
