package grants_test

import (
	"strings"
	"testing"
	"time"

	"hrsync/model"
	"hrsync/store"
	"hrsync/sync/grants"
)

// birthdayRules grant 5 on every birthday, in Tokyo, with a look-back of
// seven days.
const birthdayRules = `timezone: Asia/Tokyo
lookbackDays: 7
rules:
  - {name: birthday, type: birthday, amount: 5}
`

// TestRemovedBirthDate: an export that lists a person without the birth
// date an earlier one gave stops their birthday grant: plan grants counts
// them in noBirthDate and owes them nothing, the run agrees, and the month
// and day kept are removed. On SQLite and PostgreSQL.
func TestRemovedBirthDate(t *testing.T) {
	may := func(d int) time.Time { return date(2027, time.May, d) }
	eachDialect(t, tokyo(t, may(3)), func(t *testing.T, w *world) {
		job := w.job(loadGrants(t, birthdayRules))
		keep := row{id: "KEEP", location: "Tokyo", department: "Eng", start: date(2020, 1, 6), birth: date(1990, 5, 12)}
		gone := row{id: "GONE", location: "Tokyo", department: "Eng", start: date(2020, 1, 6), birth: date(1990, 5, 12)}
		w.sync([]row{keep, gone})
		w.run(job, grants.RunFlags{}) // keeps both birthdays
		if kept, err := w.st.Birthdays(t.Context(), "acme"); err != nil || len(kept) != 2 {
			t.Fatalf("kept birthdays %v, %v: want both", kept, err)
		}

		w.clock.set(tokyo(t, may(10)))
		gone.birth = time.Time{}
		w.sync([]row{keep, gone})
		w.clock.set(tokyo(t, may(12)))
		plan, err := job.BuildPlan(t.Context(), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if plan.NoBirthDate != 1 || len(plan.Due) != 1 || plan.Due[0].ExternalID != "KEEP" {
			t.Fatalf("plan: noBirthDate %d, due %+v; want 1 and KEEP alone", plan.NoBirthDate, plan.Due)
		}
		rep := w.run(job, grants.RunFlags{})
		if rep.Outcome != model.OutcomeOK {
			t.Fatalf("run: %s: %s", rep.Outcome, rep.Cause)
		}
		compareDay(t, may(12), []expected{{id: "KEEP", amount: 5}}, w.rec.take())
		kept, err := w.st.Birthdays(t.Context(), "acme")
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := kept["GONE"]; ok || len(kept) != 1 {
			t.Errorf("kept birthdays %v: GONE's should be removed", kept)
		}
	})
}

// TestLeftBetweenRuns: a person listed by one export and dropped by the
// next, with no grants run between, gets the birthday that fell while they
// were employed (the people sync kept its month and day), and not the one
// after they left. On SQLite and PostgreSQL.
func TestLeftBetweenRuns(t *testing.T) {
	mar := func(d int) time.Time { return date(2027, time.March, d) }
	eachDialect(t, tokyo(t, mar(1)), func(t *testing.T, w *world) {
		job := w.job(loadGrants(t, birthdayRules))
		stay := row{id: "STAY", location: "Tokyo", department: "Eng", start: date(2020, 1, 6), birth: date(1990, 2, 1)}
		w.sync([]row{stay})
		w.run(job, grants.RunFlags{})
		// Listed on 2 March, gone on 5 March; birthdays on 3 and 6 March.
		left := row{id: "LEFT", location: "Tokyo", department: "Eng", start: date(2018, 1, 10), birth: date(1990, 3, 3)}
		late := row{id: "LATE", location: "Tokyo", department: "Eng", start: date(2018, 1, 10), birth: date(1990, 3, 6)}
		w.clock.set(tokyo(t, mar(2)))
		w.sync([]row{stay, left, late})
		w.clock.set(tokyo(t, mar(5)))
		hire := row{id: "HIRE", location: "Tokyo", department: "Eng", start: mar(5), birth: date(1995, 4, 1)}
		w.sync([]row{stay, hire}) // not the first export again: that would be a file already processed
		w.clock.set(tokyo(t, mar(7)))
		plan, err := job.BuildPlan(t.Context(), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if len(plan.Due) != 1 || plan.Due[0].ExternalID != "LEFT" {
			t.Fatalf("plan due %+v, want LEFT's birthday alone", plan.Due)
		}
		rep := w.run(job, grants.RunFlags{})
		if rep.Outcome != model.OutcomeOK {
			t.Fatalf("run: %s: %s", rep.Outcome, rep.Cause)
		}
		compareDay(t, mar(7), []expected{{id: "LEFT", amount: 5}}, w.rec.take())
		voided, err := w.st.ListGrants(t.Context(), store.GrantFilter{Tenant: "acme", States: []model.GrantState{model.GrantVoided}})
		if err != nil {
			t.Fatal(err)
		}
		if len(voided) != 1 || voided[0].ExternalID != "LATE" {
			t.Errorf("voided %+v, want LATE's birthday of 6 March", voided)
		}
	})
}

// TestMonthCapCountsTheGrantDay: grants.maxPerMonth counts a grant in the
// month of its grant day, whatever day the run sends it: a run --date of
// November, run on 2 December, spends November's budget, not December's;
// and a later November campaign run --date in November stops on
// November's cap. On SQLite and PostgreSQL.
func TestMonthCapCountsTheGrantDay(t *testing.T) {
	dec2 := date(2027, 12, 2)
	const two = `timezone: Europe/Berlin
maxPerMonth: 2000
rules:
  - {name: nov, type: campaign, key: nov-2027, date: "2027-11-30", amount: 100, locations: [Berlin]}
  - {name: dec, type: campaign, key: dec-2027, date: "2027-12-02", amount: 100, locations: [Berlin]}
`
	eachDialect(t, tokyo(t, dec2), func(t *testing.T, w *world) {
		w.sync(berliners(15))
		job := w.job(loadGrants(t, two))
		rep := w.run(job, grants.RunFlags{AsOf: date(2027, 11, 30)})
		if rep.Outcome != model.OutcomeOK || len(w.rec.take()) != 15 {
			t.Fatalf("November's campaign as of 30 November: %s: %s", rep.Outcome, rep.Cause)
		}
		plan, err := job.BuildPlan(t.Context(), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if plan.MonthSpent != 0 || plan.Total != 1500 || plan.Safeguard != "" {
			t.Fatalf("December: spent %.2f, due %.2f, safeguard %q; want 0, 1500 and none (November's grants count in November)",
				plan.MonthSpent, plan.Total, plan.Safeguard)
		}
		if rep := w.run(job, grants.RunFlags{}); rep.Outcome != model.OutcomeOK || len(w.rec.take()) != 15 {
			t.Fatalf("December's campaign: %s: %s", rep.Outcome, rep.Cause)
		}

		more := w.job(loadGrants(t, two+`  - {name: nov2, type: campaign, key: nov2-2027, date: "2027-11-30", amount: 100, locations: [Berlin]}
`))
		calls := w.createCalls()
		rep = w.run(more, grants.RunFlags{AsOf: date(2027, 11, 30)})
		if rep.Outcome != model.OutcomeSafeguard || !strings.Contains(rep.Cause, "in 2027-11") || !strings.Contains(rep.Cause, "3000.00") {
			t.Fatalf("a second November campaign: %s, %q; want a safeguard naming November's 3000.00", rep.Outcome, rep.Cause)
		}
		if w.createCalls() != calls {
			t.Fatal("the stopped run called the platform")
		}
	})
}
