package grants_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"hrsync/model"
	"hrsync/sync/grants"
)

// createCalls counts the createPeople calls in the emulator's request log.
func (w *world) createCalls() int {
	n := 0
	for _, r := range w.emu.Requests() {
		if r.OperationID == "createPeople" {
			n++
		}
	}
	return n
}

// tokyo is the clock at 09:00 in Tokyo on day d.
func tokyo(t *testing.T, d time.Time) time.Time {
	t.Helper()
	loc, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	return time.Date(d.Year(), d.Month(), d.Day(), 9, 0, 0, 0, loc)
}

// TestOutageCatchUp: the grants job runs on 1 March, is down for ten days
// while the people sync goes on (someone leaves, someone is hired), and
// runs once on 12 March with a look-back of 12 days: it grants exactly the
// occurrences of 2 to 12 March owed to the people active on their day, and
// a second run grants nothing.
func TestOutageCatchUp(t *testing.T) {
	const rules = `timezone: Asia/Tokyo
lookbackDays: 12
rules:
  - name: birthday
    type: birthday
    amount: 5
  - name: anniversary
    type: workAnniversary
    amount: 20
`
	mar := func(d int) time.Time { return date(2027, time.March, d) }
	var pop []member
	for i := range 40 {
		pop = append(pop, member{row: row{
			id: fmt.Sprintf("P%02d", i), location: "Tokyo", department: "Eng",
			birth: date(1980+i%20, time.March, 1+i%16), start: date(2015+i%8, time.March, 1+(i*7)%16),
		}})
	}
	// Leaves on 8 March (outage): owed the birthday of 5 March, not 10 March.
	pop = append(pop, member{row: row{id: "LEFT", location: "Tokyo", birth: date(1990, 3, 5), start: date(2018, 1, 10)}, gone: mar(8)})
	pop = append(pop, member{row: row{id: "GONE", location: "Tokyo", birth: date(1990, 3, 10), start: date(2018, 1, 10)}, gone: mar(8)})
	// Hired on 9 March (listed from that day): owed 10 March, not 7 March.
	pop = append(pop, member{row: row{id: "NEW1", location: "Tokyo", birth: date(1995, 3, 10), start: mar(9)}})
	pop = append(pop, member{row: row{id: "NEW2", location: "Tokyo", birth: date(1995, 3, 7), start: mar(9)}})

	listed := func(d time.Time) []row {
		var rows []row
		for _, m := range pop {
			if !m.start.After(d) && !m.away(d) {
				rows = append(rows, m.row)
			}
		}
		return rows
	}
	owed := func(from, to time.Time) []expected {
		var out []expected
		for _, m := range pop {
			b := date(2027, m.birth.Month(), m.birth.Day())
			if !b.Before(from) && !b.After(to) && !m.start.After(b) && !m.away(b) {
				out = append(out, expected{id: m.id, rule: "birthday", day: b, amount: 5})
			}
			a := date(2027, m.start.Month(), m.start.Day())
			if a.Year() > m.start.Year() && !a.Before(from) && !a.After(to) && !m.away(a) {
				out = append(out, expected{id: m.id, rule: "anniversary", day: a, amount: 20})
			}
		}
		return out
	}

	w := newWorld(t, tokyo(t, mar(1)))
	job := w.job(loadGrants(t, rules))
	w.sync(listed(mar(1)))
	w.run(job, grants.RunFlags{})
	compareDay(t, mar(1), owed(mar(1), mar(1)), w.rec.take())

	// The outage: the people sync runs, the grants job does not.
	for _, d := range []int{8, 9} {
		w.clock.set(tokyo(t, mar(d)))
		w.sync(listed(mar(d)))
	}
	w.clock.set(tokyo(t, mar(12)))
	rep := w.run(job, grants.RunFlags{})
	if rep.Outcome != model.OutcomeOK {
		t.Fatalf("catch-up run: %s: %s", rep.Outcome, rep.Cause)
	}
	want := owed(mar(2), mar(12))
	if len(want) < 40 {
		t.Fatalf("the outage owes only %d grants: the test does not test", len(want))
	}
	got := w.rec.take()
	compareDay(t, mar(12), want, got)
	for _, a := range got {
		if a.ExternalID == "GONE" || a.ExternalID == "NEW2" {
			t.Errorf("%s was granted", a.ExternalID)
		}
	}
	t.Logf("caught up %d grants of 11 days in one run", len(got))

	calls := w.createCalls()
	again := w.run(job, grants.RunFlags{})
	if n := len(w.rec.take()); n != 0 || w.createCalls() != calls || again.Outcome != model.OutcomeOK {
		t.Fatalf("a second run granted %d more (%d calls), outcome %s", n, w.createCalls()-calls, again.Outcome)
	}
}

// campaignRules are a campaign for Berlin on 1 December 2027.
const campaignRules = `timezone: Europe/Berlin
rules:
  - name: winter
    type: campaign
    key: winter-2027
    date: "2027-12-01"
    amount: 100
    locations: [Berlin]
`

// berliners lists n people in Berlin and n in Paris.
func berliners(n int) []row {
	var rows []row
	for i := range n {
		for _, loc := range []string{"Berlin", "Paris"} {
			rows = append(rows, row{id: fmt.Sprintf("%s%02d", loc[:3], i), location: loc, department: "Eng",
				birth: date(1985, 4, 1+i), start: date(2020, 1, 6)})
		}
	}
	return rows
}

// TestCampaignOnce: a campaign run repeated on its day, the day after and
// as of its day grants each person once.
func TestCampaignOnce(t *testing.T) {
	dec1 := date(2027, 12, 1)
	w := newWorld(t, tokyo(t, dec1))
	w.sync(berliners(15))
	job := w.job(loadGrants(t, campaignRules))
	rep := w.run(job, grants.RunFlags{})
	first := w.rec.take()
	if r := rep.Rules[0]; r.Applied != 15 || r.Skipped != 15 {
		t.Errorf("first run: %d applied, %d skipped (Paris); want 15 and 15", r.Applied, r.Skipped)
	}
	var want []expected
	for _, r := range berliners(15) {
		if r.location == "Berlin" {
			want = append(want, expected{id: r.id, amount: 100})
		}
	}
	compareDay(t, dec1, want, first)
	calls := w.createCalls()
	if r := w.run(job, grants.RunFlags{}).Rules[0]; r.Applied != 0 || r.Skipped != 0 {
		t.Errorf("the repeated run: %d applied, %d skipped; want none (each is counted once)", r.Applied, r.Skipped)
	}
	w.clock.set(tokyo(t, dec1.AddDate(0, 0, 1)))
	w.run(job, grants.RunFlags{})
	w.run(job, grants.RunFlags{AsOf: dec1})
	if n := len(w.rec.take()); n != 0 || w.createCalls() != calls {
		t.Fatalf("repeated runs granted %d more with %d more calls", n, w.createCalls()-calls)
	}
}

// TestBudgetStopsBeforeAnyCall: a run over grants.maxPerRun, then one that
// would take the month over grants.maxPerMonth, stops with the safeguard
// outcome and the totals, and the platform sees no call; the override
// grants once.
func TestBudgetStopsBeforeAnyCall(t *testing.T) {
	dec1 := date(2027, 12, 1)
	w := newWorld(t, tokyo(t, dec1))
	w.sync(berliners(15))
	calls := w.createCalls()

	perRun := w.job(loadGrants(t, "maxPerRun: 1000\n"+strings.TrimPrefix(campaignRules, "timezone: Europe/Berlin\n")))
	rep := w.run(perRun, grants.RunFlags{})
	if rep.Outcome != model.OutcomeSafeguard || !strings.Contains(rep.Cause, "1500.00") || !strings.Contains(rep.Cause, "maxPerRun (1000.00)") {
		t.Fatalf("outcome %s, cause %q: want a safeguard naming the total 1500.00 and the cap", rep.Outcome, rep.Cause)
	}
	if w.createCalls() != calls {
		t.Fatalf("the stopped run made %d calls", w.createCalls()-calls)
	}

	// Within the month: the campaign of 1500 goes, a second one of 1500 on
	// 2 December would take the month to 3000, over 2500.
	month := w.job(loadGrants(t, `timezone: Europe/Berlin
maxPerMonth: 2500
rules:
  - {name: winter, type: campaign, key: winter-2027, date: "2027-12-01", amount: 100, locations: [Berlin]}
  - {name: bonus, type: campaign, key: bonus-2027, date: "2027-12-02", amount: 100, locations: [Berlin]}
`))
	if rep := w.run(month, grants.RunFlags{}); rep.Outcome != model.OutcomeOK {
		t.Fatalf("first campaign: %s: %s", rep.Outcome, rep.Cause)
	}
	w.rec.take()
	calls = w.createCalls()
	w.clock.set(tokyo(t, dec1.AddDate(0, 0, 1)))
	rep = w.run(month, grants.RunFlags{})
	if rep.Outcome != model.OutcomeSafeguard || !strings.Contains(rep.Cause, "3000.00") || !strings.Contains(rep.Cause, "maxPerMonth (2500.00)") {
		t.Fatalf("outcome %s, cause %q: want a safeguard naming the month's 3000.00 and the cap", rep.Outcome, rep.Cause)
	}
	if w.createCalls() != calls || len(w.rec.take()) != 0 {
		t.Fatal("the stopped run called the platform")
	}
	rep = w.run(month, grants.RunFlags{OverrideSafeguards: true})
	if got := len(w.rec.take()); rep.Outcome != model.OutcomeOK || got != 15 {
		t.Fatalf("override: %s, %d granted, want ok and 15", rep.Outcome, got)
	}
}
