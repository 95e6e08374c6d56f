package people_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"hrsync/apiclient"
	"hrsync/emulator"
	"hrsync/internal/emutest"
	"hrsync/internal/storetest"
	"hrsync/model"
	"hrsync/sources/registry"
	"hrsync/sources/scim/directory"
	"hrsync/sources/scimsrc"
	"hrsync/store"
	"hrsync/sync/people"
	"hrsync/sync/sender"
)

// scimWorld is a tenant fed by SCIM: its directory in a real store (SQLite
// or PostgreSQL), read through the scim source kind, and the people sync
// sending to the emulator over loopback.
type scimWorld struct {
	t      *testing.T
	s      storetest.Store
	emu    *emulator.Emulator
	client *apiclient.Client
	ids    map[string]string // SCIM id by externalId
}

func newSCIMWorld(t *testing.T, s storetest.Store) *scimWorld {
	emu, client := emutest.Start(t)
	return &scimWorld{t: t, s: s, emu: emu, client: client, ids: map[string]string{}}
}

// write is what an identity provider's SCIM request does, on the replica st.
var write = directory.Write{Tenant: "acme", Actor: "scim-token:acme"}

// create creates the user ext-i, as a POST /Users does; a balance other
// than 0 is its hrsync balanceOverride.
func (w *scimWorld) create(st *store.Store, i int, balance float64) {
	w.t.Helper()
	u := directory.User{
		ExternalID: fmt.Sprintf("ext-%d", i), UserName: fmt.Sprintf("user%d@acme.example", i), Active: true,
		GivenName: "Given", FamilyName: fmt.Sprintf("Family%d", i), Department: "Eng", StartDate: "2026-01-05",
		Emails: []directory.Email{{Value: fmt.Sprintf("user%d@acme.example", i), Type: "work", Primary: true}},
	}
	if balance != 0 {
		u.BalanceOverride = &balance
	}
	if i == 1 {
		u.BirthDate = "--12-25" // as the SCIM handler keeps it: no year
	}
	got, err := st.SCIMDirectory().Create(w.t.Context(), write, u)
	if err != nil {
		w.t.Fatal(err)
	}
	w.ids[u.ExternalID] = got.ID
}

// setActive sets the user's active flag, as Entra's PATCH replace of
// active does.
func (w *scimWorld) setActive(ext string, active bool) {
	w.t.Helper()
	_, err := w.s.St.SCIMDirectory().Update(w.t.Context(), write, w.ids[ext], func(u directory.User) (directory.User, error) {
		u.Active = active
		return u, nil
	})
	if err != nil {
		w.t.Fatal(err)
	}
}

// job is the people sync of the tenant on the replica st.
func (w *scimWorld) job(st *store.Store) *people.Job {
	w.t.Helper()
	opts := people.Options{
		Tenant: "acme", CompanyID: emulator.DatasetCompanyID, CollectionID: emulator.PlainCollectionID,
		BatchSize: 3, Concurrency: 2, DefaultBalance: 10, Safeguards: people.DefaultSafeguards(),
		Birthdays: st, // as for a tenant with a birthday rule
	}
	j, err := people.New(opts, st, sender.NewJournal(st), w.client, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	return j
}

// feed is the tenant's source as cmd opens it: the scim kind over the
// replica's state.
func (w *scimWorld) feed(st *store.Store) people.Feed {
	w.t.Helper()
	src, err := registry.Open(w.t.Context(), &scimsrc.Options{TokenFile: "acme.token"}, registry.Env{Tenant: "acme", Directory: st})
	if err != nil {
		w.t.Fatal(err)
	}
	return src.Feed
}

// run runs the people sync once on the first replica and returns its one
// export's report.
func (w *scimWorld) run(override bool) people.ExportReport {
	w.t.Helper()
	rep, err := w.job(w.s.St).RunOnce(w.t.Context(), w.feed(w.s.St), people.RunFlags{OverrideSafeguards: override})
	if err != nil && !strings.HasPrefix(err.Error(), "safeguard") {
		w.t.Fatalf("run: %v", err)
	}
	if len(rep.Exports) != 1 {
		w.t.Fatalf("run: %d exports, want the directory's one snapshot", len(rep.Exports))
	}
	return rep.Exports[0]
}

// platform returns, per externalId of the tenant's people on the emulator,
// the grants each received.
func (w *scimWorld) platform() map[string][]emulator.Grant {
	out := map[string][]emulator.Grant{}
	for _, c := range w.emu.State().Companies {
		if c.ID != emulator.DatasetCompanyID {
			continue
		}
		for _, p := range c.People {
			if strings.HasPrefix(p.ExternalID, "ext-") {
				out[p.ExternalID] = append(out[p.ExternalID], p.Grants...)
			}
		}
	}
	return out
}

// departed lists the tenant's people hrsync's state holds as departed.
func (w *scimWorld) departed() []string {
	var out []string
	err := w.s.St.ScanPeople(w.t.Context(), "acme", func(r store.PersonRow) error {
		if !r.DepartedAt.IsZero() {
			out = append(out, r.ExternalID)
		}
		return nil
	})
	if err != nil {
		w.t.Fatal(err)
	}
	return out
}

// wantCounts checks some counts of an export's report.
func wantCounts(t *testing.T, step string, er people.ExportReport, want map[string]int) {
	t.Helper()
	for k, v := range want {
		if er.Counts[k] != v {
			t.Fatalf("%s: count %s = %d, want %d (counts %v, cause %q)", step, k, er.Counts[k], v, er.Counts, er.Cause)
		}
	}
}

// TestSCIMDirectoryAsSource: on SQLite and PostgreSQL, a tenant whose
// identity provider pushes 5 users gets them created on the platform once,
// each with its balance (the override where set), a birthday without its
// year kept for the birthday rules and never sent; 2 deactivated (one by
// active false, one deleted) are 2 departures; 1 reactivated is 1 return; a
// run over the unchanged directory sends nothing; deactivating most users
// stops the job on the safeguard, run after run, until the operator's
// override applies it; and no person is ever granted twice.
func TestSCIMDirectoryAsSource(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s storetest.Store) {
		w := newSCIMWorld(t, s)
		for i := 1; i <= 5; i++ {
			w.create(s.St, i, map[bool]float64{true: 250}[i == 1])
		}
		er := w.run(false)
		wantCounts(t, "5 users", er, map[string]int{"new": 5, "created": 5, "departed": 0})
		if er.Outcome != model.OutcomeOK || !strings.HasPrefix(er.Source, "scim:acme@") {
			t.Fatalf("5 users: outcome %s, source %q", er.Outcome, er.Source)
		}
		onPlatform := w.platform()
		if len(onPlatform) != 5 || len(onPlatform["ext-1"]) != 1 || onPlatform["ext-1"][0].Amount != 250 ||
			len(onPlatform["ext-2"]) != 1 || onPlatform["ext-2"][0].Amount != 10 {
			t.Fatalf("5 users: on the platform %v; want 5 people, ext-1 granted 250 and ext-2 10, once each", onPlatform)
		}
		// The birthday without its year is kept for the birthday rules,
		// and the platform is sent no made-up birth date.
		days, err := s.St.Birthdays(t.Context(), "acme")
		if err != nil {
			t.Fatal(err)
		}
		if p, _ := w.emu.Person(emulator.DatasetCompanyID, "ext-1"); days["ext-1"] != (store.MonthDay{Month: 12, Day: 25}) || p.BirthDate != "" {
			t.Fatalf("5 users: birthdays kept %v, platform birthDate %q; want ext-1 on 12-25 and none sent", days, p.BirthDate)
		}

		w.setActive("ext-2", false)
		if err := s.St.SCIMDirectory().Delete(t.Context(), write, w.ids["ext-3"]); err != nil {
			t.Fatal(err)
		}
		er = w.run(false)
		wantCounts(t, "deactivate 2", er, map[string]int{"departed": 2, "new": 0, "returned": 0})
		if got := w.departed(); len(got) != 2 || got[0] != "ext-2" || got[1] != "ext-3" {
			t.Fatalf("deactivate 2: departed in state %v, want ext-2 and ext-3", got)
		}

		w.setActive("ext-2", true)
		er = w.run(false)
		wantCounts(t, "reactivate 1", er, map[string]int{"returned": 1, "departed": 0, "new": 0})
		if got := w.departed(); len(got) != 1 || got[0] != "ext-3" {
			t.Fatalf("reactivate 1: departed in state %v, want ext-3 alone", got)
		}

		calls := w.createCalls()
		er = w.run(false)
		if !er.Duplicate || er.Outcome != model.OutcomeOK || w.createCalls() != calls || !strings.Contains(er.Cause, "directory has not changed") {
			t.Fatalf("rerun: duplicate %v, outcome %s, createPeople calls %d then %d; want the unchanged directory to send nothing",
				er.Duplicate, er.Outcome, calls, w.createCalls())
		}

		w.massDeactivation(t, calls)
	})
}

// massDeactivation deactivates 3 of the 4 active users: every run stops on
// the safeguard, nothing applied, until the override applies the 3
// departures; no person is granted twice, no createPeople call is made
// after calls.
func (w *scimWorld) massDeactivation(t *testing.T, calls int) {
	t.Helper()
	for _, ext := range []string{"ext-1", "ext-2", "ext-4"} {
		w.setActive(ext, false)
	}
	for range 2 {
		er := w.run(false)
		if er.Outcome != model.OutcomeSafeguard || len(er.Safeguards) == 0 || er.Safeguards[0].Name != "maxDepartedRatio" {
			t.Fatalf("deactivate most: outcome %s, safeguards %v; want a maxDepartedRatio stop", er.Outcome, er.Safeguards)
		}
		if !strings.Contains(er.Next, "--override-safeguards") || !strings.Contains(er.Next, "identity provider") {
			t.Fatalf("deactivate most: next step %q; want the identity provider checked and the override", er.Next)
		}
		if got := w.departed(); len(got) != 1 {
			t.Fatalf("deactivate most: departed in state %v; want nothing applied while stopped", got)
		}
	}

	er := w.run(true)
	wantCounts(t, "override", er, map[string]int{"departed": 3})
	if er.Outcome != model.OutcomeOK {
		t.Fatalf("override: outcome %s (%s)", er.Outcome, er.Cause)
	}
	if got := w.departed(); len(got) != 4 {
		t.Fatalf("override: departed in state %v, want 4", got)
	}
	for ext, grants := range w.platform() {
		if len(grants) != 1 {
			t.Fatalf("%s was granted %d times, want once", ext, len(grants))
		}
	}
	if w.createCalls() != calls {
		t.Fatalf("createPeople calls went from %d to %d after the first run; want none", calls, w.createCalls())
	}
}

func (w *scimWorld) createCalls() int { return createCalls(w.emu) }

// TestSCIMReplicas: two replicas share the state (a second store opened on
// the same SQLite file or PostgreSQL schema). Both serve SCIM writes, and
// both run the tenant's people job at once, twice over: the job's lock
// lets one run at a time, and every user is created on the platform once,
// with one grant, whichever replica sent it.
func TestSCIMReplicas(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s storetest.Store) {
		w := newSCIMWorld(t, s)
		replicas := []*store.Store{s.St, s.Again(t)}
		for i := 1; i <= 12; i++ {
			w.create(replicas[i%2], i, 0)
		}
		var wg sync.WaitGroup
		errs := make([]error, 2*len(replicas))
		for round := range 2 {
			for i, st := range replicas {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[2*round+i] = w.job(st).RunOnce(context.WithoutCancel(t.Context()), w.feed(st), people.RunFlags{})
				}()
			}
			wg.Wait()
		}
		for _, err := range errs {
			if err != nil && !errors.Is(err, model.ErrLocked) {
				t.Fatalf("a replica's run: %v", err)
			}
		}
		// A run after both: whatever the lock let through, nothing is
		// left to create and the platform holds each user once.
		er := w.run(false)
		if er.Counts["new"] != 0 && !er.Duplicate {
			t.Fatalf("after the replicas' runs, %d people still new", er.Counts["new"])
		}
		onPlatform := w.platform()
		if len(onPlatform) != 12 {
			t.Fatalf("%d of 12 users on the platform", len(onPlatform))
		}
		for ext, grants := range onPlatform {
			if len(grants) != 1 || grants[0].Amount != 10 {
				t.Fatalf("%s: grants %v, want one of 10", ext, grants)
			}
		}
	})
}
