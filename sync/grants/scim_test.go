package grants_test

import (
	"testing"
	"time"

	"hrsync/sources/registry"
	"hrsync/sources/scim/directory"
	"hrsync/sources/scimsrc"
	"hrsync/sync/grants"
)

// TestSCIMBirthday: a tenant fed by SCIM, whose directory keeps birth dates
// as their month and day alone: the people sync keeps the birthday, the
// grants job reads the directory as the last good export and grants the
// birthday on its day; a user without a birth date is counted in
// noBirthDate. On SQLite and PostgreSQL.
func TestSCIMBirthday(t *testing.T) {
	may := func(d int) time.Time { return date(2027, time.May, d) }
	eachDialect(t, tokyo(t, may(3)), func(t *testing.T, w *world) {
		write := directory.Write{Tenant: "acme", Actor: "scim-token:acme"}
		for _, u := range []directory.User{
			{ExternalID: "BDAY", UserName: "bday@example.com", BirthDate: "--05-12"},
			{ExternalID: "NONE", UserName: "none@example.com"},
		} {
			u.Active, u.GivenName, u.FamilyName, u.Location, u.Department, u.StartDate = true, "First", "Last", "Tokyo", "Eng", "2020-01-06"
			if _, err := w.st.SCIMDirectory().Create(t.Context(), write, u); err != nil {
				t.Fatal(err)
			}
		}
		src, err := registry.Open(t.Context(), &scimsrc.Options{TokenFile: "acme.token"}, registry.Env{Tenant: "acme", Directory: w.st})
		if err != nil {
			t.Fatal(err)
		}
		w.source = src
		w.syncFeed(src.Feed)
		if kept, err := w.st.Birthdays(t.Context(), "acme"); err != nil || len(kept) != 1 || kept["BDAY"].Month != time.May || kept["BDAY"].Day != 12 {
			t.Fatalf("kept birthdays %v, %v; want BDAY on 12 May", kept, err)
		}

		job := w.job(loadGrants(t, birthdayRules))
		w.run(job, grants.RunFlags{})
		w.clock.set(tokyo(t, may(12)))
		plan, err := job.BuildPlan(t.Context(), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if plan.NoBirthDate != 1 || len(plan.Due) != 1 || plan.Due[0].ExternalID != "BDAY" {
			t.Fatalf("plan: noBirthDate %d, due %+v; want 1 and BDAY alone", plan.NoBirthDate, plan.Due)
		}
		w.run(job, grants.RunFlags{})
		compareDay(t, may(12), []expected{{id: "BDAY", amount: 5}}, w.rec.take())
	})
}
