package sender_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"hrsync/apiclient"
	"hrsync/emulator"
	"hrsync/internal/emutest"
	"hrsync/internal/storetest"
	"hrsync/model"
	"hrsync/store"
	"hrsync/sync/sender"
)

// grantsEnv is a tenant whose people the people sync created on the
// emulator (over loopback, through the contract's validation), and the
// grants job's senders for them.
type grantsEnv struct {
	t      *testing.T
	ts     storetest.Store
	emu    *emulator.Emulator
	client *apiclient.Client
}

func newGrantsEnv(t *testing.T, ts storetest.Store, people int) *grantsEnv {
	t.Helper()
	emu, client := emutest.Start(t)
	e := &grantsEnv{t: t, ts: ts, emu: emu, client: client}
	// The people sync creates them, each with an initial balance of 10.
	var items sender.List
	for i := 1; i <= people; i++ {
		items = append(items, sender.Item{
			Person: model.Person{ExternalID: fmt.Sprintf("E%02d", i), Email: fmt.Sprintf("e%d@example.com", i),
				FirstName: "F", LastName: fmt.Sprintf("L%d", i), Department: "Eng", Location: "Berlin",
				StartDate: time.Date(2024, 3, i, 0, 0, 0, 0, time.UTC), BirthDate: time.Date(1990, 5, i, 0, 0, 0, 0, time.UTC)},
			Grant: sender.Grant{Reason: model.InitialGrantReason, Occurrence: "1", AddBalance: 10},
		})
	}
	res, err := e.sender(model.JobPeople, model.InitialGrantReason, false, func(o *sender.Options) {
		o.PersonRows = func(ps []model.Person) []store.PersonRow {
			rows := make([]store.PersonRow, len(ps))
			for i, p := range ps {
				rows[i] = store.PersonRow{ExternalID: p.ExternalID, Email: p.Email, FirstName: p.FirstName,
					LastName: p.LastName, Department: p.Department, Location: p.Location, StartDate: p.StartDate}
			}
			return rows
		}
	}).Send(t.Context(), e.run(model.JobPeople), items)
	if err != nil || res.Applied != people {
		t.Fatalf("the people sync created %+v (%v), want %d people", res, err, people)
	}
	return e
}

// sender is a Sender of job and rule for the tenant.
func (e *grantsEnv) sender(job model.Job, rule string, trust bool, mutate func(*sender.Options)) *sender.Sender {
	e.t.Helper()
	opts := sender.Options{
		Tenant: "acme", CompanyID: emulator.DatasetCompanyID, CollectionID: emulator.PlainCollectionID,
		Job: job, Rule: rule, BatchSize: 4, Concurrency: 2, TrustIdempotencyKey: trust,
	}
	if mutate != nil {
		mutate(&opts)
	}
	s, err := sender.New(opts, e.ts.St, e.client, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// run records a new run of job and returns its id.
func (e *grantsEnv) run(job model.Job) string {
	e.t.Helper()
	id := uuid.NewString()
	if err := e.ts.St.StartRun(e.t.Context(), store.Run{ID: id, Job: job, Tenant: "acme"}); err != nil {
		e.t.Fatal(err)
	}
	return id
}

// state reads a person from state, as the grants job does.
func (e *grantsEnv) state(id string) (model.Person, store.PersonRow) {
	e.t.Helper()
	r, ok, err := e.ts.St.Person(e.t.Context(), "acme", id)
	if err != nil || !ok {
		e.t.Fatalf("person %s in state: %v, %v", id, ok, err)
	}
	return model.Person{ExternalID: r.ExternalID, Email: r.Email, FirstName: r.FirstName, LastName: r.LastName,
		Department: r.Department, Location: r.Location, StartDate: r.StartDate}, r
}

// grants are the items granting rule's occurrence of amount to people ids.
func (e *grantsEnv) grants(rule, occurrence string, amount float64, ids ...string) sender.List {
	e.t.Helper()
	var l sender.List
	for _, id := range ids {
		p, _ := e.state(id)
		l = append(l, sender.Item{Person: p, Grant: sender.Grant{Reason: rule, Occurrence: occurrence, AddBalance: amount}})
	}
	return l
}

// platform returns what the emulator holds for a person: their balance and
// the amounts granted, in order.
func (e *grantsEnv) platform(id string) (float64, []float64) {
	e.t.Helper()
	p, ok := e.emu.Person(emulator.DatasetCompanyID, id)
	if !ok {
		e.t.Fatalf("%s is not on the platform", id)
	}
	var amounts []float64
	for _, g := range p.Grants {
		amounts = append(amounts, g.Amount)
	}
	return p.Balance, amounts
}

func (e *grantsEnv) grant(id, rule, occurrence string) model.Grant {
	e.t.Helper()
	g, err := e.ts.St.Grant(e.t.Context(), model.GrantKey("acme", id, rule, occurrence))
	if err != nil {
		e.t.Fatal(err)
	}
	return g
}

// platformPeople counts the people of every company on the platform.
func (e *grantsEnv) platformPeople() int {
	n := 0
	for _, c := range e.emu.State().Companies {
		n += len(c.People)
	}
	return n
}

func (e *grantsEnv) calls() int {
	n := 0
	for _, r := range e.emu.Requests() {
		if r.OperationID == "createPeople" {
			n++
		}
	}
	return n
}

func (e *grantsEnv) fault(f emulator.Fault) {
	e.t.Helper()
	f.Operation = "createPeople"
	if _, err := e.emu.AddFault(f); err != nil {
		e.t.Fatal(err)
	}
}

func equalAmounts(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestGrantsToExistingPeopleAreAppliedOnce sends a rule's grants to people
// the people sync created: the platform adds the balance to the person it
// has, nobody is created, state's people are left as they are, and the
// same grants sent again are refused by the ledger before any call.
func TestGrantsToExistingPeopleAreAppliedOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, ts storetest.Store) {
		e := newGrantsEnv(t, ts, 6)
		_, before := e.state("E01")
		people := e.platformPeople()
		birthday := e.sender(model.JobGrants, "birthday", false, nil)
		items := e.grants("birthday", "2026", 25, "E01", "E02", "E03", "E04", "E05")

		res, err := birthday.Send(t.Context(), e.run(model.JobGrants), items)
		if err != nil {
			t.Fatal(err)
		}
		if res.Applied != 5 || res.Granted != 125 || res.Calls != 2 || res.Unknown+res.NotApplied+res.Refused != 0 {
			t.Errorf("result %+v, want 5 applied in 2 calls, 125 granted", res)
		}
		for _, id := range []string{"E01", "E05"} {
			if bal, amounts := e.platform(id); bal != 35 || !equalAmounts(amounts, []float64{10, 25}) {
				t.Errorf("%s on the platform: balance %g, grants %v; want 35 from 10 and 25", id, bal, amounts)
			}
			if g := e.grant(id, "birthday", "2026"); g.State != model.GrantApplied || g.Job != "grants" || g.Amount != 25 {
				t.Errorf("%s's birthday grant %+v", id, g)
			}
		}
		if bal, _ := e.platform("E06"); bal != 10 {
			t.Errorf("E06, not granted, has %g", bal)
		}
		if n := e.platformPeople(); n != people {
			t.Errorf("%d people on the platform, want the %d there were", n, people)
		}
		if _, after := e.state("E01"); !after.CreatedOnPlatformAt.Equal(before.CreatedOnPlatformAt) ||
			after.RemoteID != before.RemoteID || after.Fingerprint != before.Fingerprint {
			t.Errorf("state's person changed: %+v, was %+v", after, before)
		}

		calls := e.calls()
		_, err = birthday.Send(t.Context(), e.run(model.JobGrants), items)
		if !errors.Is(err, store.ErrGrantConflict) {
			t.Errorf("the same grants sent again: %v, want a grant conflict", err)
		}
		if n := e.calls() - calls; n != 0 {
			t.Errorf("%d calls for grants already applied", n)
		}
		if bal, _ := e.platform("E01"); bal != 35 {
			t.Errorf("E01 has %g after the repeat, want 35", bal)
		}
	})
}

// TestHeldGrantIsResentOnlyInItsScope: a call the platform applied but
// answered 500 holds its grants; nothing resends it unless the operator
// trusts the Idempotency-Key, and then only its own job's sender, with the
// original key: the platform replays and grants once.
func TestHeldGrantIsResentOnlyInItsScope(t *testing.T) {
	storetest.Each(t, func(t *testing.T, ts storetest.Store) {
		e := newGrantsEnv(t, ts, 3)
		e.fault(emulator.Fault{When: emulator.After, Status: 500, Count: 1})
		res, err := e.sender(model.JobGrants, "birthday", false, nil).
			Send(t.Context(), e.run(model.JobGrants), e.grants("birthday", "2026", 25, "E01", "E02"))
		if err != nil {
			t.Fatal(err)
		}
		if res.Unknown != 2 || res.Applied != 0 {
			t.Fatalf("result %+v, want 2 held", res)
		}
		if g := e.grant("E01", "birthday", "2026"); g.State != model.GrantUnknown {
			t.Fatalf("E01's grant is %s, want unknown", g.State)
		}

		calls := e.calls()
		for name, s := range map[string]*sender.Sender{
			"the grants job without trust":      e.sender(model.JobGrants, "birthday", false, nil),
			"the people sync, trusting the key": e.sender(model.JobPeople, model.InitialGrantReason, true, nil),
			"another rule, trusting the key":    e.sender(model.JobGrants, "anniversary", true, nil),
		} {
			if n, err := s.HoldInterrupted(t.Context()); err != nil || n != 0 {
				t.Errorf("%s held %d (%v)", name, n, err)
			}
			res, err := s.ResendHeld(t.Context(), e.run(s.Scope().Job), func(id string) (model.Person, bool) {
				p, _ := e.state(id)
				return p, true
			})
			if err != nil || res.Resent != 0 || res.Calls != 0 {
				t.Errorf("%s resent: %+v (%v)", name, res, err)
			}
		}
		if n := e.calls() - calls; n != 0 {
			t.Errorf("%d calls outside the held grants' scope", n)
		}

		res, err = e.sender(model.JobGrants, "birthday", true, nil).ResendHeld(t.Context(), e.run(model.JobGrants),
			func(id string) (model.Person, bool) {
				p, _ := e.state(id)
				return p, true
			})
		if err != nil || res.Resent != 2 || res.Applied != 2 || res.Calls != 1 {
			t.Fatalf("trusted resend: %+v (%v), want 2 resent and applied in one call", res, err)
		}
		for _, id := range []string{"E01", "E02"} {
			if bal, amounts := e.platform(id); bal != 35 || !equalAmounts(amounts, []float64{10, 25}) {
				t.Errorf("%s on the platform: balance %g, grants %v; want the birthday once", id, bal, amounts)
			}
			if g := e.grant(id, "birthday", "2026"); g.State != model.GrantApplied || g.Attempts != 2 {
				t.Errorf("%s's grant %+v, want applied on its second attempt", id, g)
			}
		}
		j, err := ts.St.Journal(t.Context(), store.JournalFilter{Tenant: "acme", Job: model.JobGrants})
		if err != nil {
			t.Fatal(err)
		}
		if len(j) != 2 || j[1].ResendOf != j[0].ID || j[1].IdempotencyKey != j[0].IdempotencyKey {
			t.Errorf("journal %+v, want the call and its resend with the same key", j)
		}
	})
}

// TestNotAppliedGrantIsSentAgain: a call the platform refused before
// applying it leaves its grants not applied, and the next send of the same
// grants applies them, once.
func TestNotAppliedGrantIsSentAgain(t *testing.T) {
	storetest.Each(t, func(t *testing.T, ts storetest.Store) {
		e := newGrantsEnv(t, ts, 2)
		e.fault(emulator.Fault{When: emulator.Before, Status: 400, Count: 1})
		campaign := e.sender(model.JobGrants, "", false, nil)
		items := e.grants("berlin-dec", "2026-12-01", 50, "E01", "E02")
		res, err := campaign.Send(t.Context(), e.run(model.JobGrants), items)
		if err != nil {
			t.Fatal(err)
		}
		if res.NotApplied != 2 || res.Applied != 0 || res.Calls != 1 {
			t.Fatalf("result %+v, want 2 not applied in one call", res)
		}
		if g := e.grant("E01", "berlin-dec", "2026-12-01"); g.State != model.GrantNotApplied {
			t.Fatalf("E01's grant is %s", g.State)
		}
		res, err = campaign.Send(t.Context(), e.run(model.JobGrants), items)
		if err != nil || res.Applied != 2 {
			t.Fatalf("second send: %+v (%v)", res, err)
		}
		for _, id := range []string{"E01", "E02"} {
			if bal, amounts := e.platform(id); bal != 60 || !equalAmounts(amounts, []float64{10, 50}) {
				t.Errorf("%s on the platform: balance %g, grants %v; want the campaign once", id, bal, amounts)
			}
			if g := e.grant(id, "berlin-dec", "2026-12-01"); g.State != model.GrantApplied || g.Attempts != 2 {
				t.Errorf("%s's grant %+v, want applied on its second attempt", id, g)
			}
		}
	})
}

// TestPoisonGrantIsIsolated: the platform refuses a batch because of one
// person's balance; the batch is split until that person is refused alone,
// and everyone else is granted once.
func TestPoisonGrantIsIsolated(t *testing.T) {
	storetest.Each(t, func(t *testing.T, ts storetest.Store) {
		e := newGrantsEnv(t, ts, 6)
		if _, err := e.emu.SetLimits(emulator.Limits{MaxBodyBytes: 1 << 20, MaxFieldChars: 200, MaxBalance: 1000}); err != nil {
			t.Fatal(err)
		}
		items := e.grants("anniversary", "2026", 100, "E01", "E02", "E03", "E04", "E05", "E06")
		items[4].Grant.AddBalance = 5000
		res, err := e.sender(model.JobGrants, "anniversary", false, func(o *sender.Options) { o.BatchSize = 6 }).
			Send(t.Context(), e.run(model.JobGrants), items)
		if err != nil {
			t.Fatal(err)
		}
		if res.Applied != 5 || res.Refused != 1 || res.NotApplied != 0 || len(res.Refusals) != 1 || res.Refusals[0].ExternalID != "E05" {
			t.Fatalf("result %+v, want 5 applied and E05 refused", res)
		}
		if r := res.Refusals[0]; r.Field != "addBalance" || r.Status != 400 {
			t.Errorf("refusal %+v", r)
		}
		for _, id := range []string{"E01", "E02", "E03", "E04", "E06"} {
			if bal, amounts := e.platform(id); bal != 110 || !equalAmounts(amounts, []float64{10, 100}) {
				t.Errorf("%s on the platform: balance %g, grants %v; want the anniversary once", id, bal, amounts)
			}
		}
		if bal, _ := e.platform("E05"); bal != 10 {
			t.Errorf("E05, refused, has %g", bal)
		}
		g := e.grant("E05", "anniversary", "2026")
		call, err := ts.St.GrantCall(t.Context(), g.Key)
		if err != nil || g.State != model.GrantNotApplied || !sender.RefusedAlone(call) {
			t.Errorf("E05's grant %+v, call %+v (%v): want not applied, refused alone", g, call, err)
		}
	})
}

// TestInterruptedGrantIsHeldByItsJobOnly: a grants run died after
// committing a call's intent. A people run's HoldInterrupted leaves that
// call alone (it may still be in flight under the grants job's lock); the
// grants job's next run holds it, and then its grant is never sent again
// by a plain Send.
func TestInterruptedGrantIsHeldByItsJobOnly(t *testing.T) {
	storetest.Each(t, func(t *testing.T, ts storetest.Store) {
		e := newGrantsEnv(t, ts, 2)
		if _, err := ts.St.BeginBatch(t.Context(), store.BatchIntent{
			RunID: e.run(model.JobGrants), Tenant: "acme", Job: model.JobGrants, IdempotencyKey: "k-dead", RequestSHA: "x", ItemCount: 1,
			Grants: []model.Grant{{ExternalID: "E01", Reason: "birthday", Occurrence: "2026", Amount: 25}},
		}); err != nil {
			t.Fatal(err)
		}
		people := e.sender(model.JobPeople, model.InitialGrantReason, true, nil)
		if n, err := people.HoldInterrupted(t.Context()); err != nil || n != 0 {
			t.Errorf("the people sync held %d (%v)", n, err)
		}
		if g := e.grant("E01", "birthday", "2026"); g.State != model.GrantPending {
			t.Errorf("the grants job's call in flight became %s", g.State)
		}
		birthday := e.sender(model.JobGrants, "birthday", false, nil)
		if n, err := birthday.HoldInterrupted(t.Context()); err != nil || n != 1 {
			t.Errorf("the grants job held %d (%v), want 1", n, err)
		}
		calls := e.calls()
		_, err := birthday.Send(t.Context(), e.run(model.JobGrants), e.grants("birthday", "2026", 25, "E01"))
		if !errors.Is(err, store.ErrGrantConflict) || e.calls() != calls {
			t.Errorf("a held grant sent again: %v, %d calls", err, e.calls()-calls)
		}
	})
}

// TestSendRefusesWhatItMustNotSend: a sender of one rule refuses another
// rule's item, and a call never carries the same person twice; both
// before any intent or call.
func TestSendRefusesWhatItMustNotSend(t *testing.T) {
	storetest.Each(t, func(t *testing.T, ts storetest.Store) {
		e := newGrantsEnv(t, ts, 2)
		calls := e.calls()
		birthday := e.sender(model.JobGrants, "birthday", false, nil)
		_, err := birthday.Send(t.Context(), e.run(model.JobGrants), e.grants("anniversary", "2026", 25, "E01"))
		if !errors.Is(err, sender.ErrOutOfScope) {
			t.Errorf("another rule's item: %v, want ErrOutOfScope", err)
		}
		_, err = birthday.Send(t.Context(), e.run(model.JobGrants), e.grants("birthday", "2026", 25, "E01", "E01"))
		if err == nil {
			t.Error("a call with the same person twice was sent")
		}
		if n := e.calls() - calls; n != 0 {
			t.Errorf("%d calls", n)
		}
		j, err := ts.St.Journal(t.Context(), store.JournalFilter{Tenant: "acme", Job: model.JobGrants})
		if err != nil || len(j) != 0 {
			t.Errorf("journal %+v (%v), want no intent", j, err)
		}
	})
}

// TestRefusedTokenStopsTheRemainingCalls: once the platform refuses the
// token, no later call is made; the people not sent are counted as
// skipped, their grants never recorded, and the refused call's grants are
// not applied.
func TestRefusedTokenStopsTheRemainingCalls(t *testing.T) {
	storetest.Each(t, func(t *testing.T, ts storetest.Store) {
		e := newGrantsEnv(t, ts, 8)
		e.fault(emulator.Fault{When: emulator.Before, Status: 401, Count: 1})
		calls := e.calls()
		res, err := e.sender(model.JobGrants, "birthday", false, func(o *sender.Options) { o.BatchSize, o.Concurrency = 2, 1 }).
			Send(t.Context(), e.run(model.JobGrants), e.grants("birthday", "2026", 25, "E01", "E02", "E03", "E04", "E05", "E06", "E07", "E08"))
		if err != nil {
			t.Fatal(err)
		}
		if class, fatal := res.Fatal(); !fatal || class != apiclient.ClassUnauthorized {
			t.Errorf("fatal %q %v, want unauthorized", class, fatal)
		}
		if res.Calls != 1 || res.NotApplied != 2 || res.Skipped != 6 || res.Applied != 0 {
			t.Errorf("result %+v, want one call refused (2 not applied) and 6 skipped", res)
		}
		if n := e.calls() - calls; n != 1 {
			t.Errorf("%d calls reached the platform, want 1", n)
		}
		gs, err := ts.St.ListGrants(t.Context(), store.GrantFilter{Tenant: "acme", Job: model.JobGrants})
		if err != nil || len(gs) != 2 || gs[0].State != model.GrantNotApplied {
			t.Errorf("ledger %+v (%v), want the refused call's 2 grants, not applied", gs, err)
		}
	})
}
