package main_test

import (
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"testing"
	"time"
)

// grantsSoakEnv, when set to 1, makes TestCrashGrants run every day of the
// year for 1,000 people (make soak-grants) instead of every third day for 200.
const grantsSoakEnv = "HRSYNC_GRANTS_SOAK"

// crashGrantRules are the rules of the crash year: distinct amounts per rule
// and years of service, so that a person's grants at the platform say
// which were applied.
const crashGrantRules = `timezone: Pacific/Auckland
lookbackDays: 7
rules:
  - {name: birthday, type: birthday, amount: 3, feb29: mar1}
  - {name: anniversary, type: workAnniversary, amount: 20, amountByYears: {5: 100}}
  - {name: lisbon, type: campaign, key: lisbon-2025, date: "2025-06-12", amount: 40, locations: [Lisbon]}
`

// crashOwed lists the amounts the crash year's rules owe person p in 2025,
// computed here from the export's fields, sorted.
func crashOwed(p person) []float64 {
	out := []float64{3} // every birthday falls in 2025
	start, _ := time.Parse(time.DateOnly, p.start)
	if years := 2025 - start.Year(); years >= 1 {
		if years == 5 {
			out = append(out, 100)
		} else {
			out = append(out, 20)
		}
	}
	if p.loc == "Lisbon" {
		out = append(out, 40)
	}
	sort.Float64s(out)
	return out
}

// TestCrashGrants runs the grants job through the binary over the days of
// 2025 (`run grants --date D`), killing it (SIGKILL) at random points of
// random days, with answers lost after the platform applied a call (500s
// and dropped connections) and every answer late; after each day an
// operator settles the held grants (`grants confirm` when the emulator
// holds a grant with the call's Idempotency-Key, else `grants release`).
// At the end every person received at the platform exactly the grants the
// rules owe for 2025, once each, and nothing is held. Each store.
func TestCrashGrants(t *testing.T) {
	for _, store := range storeKinds() {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			crashGrantsYear(t, store)
		})
	}
}

func crashGrantsYear(t *testing.T, store string) {
	n, step := 200, 3
	if os.Getenv(grantsSoakEnv) == "1" {
		n, step = 1000, 1
	}
	rng := rand.New(rand.NewPCG(2025, uint64(len(store))))
	e := newEnv(t, configOptions{batchSize: 7, concurrency: 2, timeout: 10 * time.Second, maxAttempts: 2, store: store})
	e.addGrants(crashGrantRules)
	staff := genPeople(0, n)
	e.dropFile("staff.csv", csvExport(staff))
	e.mustRun(0, "run", "people")

	// Some calls fail before the platform applies them (a 502 whose outcome
	// hrsync cannot know): held, then released by the operator. Faults are
	// matched in order; the last one delays every other answer.
	e.emu.addFault(t, fault{Operation: "createPeople", When: "before", Status: 502, Rate: 0.08})
	e.emu.addFault(t, fault{Operation: "createPeople", When: "after", Status: 500, Latency: "15ms", Rate: 0.1})
	e.emu.addFault(t, fault{Operation: "createPeople", When: "after", Drop: true, Latency: "15ms", Rate: 0.1})
	e.emu.addFault(t, fault{Operation: "createPeople", When: "after", Latency: "15ms"})

	killed, runs, confirmed, released := 0, 0, 0, 0
	first, last := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC)
	for d := first; !d.After(last); d = d.AddDate(0, 0, step) {
		if d.AddDate(0, 0, step).After(last) {
			d = last
		}
		day := d.Format(time.DateOnly)
		if rng.IntN(4) == 0 { // a run killed at a random point, then the next tick
			kp := killPoint{calls: 1 + rng.IntN(3)}
			if rng.IntN(3) == 0 {
				kp = killPoint{delay: time.Duration(5+rng.IntN(60)) * time.Millisecond}
			}
			if wasKilled, res := runArgsAndKill(t, e, kp, "run", "grants", "--date", day); wasKilled {
				killed++
			} else if res.code != 0 && res.code != 4 {
				t.Fatalf("%s: a run that was not killed ended with %s", day, res)
			}
			runs++
		}
		// The next tick runs to its end; then the operator settles what is
		// held, and released grants go with the same day's next run.
		for range 5 {
			res := e.run("run", "grants", "--date", day)
			runs++
			if res.code != 0 && res.code != 4 {
				t.Fatalf("%s: %s", day, res)
			}
			c, r := resolveHeld(t, e)
			confirmed, released = confirmed+c, released+r
			if res.code == 0 && c+r == 0 {
				break
			}
		}
		if d.Equal(last) {
			break
		}
	}
	t.Logf("%d people, every %d days: %d runs, %d killed; held grants: %d confirmed, %d released", n, step, runs, killed, confirmed, released)
	if killed == 0 || confirmed == 0 || released == 0 {
		t.Errorf("the year was too quiet: %d kills, %d confirmed, %d released", killed, confirmed, released)
	}
	if held := e.grants(); len(held) != 0 {
		t.Errorf("%d grants still held", len(held))
	}
	emu := byExternalID(t, e.emu.people(t, e.company))
	wrong := 0
	for _, p := range staff {
		got, ok := emu[p.id]
		if !ok || len(got.Grants) == 0 {
			t.Fatalf("person %s is missing at the emulator", p.id)
		}
		var amounts []float64
		for _, g := range got.Grants[1:] { // the first is the people sync's
			amounts = append(amounts, g.Amount)
		}
		sort.Float64s(amounts)
		if want := crashOwed(p); !slices.Equal(amounts, want) {
			t.Errorf("%s received %v from the rules, owed %v", p.id, amounts, want)
			if wrong++; wrong > 20 {
				t.Fatal("too many wrong people; stopping")
			}
		}
	}
	if n := e.count(`SELECT COUNT(*) FROM api_journal WHERE state = 'sent'`); n != 0 {
		t.Errorf("%d calls have no outcome", n)
	}
	// Each run killed after it was recorded was closed as interrupted by the
	// next grants run (a kill at a random moment may land before).
	if n, closed := e.count(`SELECT COUNT(*) FROM runs WHERE outcome = 'running'`),
		e.count(`SELECT COUNT(*) FROM runs WHERE job = 'grants' AND outcome = 'interrupted'`); n != 0 || closed == 0 || closed > killed {
		t.Errorf("%d runs left running, %d grants runs closed as interrupted; want none, and 1 to %d (the kills)", n, closed, killed)
	}
}
