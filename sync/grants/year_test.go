package grants_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	"hrsync/emulator"
	"hrsync/model"
	"hrsync/store"
	"hrsync/sync/grants"
)

// yearRules are the rules of the year test: a birthday moved off weekends,
// granted to people hired at least 30 days before, 29 February meaning
// 1 March; a work anniversary by years of service granted two days ahead,
// 29 February meaning 28 February; a campaign for Berlin on 1 December.
const yearRules = `timezone: Pacific/Kiritimati
lookbackDays: 7
rules:
  - name: birthday
    type: birthday
    amount: 7
    feb29: mar1
    weekendToFriday: true
    minTenureDays: 30
  - name: anniversary
    type: workAnniversary
    amount: 50
    amountByYears: {1: 100, 5: 500, 10: 1000}
    daysBefore: 2
    feb29: feb28
  - name: berlin-winter
    type: campaign
    key: winter-2027
    date: "2027-12-01"
    amount: 10000
    locations: [Berlin]
    shouldSendEmail: true
`

// member is one person of the year's population: when HR lists them, when
// they start, leave (absent from the exports from gone on) and come back.
type member struct {
	row
	gone, back time.Time // zero when they never leave, or never return
	// from, when not zero, is the first day an export lists them (HR
	// added them late); noBirthFrom, when not zero, is the first day the
	// exports list them without their birth date.
	from, noBirthFrom time.Time
}

// The week the grants job is down (no run from downFrom to the day before
// downUntil): the run of downUntil catches up with its look-back of 7 days.
var downFrom, downUntil = date(2027, 6, 21), date(2027, 6, 28)

func date(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

// population is 1,000 people with birthdays and hiring dates spread over
// the years, 29 February births and hires, 150 hires during 2027 (listed two
// weeks ahead of their start), departures during the year, and two people
// who leave and come back.
func population() []member {
	rng := rand.New(rand.NewPCG(12, 2027))
	day := func(from, to time.Time) time.Time {
		return from.AddDate(0, 0, rng.IntN(int(to.Sub(from).Hours()/24)+1))
	}
	monday := func(t time.Time) time.Time { // the Monday on or before t
		return t.AddDate(0, 0, -((int(t.Weekday()) + 6) % 7))
	}
	out := make([]member, 1000)
	for i := range out {
		m := member{row: row{
			id:         fmt.Sprintf("P%04d", i),
			location:   []string{"Berlin", "Paris", "Tokyo"}[i%3],
			department: []string{"Eng", "Sales"}[i%2],
			birth:      day(date(1960, 1, 1), date(1994, 12, 31)),
		}}
		if i%97 == 0 {
			m.birth = date(1976+4*(i%5), time.February, 29)
		}
		switch {
		case i < 850:
			m.start = day(date(2012, 1, 1), date(2026, 12, 31))
			if i%113 == 0 {
				m.start = date(2016+4*(i%3), time.February, 29)
			}
			if i%15 == 1 {
				m.gone = monday(day(date(2027, 1, 11), date(2027, 12, 31)))
			}
		default:
			m.start = day(date(2027, 1, 1), date(2027, 12, 31))
			if i%25 == 3 && m.start.Before(date(2027, 11, 1)) {
				m.gone = monday(day(m.start.AddDate(0, 0, 30), date(2027, 12, 31)))
			}
		}
		out[i] = m
	}
	// Three people leave and come back with their first start date: one
	// whose birthday and anniversary fall while away, one whose fall before
	// leaving and after coming back.
	out[7].birth, out[7].start = date(1990, 5, 20), date(2015, 6, 15)
	out[7].gone, out[7].back = date(2027, 3, 8), date(2027, 8, 2)
	out[8].birth, out[8].start = date(1985, 10, 5), date(2019, 2, 11)
	out[8].gone, out[8].back = date(2027, 5, 3), date(2027, 6, 14)
	// And one away for a week around their birthday: the runs after the
	// return still have it in their look-back, and must not grant it.
	out[9].birth, out[9].start = date(1988, 9, 10), date(2016, 4, 4)
	out[9].gone, out[9].back = date(2027, 9, 6), date(2027, 9, 13)
	// One listed by a single export, that of the first day the grants job
	// is down, and dropped by the next: their birthday fell while they
	// were employed, between two grants runs, and is owed.
	out[10].birth, out[10].start = date(1991, 6, 23), date(2019, 3, 4)
	out[10].from, out[10].gone = downFrom, downUntil
	// And one whose birth date the exports drop in August, before their
	// birthday: no birthday grant from then on.
	out[11].birth, out[11].start = date(1987, 8, 18), date(2014, 5, 5)
	out[11].noBirthFrom = date(2027, 8, 16)
	return out
}

// exportDay is the day of the export in force on d: HR exports every
// Monday, and once on the first day of the test.
func exportDay(d, first time.Time) time.Time {
	e := d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
	if e.Before(first) {
		return first
	}
	return e
}

// away tells whether m is absent from the exports of day d.
func (m member) away(d time.Time) bool {
	return !m.gone.IsZero() && !d.Before(m.gone) && (m.back.IsZero() || d.Before(m.back))
}

// listed tells whether the export of day e lists m: from two weeks before
// the start date, while not away.
func (m member) listed(e time.Time) bool {
	return !m.start.AddDate(0, 0, -14).After(e) && !m.away(e) && !e.Before(m.from)
}

// rowOn is m's row in the export of day e.
func (m member) rowOn(e time.Time) row {
	r := m.row
	if !m.noBirthFrom.IsZero() && !e.Before(m.noBirthFrom) {
		r.birth = time.Time{}
	}
	return r
}

// expected is a grant the rules owe: computed here, from the population
// and the rules as the test states them, not by the code under test.
type expected struct {
	id, rule, occurrence string
	day                  time.Time
	amount               float64
}

// expectYear lists every grant the year's rules owe between first and last.
func expectYear(pop []member, first, last time.Time) []expected {
	var out []expected
	inYear := func(d time.Time) bool { return !d.Before(first) && !d.After(last) }
	// Owed on day d: started (with the tenure), not away, and known to
	// hrsync (a late listing is in the down week: the catch-up run sees the
	// whole of it).
	active := func(m member, d time.Time, tenureDays int) bool {
		return !m.start.AddDate(0, 0, tenureDays).After(d) && !m.away(d) && !d.Before(m.from)
	}
	for _, m := range pop {
		for _, y := range []int{first.Year(), first.Year() + 1} {
			// Birthday: 29 February is 1 March in a year without it; a day
			// on a weekend moves back to Friday.
			b := date(y, m.birth.Month(), m.birth.Day())
			if m.birth.Month() == time.February && m.birth.Day() == 29 && b.Month() == time.March {
				b = date(y, time.March, 1)
			}
			for b.Weekday() == time.Saturday || b.Weekday() == time.Sunday {
				b = b.AddDate(0, 0, -1)
			}
			birthKnown := m.noBirthFrom.IsZero() || exportDay(b, first).Before(m.noBirthFrom)
			if inYear(b) && active(m, b, 30) && birthKnown {
				out = append(out, expected{m.id, "birthday", strconv.Itoa(y), b, 7})
			}
			// Anniversary: 29 February is 28 February in a year without it;
			// granted two days ahead; amounts by years of service.
			years := y - m.start.Year()
			if years >= 1 {
				a := date(y, m.start.Month(), m.start.Day())
				if m.start.Month() == time.February && m.start.Day() == 29 && a.Month() == time.March {
					a = date(y, time.February, 28)
				}
				a = a.AddDate(0, 0, -2)
				amount := map[int]float64{1: 100, 5: 500, 10: 1000}[years]
				if amount == 0 {
					amount = 50
				}
				if inYear(a) && active(m, a, 0) {
					out = append(out, expected{m.id, "anniversary", strconv.Itoa(y), a, amount})
				}
			}
		}
		if c := date(2027, 12, 1); inYear(c) && m.location == "Berlin" && active(m, c, 0) {
			out = append(out, expected{m.id, "berlin-winter", "winter-2027", c, 10000})
		}
	}
	return out
}

// TestYearDayByDay runs the grants job once a day for a whole year, with the
// clock at half past midnight in Kiritimati (UTC+14, the previous day in
// UTC), and the people sync on every weekly export: each day, the platform
// applies exactly the grants due that day, with their amounts, and nobody
// else gets any.
func TestYearDayByDay(t *testing.T) {
	first, last := date(2027, 1, 1), date(2027, 12, 31)
	kiritimati, err := time.LoadLocation("Pacific/Kiritimati")
	if err != nil {
		t.Fatal(err)
	}
	at := func(d time.Time) time.Time { return time.Date(d.Year(), d.Month(), d.Day(), 0, 30, 0, 0, kiritimati) }
	pop := population()
	want := expectYear(pop, first, last)
	wantByDay := map[time.Time][]expected{}
	for _, e := range want {
		wantByDay[e.day] = append(wantByDay[e.day], e)
	}
	checkPopulation(t, pop, want)

	w := newWorld(t, at(first))
	job := w.job(loadGrants(t, yearRules))
	var lastExport time.Time
	var owedSince []expected // owed on the days the job was down
	days := 0
	for d := first; !d.After(last); d = d.AddDate(0, 0, 1) {
		w.clock.set(at(d))
		if e := exportDay(d, first); !e.Equal(lastExport) {
			var rows []row
			for _, m := range pop {
				if m.listed(e) {
					rows = append(rows, m.rowOn(e))
				}
			}
			w.sync(rows)
			lastExport = e
		}
		days++
		owedSince = append(owedSince, wantByDay[d]...)
		if !d.Before(downFrom) && d.Before(downUntil) {
			continue // the grants job is down; the people sync goes on
		}
		rep := w.run(job, grants.RunFlags{})
		if rep.Outcome != model.OutcomeOK {
			t.Fatalf("%s: outcome %s: %s", d.Format("2006-01-02"), rep.Outcome, rep.Cause)
		}
		compareDay(t, d, owedSince, w.rec.take())
		owedSince = nil
	}
	if days != 365 {
		t.Fatalf("ran %d days, want 365", days)
	}

	// The platform's balances are the sum of what each person was owed.
	owed := map[string]float64{}
	for _, e := range want {
		owed[e.id] += e.amount
	}
	for _, m := range pop {
		p, ok := w.emu.Person(emulator.DatasetCompanyID, m.id)
		if !ok {
			t.Fatalf("%s is not on the platform", m.id)
		}
		if p.Balance != owed[m.id] {
			t.Errorf("%s: balance %.2f at the platform, want %.2f", m.id, p.Balance, owed[m.id])
		}
	}
	// The ledger holds each grant once, applied, under its rule and
	// occurrence; the occurrences of people away on their day are voided.
	got, err := w.st.ListGrants(t.Context(), store.GrantFilter{Tenant: "acme", Job: model.JobGrants,
		States: []model.GrantState{model.GrantApplied, model.GrantPending, model.GrantUnknown, model.GrantNotApplied}})
	if err != nil {
		t.Fatal(err)
	}
	voided, err := w.st.ListGrants(t.Context(), store.GrantFilter{Tenant: "acme", Job: model.JobGrants, States: []model.GrantState{model.GrantVoided}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(voided, func(g model.Grant) bool { return g.Key == "acme/P0009/birthday/2027" }) {
		t.Errorf("the birthday of P0009, away on the day, is not voided (%d voided)", len(voided))
	}
	wantKeys := make([]string, 0, len(want))
	for _, e := range want {
		wantKeys = append(wantKeys, model.GrantKey("acme", e.id, e.rule, e.occurrence))
	}
	gotKeys := make([]string, 0, len(got))
	for _, g := range got {
		if g.State != model.GrantApplied {
			t.Errorf("%s is %s", g.Key, g.State)
		}
		gotKeys = append(gotKeys, g.Key)
	}
	sort.Strings(wantKeys)
	sort.Strings(gotKeys)
	if !slices.Equal(gotKeys, wantKeys) {
		t.Errorf("the ledger holds %d rule grants, want %d", len(gotKeys), len(wantKeys))
	}
	t.Logf("%d days, %d people, %d grants (%d calls to the platform)", days, len(pop), len(want), w.rec.callCount())
}

// checkPopulation makes sure the year exercises what it claims to.
func checkPopulation(t *testing.T, pop []member, want []expected) {
	t.Helper()
	var feb29, hired, left, back int
	for _, m := range pop {
		if m.birth.Month() == time.February && m.birth.Day() == 29 {
			feb29++
		}
		if m.start.Year() == 2027 {
			hired++
		}
		if !m.gone.IsZero() {
			left++
		}
		if !m.back.IsZero() {
			back++
		}
	}
	rules := map[string]int{}
	for _, e := range want {
		rules[e.rule]++
	}
	if feb29 < 5 || hired < 100 || left < 50 || back != 3 || rules["birthday"] < 700 || rules["anniversary"] < 700 || rules["berlin-winter"] < 250 {
		t.Fatalf("population: %d born on 29 February, %d hired, %d leaving, %d back; grants %v", feb29, hired, left, back, rules)
	}
	// The returning people: P0007 and P0009 are away on their days, P0008
	// on neither.
	for _, e := range want {
		if (e.id == "P0007" || e.id == "P0009" && e.rule == "birthday") && e.rule != "berlin-winter" {
			t.Fatalf("%s should not be owed %s while away", e.id, e.rule)
		}
		if e.id == "P0011" && e.rule == "birthday" {
			t.Fatal("P0011 should not be owed a birthday the exports no longer give")
		}
	}
	if !slices.ContainsFunc(want, func(e expected) bool {
		return e.id == "P0010" && e.rule == "birthday" && e.day.Equal(date(2027, 6, 23))
	}) {
		t.Fatal("P0010 should be owed the birthday of 23 June, between their only export and the next")
	}
}

// compareDay fails when the grants the platform applied on day d differ
// from those due that day (as multisets of person and amount).
func compareDay(t *testing.T, d time.Time, want []expected, got []applied) {
	t.Helper()
	key := func(id string, amount float64) string { return fmt.Sprintf("%s %.2f", id, amount) }
	count := map[string]int{}
	for _, e := range want {
		count[key(e.id, e.amount)]++
	}
	for _, a := range got {
		count[key(a.ExternalID, a.Amount)]--
	}
	var diff []string
	for k, n := range count {
		if n != 0 {
			diff = append(diff, fmt.Sprintf("%s (%+d)", k, -n))
		}
	}
	if len(diff) > 0 {
		sort.Strings(diff)
		t.Fatalf("%s: applied %d grants, due %d; differences (+ extra, - missing): %v", d.Format("2006-01-02"), len(got), len(want), diff)
	}
}
