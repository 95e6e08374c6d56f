package drivertest

import (
	"fmt"
	"slices"
	"testing"

	"hrsync/model"
	"hrsync/sources"
	"hrsync/sources/registry"
	"hrsync/sources/scim/directory"
	"hrsync/sources/scimsrc"
	"hrsync/store"
)

// scimSnapshot reads the tenant's directory through the scim source kind,
// as the people job does: the export's name and hash, its accepted people
// and its rejections.
func scimSnapshot(t *testing.T, s *store.Store, tenant string) (sources.Export, []model.Person, []model.Rejection) {
	t.Helper()
	src, err := registry.Open(ctx(t), &scimsrc.Options{TokenFile: "t.token"}, registry.Env{Tenant: tenant, Directory: s})
	must(t, err)
	feed, err := src.Feed(ctx(t))
	must(t, err)
	if len(feed) != 1 {
		t.Fatalf("feed: %d exports, want the one snapshot", len(feed))
	}
	var ok []model.Person
	var rejs []model.Rejection
	_, err = feed[0].Read(ctx(t), sources.Handler{
		Accept: func(p model.Person) error { ok = append(ok, p); return nil },
		Reject: func(r model.Rejection) error { rejs = append(rejs, r); return nil },
	})
	must(t, err)
	return feed[0], ok, rejs
}

// testSCIMFeedAsSource: the SCIM directory read as the scim kind's export.
// Its rows are the active users written through either of two stores on
// the same state (two replicas), mapped as an export's columns (externalId,
// else employeeNumber; the primary e-mail; the balance override as
// addBalance); deactivated and deleted users are not rows; a user without
// an e-mail is rejected naming the attribute. The snapshot's name and hash
// follow the tenant's change sequence: unchanged without a write (another
// tenant's included), new after one.
func testSCIMFeedAsSource(t *testing.T, d Backend) {
	b := newBackend(t, d)
	s, replica := b.open(t), b.open(t)
	w := directory.Write{Tenant: "acme", Actor: "scim:acme"}
	c := ctx(t)
	bal := 75.0
	users := []directory.User{
		{ExternalID: "ext-1", UserName: "a@acme.example", Active: true, GivenName: "Ann", FamilyName: "Lee",
			Emails:     []directory.Email{{Value: "other@acme.example"}, {Value: "Ann@Acme.example", Primary: true}},
			Department: "Eng", Location: "Paris", StartDate: "2026-01-05", BalanceOverride: &bal},
		{EmployeeNumber: "E-2", UserName: "b@acme.example", Active: true, GivenName: "Bo", FamilyName: "Kim"},
		{ExternalID: "ext-3", UserName: "nomail", Active: true, GivenName: "Cy", FamilyName: "Ng"},
		{ExternalID: "ext-4", UserName: "d@acme.example", Active: false, GivenName: "Di", FamilyName: "Ox"},
		{ExternalID: "ext-5", UserName: "e@acme.example", Active: true, GivenName: "Ed", FamilyName: "Po"},
	}
	var ids []string
	for i, u := range users {
		on := []*store.Store{s, replica}[i%2]
		made, err := on.SCIMDirectory().Create(c, w, u)
		must(t, err)
		ids = append(ids, made.ID)
	}
	must(t, replica.SCIMDirectory().Delete(c, w, ids[4]))

	x, people, rejs := scimSnapshot(t, s, "acme")
	if x.Name() != "scim:acme@6" || x.SHA256() == "" {
		t.Fatalf("snapshot name %q, hash %q; want scim:acme@6 and a hash", x.Name(), x.SHA256())
	}
	got := make([]string, 0, len(people))
	for _, p := range people {
		got = append(got, p.ExternalID)
	}
	if !slices.Equal(got, []string{"ext-1", "E-2"}) {
		t.Fatalf("accepted %v; want ext-1 and E-2 (ext-3 has no e-mail, ext-4 is inactive, ext-5 deleted)", got)
	}
	ann := people[0]
	if ann.Email != "ann@acme.example" || ann.FirstName != "Ann" || ann.Department != "Eng" || ann.Location != "Paris" ||
		ann.StartDate.Format(model.DateLayout) != "2026-01-05" || ann.AddBalance == nil || *ann.AddBalance != 75 {
		t.Fatalf("ext-1 mapped as %+v", ann)
	}
	if people[1].Email != "b@acme.example" || people[1].AddBalance != nil {
		t.Fatalf("E-2 mapped as %+v; want the userName as e-mail and no balance of its own", people[1])
	}
	if len(rejs) != 1 || rejs[0].Field != "emails" || rejs[0].Source != "scim:acme@6" {
		t.Fatalf("rejections %+v; want ext-3's emails", rejs)
	}

	_, err := s.SCIMDirectory().Create(c, directory.Write{Tenant: "globex"}, users[0])
	must(t, err)
	if again, _, _ := scimSnapshot(t, replica, "acme"); again.SHA256() != x.SHA256() || again.Name() != x.Name() {
		t.Fatalf("no write to acme: snapshot %s %s, was %s %s", again.Name(), again.SHA256(), x.Name(), x.SHA256())
	}
	_, err = replica.SCIMDirectory().Update(c, w, ids[3], func(u directory.User) (directory.User, error) { u.Active = true; return u, nil })
	must(t, err)
	after, people, _ := scimSnapshot(t, s, "acme")
	if after.Name() != "scim:acme@7" || after.SHA256() == x.SHA256() || len(people) != 3 {
		t.Fatalf("after a reactivation: %s, %d people, same hash %v; want scim:acme@7, 3 people, a new hash",
			after.Name(), len(people), after.SHA256() == x.SHA256())
	}
}

// testSCIMBirthdayMigration: birth dates a directory stored with their year
// before 00013 are rewritten as their month and day alone; other attributes
// and birthdays already without a year stay as they were.
func testSCIMBirthdayMigration(t *testing.T, d Backend) {
	eachBackend(t, d, func(t *testing.T, b backend) {
		raw := migratedTo(t, b, 12)
		for i, attrs := range []string{
			`{"givenName":"Ann","birthDate":"1985-12-25","location":"Paris"}`,
			`{"givenName":"Bo","birthDate":"--02-29"}`,
			`{"givenName":"Cy"}`,
		} {
			_, err := raw.ExecContext(ctx(t), b.q(`INSERT INTO scim_users (tenant, id, user_name, user_name_key, external_id,
				active, attrs, version, created_at, modified_at, created_seq, change_seq)
				VALUES ('acme', ?, ?, ?, ?, ?, ?, 1, '2026-01-01 00:00:00', '2026-01-01 00:00:00', ?, ?)`),
				fmt.Sprintf("id-%d", i), fmt.Sprintf("u%d", i), fmt.Sprintf("u%d", i), fmt.Sprintf("ext-%d", i), true, attrs, i+1, i+1)
			must(t, err)
		}
		s := b.open(t) // migrates to the latest version
		users, _, err := s.SCIMUsers(ctx(t), "acme", 0)
		must(t, err)
		got := make([]string, 0, len(users))
		for _, u := range users {
			got = append(got, u.BirthDate+"/"+u.GivenName+"/"+u.Location)
		}
		if want := []string{"--12-25/Ann/Paris", "--02-29/Bo/", "/Cy/"}; !slices.Equal(got, want) {
			t.Fatalf("after the migration: %v, want %v", got, want)
		}
	})
}
