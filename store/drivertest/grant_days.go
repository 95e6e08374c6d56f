package drivertest

import (
	"testing"
	"time"

	"hrsync/model"
	"hrsync/store"
)

func testGrantDays(t *testing.T, d Backend) {
	eachStore(t, d, func(t *testing.T, s *store.Store) {
		d := func(m time.Month, day int) time.Time { return time.Date(2027, m, day, 0, 0, 0, 0, time.UTC) }
		must(t, s.MarkGrantDays(ctx(t), "acme", []string{"birthday", "winter"}, d(3, 10)))
		must(t, s.MarkGrantDays(ctx(t), "acme", []string{"birthday"}, d(3, 12)))
		must(t, s.MarkGrantDays(ctx(t), "acme", []string{"birthday"}, d(3, 5))) // a past day: only the first day moves
		must(t, s.MarkGrantDays(ctx(t), "other", []string{"birthday"}, d(1, 1)))
		days, err := s.GrantDays(ctx(t), "acme")
		must(t, err)
		if b := days["birthday"]; !b.FirstDay.Equal(d(3, 5)) || !b.LastDay.Equal(d(3, 12)) {
			t.Errorf("birthday: first %s last %s, want 2027-03-05 and 2027-03-12", b.FirstDay, b.LastDay)
		}
		if w := days["winter"]; !w.FirstDay.Equal(d(3, 10)) || !w.LastDay.Equal(d(3, 10)) || len(days) != 2 {
			t.Errorf("days = %+v", days)
		}
	})
}

func testBirthdaysKeepNoYear(t *testing.T, d Backend) {
	eachStore(t, d, func(t *testing.T, s *store.Store) {
		must(t, s.SavePeople(ctx(t), "acme", []store.PersonRow{person("e1", 1), person("e2", 2)}))
		must(t, s.SaveBirthdays(ctx(t), "acme", map[string]store.MonthDay{"e1": {Month: time.February, Day: 29}, "e2": {Month: 12, Day: 31}}))
		must(t, s.SaveBirthdays(ctx(t), "acme", map[string]store.MonthDay{"e2": {Month: 1, Day: 2}}))
		got, err := s.Birthdays(ctx(t), "acme")
		must(t, err)
		if len(got) != 2 || got["e1"] != (store.MonthDay{Month: time.February, Day: 29}) || got["e2"] != (store.MonthDay{Month: 1, Day: 2}) {
			t.Fatalf("birthdays = %v", got)
		}
		if err := s.SaveBirthdays(ctx(t), "acme", map[string]store.MonthDay{"e1": {Month: 13, Day: 1}}); err == nil {
			t.Fatal("month 13 was accepted")
		}
		if err := s.SaveBirthdays(ctx(t), "acme", map[string]store.MonthDay{"nobody": {Month: 1, Day: 1}}); err == nil {
			t.Fatal("a birthday of a person not in people was accepted")
		}
	})
}

func testRuleGrantsTotal(t *testing.T, d Backend) {
	eachStore(t, d, func(t *testing.T, s *store.Store) {
		startRun(t, s, "r1", "acme")
		in := store.BatchIntent{RunID: "r1", Tenant: "acme", Job: model.JobGrants, IdempotencyKey: "k1", RequestSHA: "x",
			People: []store.PersonRow{person("e1", 1), person("e2", 2), person("e3", 3)}, StartedAt: at(2, 0)}
		for i, id := range []string{"e1", "e2", "e3"} {
			in.Grants = append(in.Grants, model.Grant{ExternalID: id, Reason: "birthday", Occurrence: "2025", Amount: float64(10 * (i + 1))})
		}
		id, err := s.BeginBatch(ctx(t), in)
		must(t, err)
		must(t, s.FinishBatch(ctx(t), id, store.BatchOutcome{State: store.JournalSucceeded, HTTPStatus: 201}))
		// The intent is committed now, by the store's clock.
		from := time.Now().Add(-time.Hour)
		total, err := s.RuleGrantsTotal(ctx(t), "acme", []string{"birthday"}, from, from.Add(2*time.Hour))
		must(t, err)
		if total != 60 {
			t.Errorf("the last hours: %v, want 60", total)
		}
		for _, c := range []struct {
			rules    []string
			from, to time.Time
		}{{[]string{"winter"}, from, from.Add(2 * time.Hour)}, {[]string{"birthday"}, from.Add(2 * time.Hour), from.Add(3 * time.Hour)},
			{nil, from, from.Add(2 * time.Hour)}} {
			if n, err := s.RuleGrantsTotal(ctx(t), "acme", c.rules, c.from, c.to); err != nil || n != 0 {
				t.Errorf("%v %s: %v, %v; want 0", c.rules, c.from, n, err)
			}
		}
	})
}

// testBirthdaysForgotten: an export without a person's birth date takes it
// away (ForgetBirthdays, KeepBirthdays), and the people sync's
// KeepBirthdays skips a person not in people instead of failing.
func testBirthdaysForgotten(t *testing.T, d Backend) {
	eachStore(t, d, func(t *testing.T, s *store.Store) {
		must(t, s.SavePeople(ctx(t), "acme", []store.PersonRow{person("e1", 1), person("e2", 2), person("e3", 3)}))
		must(t, s.SavePeople(ctx(t), "other", []store.PersonRow{person("e1", 1)}))
		may := store.MonthDay{Month: time.May, Day: 20}
		must(t, s.SaveBirthdays(ctx(t), "acme", map[string]store.MonthDay{"e1": may, "e2": may, "e3": may}))
		must(t, s.SaveBirthdays(ctx(t), "other", map[string]store.MonthDay{"e1": may}))
		must(t, s.ForgetBirthdays(ctx(t), "acme", []string{"e1", "nobody"}))
		must(t, s.KeepBirthdays(ctx(t), "acme", map[string]store.MonthDay{"e3": {Month: 1, Day: 2}, "ghost": may}, []string{"e2"}))
		got, err := s.Birthdays(ctx(t), "acme")
		must(t, err)
		if len(got) != 1 || got["e3"] != (store.MonthDay{Month: 1, Day: 2}) {
			t.Errorf("acme's birthdays = %v, want only e3 on 2 January", got)
		}
		if other, err := s.Birthdays(ctx(t), "other"); err != nil || other["e1"] != may {
			t.Errorf("another tenant's birthday was touched: %v, %v", other, err)
		}
		must(t, s.KeepBirthdays(ctx(t), "acme", nil, nil))
	})
}

// testVoidReason: the note of a void, an operator's or the grants job's,
// is read back with the grant by ListGrants and Grant.
func testVoidReason(t *testing.T, d Backend) {
	eachStore(t, d, func(t *testing.T, s *store.Store) {
		key := grantIn(t, s, "acme", "e1", model.GrantVoided)
		must(t, s.SavePeople(ctx(t), "acme", []store.PersonRow{person("e2", 2)}))
		n, err := s.VoidOccurrences(ctx(t), model.JobGrants, []model.Grant{{Tenant: "acme", ExternalID: "e2",
			Reason: "birthday", Occurrence: "2027", Amount: 5}}, "not granted: the person had left on the day")
		must(t, err)
		if n != 1 {
			t.Fatalf("voided %d, want 1", n)
		}
		gs, err := s.ListGrants(ctx(t), store.GrantFilter{Tenant: "acme", States: []model.GrantState{model.GrantVoided}})
		must(t, err)
		notes := map[string]string{}
		for _, g := range gs {
			notes[g.Key] = g.Note
		}
		want := map[string]string{key: "operator: never send", "acme/e2/birthday/2027": "not granted: the person had left on the day"}
		if len(notes) != 2 || notes[key] != want[key] || notes["acme/e2/birthday/2027"] != want["acme/e2/birthday/2027"] {
			t.Errorf("notes %v, want %v", notes, want)
		}
		g, err := s.Grant(ctx(t), key)
		must(t, err)
		if g.Note != "operator: never send" {
			t.Errorf("Grant: note %q", g.Note)
		}
	})
}

// testRuleGrantsTotalByDay: a grant recorded with its grant day counts in
// that day's month, not in the month its intent was committed.
func testRuleGrantsTotalByDay(t *testing.T, d Backend) {
	eachStore(t, d, func(t *testing.T, s *store.Store) {
		startRun(t, s, "r1", "acme")
		nov30 := time.Date(2027, time.November, 30, 0, 0, 0, 0, time.UTC)
		in := store.BatchIntent{RunID: "r1", Tenant: "acme", Job: model.JobGrants, IdempotencyKey: "k1", RequestSHA: "x",
			People: []store.PersonRow{person("e1", 1)}, StartedAt: at(2, 0),
			Grants: []model.Grant{{ExternalID: "e1", Reason: "nov", Occurrence: "nov-2027", Amount: 40, Day: nov30}}}
		id, err := s.BeginBatch(ctx(t), in)
		must(t, err)
		must(t, s.FinishBatch(ctx(t), id, store.BatchOutcome{State: store.JournalSucceeded, HTTPStatus: 201}))
		berlin, err := time.LoadLocation("Europe/Berlin")
		must(t, err)
		nov := time.Date(2027, time.November, 1, 0, 0, 0, 0, berlin)
		if n, err := s.RuleGrantsTotal(ctx(t), "acme", []string{"nov"}, nov, nov.AddDate(0, 1, 0)); err != nil || n != 40 {
			t.Errorf("November: %v, %v; want 40", n, err)
		}
		now := time.Now()
		if n, err := s.RuleGrantsTotal(ctx(t), "acme", []string{"nov"}, now.Add(-time.Hour), now.Add(time.Hour)); err != nil || n != 0 {
			t.Errorf("the hours of its commit: %v, %v; want 0 (it counts on its grant day)", n, err)
		}
	})
}
