package sender

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"hrsync/api"
	"hrsync/apiclient"
	"hrsync/internal/storetest"
	"hrsync/model"
	"hrsync/store"
)

// fakeCall is one createPeople call the fake platform saw.
type fakeCall struct {
	key string
	ids []string
}

// fakePlatform is a Creator that refuses chosen people the way the
// emulator does: a request holding a poison person is refused with a 400
// naming the first of them ("people[3].addBalance: ..."), one holding a
// huge person with a 413; answer, when set, decides a call first (nil, nil
// lets the rules above decide).
type fakePlatform struct {
	poison, huge map[string]bool
	answer       func(n int, ids []string) ([]api.ReturnedPerson, error)

	mu               sync.Mutex
	calls            []fakeCall
	inFlight, peak   int
	created          map[string]int // externalId → times created
	beforeEachAnswer func(n int)    // called with the call's number (1-based) before it answers
}

func newFakePlatform(poison, huge []string) *fakePlatform {
	set := func(ids []string) map[string]bool {
		m := map[string]bool{}
		for _, id := range ids {
			m[id] = true
		}
		return m
	}
	return &fakePlatform{poison: set(poison), huge: set(huge), created: map[string]int{}}
}

func (f *fakePlatform) CreatePeople(_ context.Context, req api.CreatePeopleRequest, key string) ([]api.ReturnedPerson, error) {
	ids := externalIDs(req.People)
	f.mu.Lock()
	f.calls = append(f.calls, fakeCall{key: key, ids: ids})
	n := len(f.calls)
	f.inFlight++
	f.peak = max(f.peak, f.inFlight)
	hook := f.beforeEachAnswer
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inFlight--
		f.mu.Unlock()
	}()
	if hook != nil {
		hook(n)
	}
	if f.answer != nil {
		if out, err := f.answer(n, ids); out != nil || err != nil {
			return out, err
		}
	}
	for i, id := range ids {
		if f.huge[id] {
			return nil, &apiclient.Error{Op: apiclient.OpCreatePeople, Status: http.StatusRequestEntityTooLarge,
				Code: "payload_too_large", Message: "request body is larger than 8388608 bytes", Outcome: apiclient.OutcomeNotApplied}
		}
		if f.poison[id] {
			return nil, &apiclient.Error{Op: apiclient.OpCreatePeople, Status: http.StatusBadRequest, Code: "invalid_input",
				Message: fmt.Sprintf(`people[%d].addBalance: above the maximum of 1000000, got "%s"`, i, id), Outcome: apiclient.OutcomeNotApplied}
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]api.ReturnedPerson, 0, len(req.People))
	for _, p := range req.People {
		f.created[deref(p.ExternalId)]++
		out = append(out, api.ReturnedPerson{Id: "id-" + deref(p.ExternalId), Email: deref(p.Email)})
	}
	return out, nil
}

// sizes lists the number of people of each call, in order.
func (f *fakePlatform) sizes() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]int, len(f.calls))
	for i, c := range f.calls {
		out[i] = len(c.ids)
	}
	return out
}

// bisectPeople are n new people P01..Pn, with lines 2..n+1, each with an
// initial grant of 10 times their number.
func bisectPeople(n int) List {
	var l List
	for i := 1; i <= n; i++ {
		l = append(l, Item{
			Person: model.Person{ExternalID: fmt.Sprintf("P%02d", i), Email: fmt.Sprintf("p%d@example.com", i),
				FirstName: "F", LastName: "L", Line: i + 1},
			Grant: Grant{Reason: model.InitialGrantReason, Occurrence: "1", AddBalance: float64(10 * i)},
		})
	}
	return l
}

// newPeopleRows are the state rows of new people, saved with their intent.
func newPeopleRows(people []model.Person) []store.PersonRow {
	rows := make([]store.PersonRow, len(people))
	for i, p := range people {
		rows[i] = store.PersonRow{ExternalID: p.ExternalID, Email: p.Email, FirstName: p.FirstName, LastName: p.LastName}
	}
	return rows
}

// sendWith sends items as the people sync does (new people saved with
// their intent) over ts and platform, under a new run.
func sendWith(ctx context.Context, t *testing.T, ts storetest.Store, platform Creator, items Items, mutate func(*Options)) (string, *Result, error) {
	t.Helper()
	opts := Options{Tenant: "acme", CollectionID: "c", Job: model.JobPeople, BatchSize: 10, Concurrency: 1, PersonRows: newPeopleRows}
	if mutate != nil {
		mutate(&opts)
	}
	s, err := New(opts, ts.St, platform, nil)
	if err != nil {
		t.Fatal(err)
	}
	runID := uuid.NewString()
	if err := ts.St.StartRun(t.Context(), store.Run{ID: runID, Job: opts.Job, Tenant: "acme"}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Send(ctx, runID, items)
	return runID, res, err
}

// ledger returns each grant's state by externalId.
func ledger(t *testing.T, ts storetest.Store) map[string]model.Grant {
	t.Helper()
	gs, err := ts.St.ListGrants(t.Context(), store.GrantFilter{Tenant: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]model.Grant{}
	for _, g := range gs {
		out[g.ExternalID] = g
	}
	return out
}

// checkJournal checks that every call has its own journal entry with its
// own Idempotency-Key and its people, each with an outcome (none left
// sent), and returns the entries in journal order.
func checkJournal(t *testing.T, ts storetest.Store, runID string, platform *fakePlatform) []store.JournalEntry {
	t.Helper()
	entries, err := ts.St.Journal(t.Context(), store.JournalFilter{Tenant: "acme", RunID: runID})
	if err != nil {
		t.Fatal(err)
	}
	platform.mu.Lock()
	defer platform.mu.Unlock()
	if len(entries) != len(platform.calls) {
		t.Fatalf("%d journal entries for %d calls", len(entries), len(platform.calls))
	}
	calls := map[string]int{} // Idempotency-Key → people; calls in flight at once may be journaled in either order
	for _, c := range platform.calls {
		if _, twice := calls[c.key]; twice {
			t.Errorf("Idempotency-Key %s sent twice", c.key)
		}
		calls[c.key] = len(c.ids)
	}
	for i, e := range entries {
		if n, ok := calls[e.IdempotencyKey]; !ok || n != e.ItemCount {
			t.Errorf("entry %d: key %s, %d people; the call with that key had %d (made: %v)", i, e.IdempotencyKey, e.ItemCount, n, ok)
		}
		if e.State == store.JournalSent || e.FinishedAt.IsZero() {
			t.Errorf("entry %d has no outcome: %s", i, e.State)
		}
	}
	return entries
}

func TestBisectionIsolatesRefusedPeople(t *testing.T) {
	storetest.Each(t, func(t *testing.T, ts storetest.Store) {
		platform := newFakePlatform([]string{"P08"}, nil)
		runID, res, err := sendWith(t.Context(), t, ts, platform, bisectPeople(10), nil)
		if err != nil {
			t.Fatal(err)
		}
		// 10 refused → 5 ok + 5 refused → 2 ok + 3 refused → 1 (P08) refused + 2 ok.
		if got, want := platform.sizes(), []int{10, 5, 5, 2, 3, 1, 2}; !slices.Equal(got, want) {
			t.Errorf("call sizes %v, want %v", got, want)
		}
		if res.Calls != 7 || res.Applied != 9 || res.Refused != 1 || res.NotApplied != 0 || res.Unknown != 0 || len(res.Failures) != 0 {
			t.Errorf("result %+v", res)
		}
		if res.Granted != 550-80 {
			t.Errorf("granted %g, want %d", res.Granted, 550-80)
		}
		want := Refusal{ExternalID: "P08", Line: 9, Field: "addBalance", Status: 400, Code: "invalid_input",
			Reason: `refused by the platform: 400 invalid_input: addBalance: above the maximum of 1000000, got "…"`}
		if len(res.Refusals) != 1 || res.Refusals[0] != want {
			t.Errorf("refusals %+v, want %+v", res.Refusals, want)
		}
		for id, n := range platform.created {
			if n != 1 || id == "P08" {
				t.Errorf("%s created %d times", id, n)
			}
		}
		entries := checkJournal(t, ts, runID, platform)
		states := make([]store.JournalState, len(entries))
		for i, e := range entries {
			states[i] = e.State
		}
		na, ok := store.JournalNotApplied, store.JournalSucceeded
		if want := []store.JournalState{na, ok, na, ok, na, na, ok}; !slices.Equal(states, want) {
			t.Errorf("journal states %v, want %v", states, want)
		}
		g := ledger(t, ts)
		for id, grant := range g {
			wantState := model.GrantApplied
			if id == "P08" {
				wantState = model.GrantNotApplied
			}
			if grant.State != wantState {
				t.Errorf("grant of %s is %s, want %s", id, grant.State, wantState)
			}
		}
		if p := g["P08"]; p.Attempts != 4 || !strings.Contains(p.LastError, "http 400") {
			t.Errorf("P08's grant: %d attempts, last error %q; want 4 (10, 5, 3, 1) and the 400", p.Attempts, p.LastError)
		}
		// The refused person's grant points at the call that refused them alone.
		call, err := ts.St.GrantCall(t.Context(), g["P08"].Key)
		if err != nil || call.ItemCount != 1 || call.State != store.JournalNotApplied || call.HTTPStatus != 400 {
			t.Errorf("P08's last call: %+v (%v)", call, err)
		}
	})
}

func TestBisectionOfSeveralPoisonsAndA413(t *testing.T) {
	storetest.Each(t, func(t *testing.T, ts storetest.Store) {
		platform := newFakePlatform([]string{"P01", "P02", "P16"}, []string{"P09"})
		runID, res, err := sendWith(t.Context(), t, ts, platform, bisectPeople(20), func(o *Options) {
			o.BatchSize, o.Concurrency = 8, 2
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Applied != 16 || res.Refused != 4 || res.NotApplied != 0 || res.Calls != len(platform.sizes()) {
			t.Fatalf("result %+v, calls %v", res, platform.sizes())
		}
		got := map[string]Refusal{}
		for _, r := range res.Refusals {
			got[r.ExternalID] = r
		}
		if r := got["P09"]; r.Status != 413 || r.Field != "" ||
			r.Reason != "refused by the platform: 413 payload_too_large: request body is larger than 8388608 bytes" {
			t.Errorf("P09: %+v", r)
		}
		for _, id := range []string{"P01", "P02", "P16"} {
			if got[id].Status != 400 || got[id].Field != "addBalance" {
				t.Errorf("%s: %+v", id, got[id])
			}
		}
		if platform.peak > 2 {
			t.Errorf("%d calls in flight at once, want at most 2", platform.peak)
		}
		checkJournal(t, ts, runID, platform)
		for id, g := range ledger(t, ts) {
			if (g.State == model.GrantNotApplied) != (got[id].ExternalID != "") || (g.State != model.GrantApplied && g.State != model.GrantNotApplied) {
				t.Errorf("grant of %s is %s", id, g.State)
			}
		}
	})
}

// TestBisectionStopsAtOtherOutcomes checks what is never split: a refusal
// of the request itself, and, during a bisection, an unknown outcome (held),
// a rate limit (not applied, for the next run) and a refused token (the
// run stops).
func TestBisectionStopsAtOtherOutcomes(t *testing.T) {
	status := func(code int, outcome apiclient.Outcome, msg string) error {
		return &apiclient.Error{Op: apiclient.OpCreatePeople, Status: code, Code: "x", Message: msg, Outcome: outcome}
	}
	for _, c := range []struct {
		name   string
		answer func(n int, ids []string) ([]api.ReturnedPerson, error)
		sizes  []int
		// created, refused, notApplied, unknown people
		counts [4]int
		class  apiclient.Class
		states map[model.GrantState]int
	}{
		{"a refusal naming no person is not split", func(int, []string) ([]api.ReturnedPerson, error) {
			return nil, status(400, apiclient.OutcomeNotApplied, "collectionId is required")
		}, []int{10}, [4]int{0, 0, 10, 0}, apiclient.ClassRefused, map[model.GrantState]int{model.GrantNotApplied: 10}},
		{"an unknown outcome during bisection is held, never split", func(n int, _ []string) ([]api.ReturnedPerson, error) {
			if n == 3 {
				return nil, status(500, apiclient.OutcomeUnknown, "boom")
			}
			return nil, nil
		}, []int{10, 5, 5}, [4]int{5, 0, 0, 5}, apiclient.ClassServerError,
			map[model.GrantState]int{model.GrantApplied: 5, model.GrantUnknown: 5}},
		{"a rate limit during bisection is not split: the next run sends them", func(n int, _ []string) ([]api.ReturnedPerson, error) {
			if n == 3 {
				return nil, status(429, apiclient.OutcomeNotApplied, "slow down")
			}
			return nil, nil
		}, []int{10, 5, 5}, [4]int{5, 0, 5, 0}, apiclient.ClassRateLimited,
			map[model.GrantState]int{model.GrantApplied: 5, model.GrantNotApplied: 5}},
		{"a refused token during bisection stops it", func(n int, _ []string) ([]api.ReturnedPerson, error) {
			if n == 2 {
				return nil, status(401, apiclient.OutcomeNotApplied, "who are you")
			}
			return nil, nil
		}, []int{10, 5}, [4]int{0, 0, 10, 0}, apiclient.ClassUnauthorized, map[model.GrantState]int{model.GrantNotApplied: 10}},
	} {
		t.Run(c.name, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, ts storetest.Store) {
				platform := newFakePlatform([]string{"P07"}, nil)
				platform.answer = c.answer
				runID, res, err := sendWith(t.Context(), t, ts, platform, bisectPeople(10), nil)
				if err != nil {
					t.Fatal(err)
				}
				if got := platform.sizes(); !slices.Equal(got, c.sizes) {
					t.Errorf("call sizes %v, want %v", got, c.sizes)
				}
				if got := [4]int{res.Applied, res.Refused, res.NotApplied, res.Unknown}; got != c.counts {
					t.Errorf("created, refused, not applied, unknown = %v, want %v", got, c.counts)
				}
				if res.Calls != len(c.sizes) || res.Failures[c.class] != 1 || len(res.Failures) != 1 {
					t.Errorf("calls %d, failures %v; want %d and one %s", res.Calls, res.Failures, len(c.sizes), c.class)
				}
				states := map[model.GrantState]int{}
				for _, g := range ledger(t, ts) {
					states[g.State]++
				}
				if !mapsEqual(states, c.states) {
					t.Errorf("grant states %v, want %v", states, c.states)
				}
				checkJournal(t, ts, runID, platform)
			})
		})
	}
}

func mapsEqual[K comparable, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestBisectionStopsWhenCancelled cancels the send while a bisection is
// under way: the call in flight finishes and its outcome is committed, no
// new call starts, and the people not sent again keep their not-applied
// grant, so the next run sends them; nothing is left pending.
func TestBisectionStopsWhenCancelled(t *testing.T) {
	storetest.Each(t, func(t *testing.T, ts storetest.Store) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		platform := newFakePlatform([]string{"P08"}, nil)
		platform.beforeEachAnswer = func(n int) {
			if n == 3 { // the second half of the first split is in flight
				cancel()
			}
		}
		runID, res, err := sendWith(ctx, t, ts, platform, bisectPeople(10), nil)
		if err != nil || ctx.Err() == nil {
			t.Fatalf("err %v, context %v: want no state error, and the send cancelled", err, ctx.Err())
		}
		if got := platform.sizes(); !slices.Equal(got, []int{10, 5, 5}) {
			t.Errorf("call sizes %v, want [10 5 5]: no call after the cancel", got)
		}
		if res.Applied != 5 || res.NotApplied != 5 || res.Refused != 0 {
			t.Errorf("result %+v", res)
		}
		checkJournal(t, ts, runID, platform)
		states := map[model.GrantState]int{}
		for _, g := range ledger(t, ts) {
			states[g.State]++
		}
		if want := map[model.GrantState]int{model.GrantApplied: 5, model.GrantNotApplied: 5}; !mapsEqual(states, want) {
			t.Errorf("grant states %v, want %v", states, want)
		}
	})
}

func TestSplittableAndRefusalReason(t *testing.T) {
	refusal := func(status int, msg string) *apiclient.Error {
		return &apiclient.Error{Status: status, Code: "invalid_input", Message: msg, Outcome: apiclient.OutcomeNotApplied}
	}
	for _, c := range []struct {
		name      string
		err       *apiclient.Error
		split     bool
		field     string
		reasonHas string
	}{
		{"a person's field", refusal(400, "people[12].addBalance: above the maximum of 5"), true, "addBalance",
			"refused by the platform: 400 invalid_input: addBalance: above the maximum of 5"},
		{"a person without a field", refusal(422, "people[0]: want an object"), true, "", "422 invalid_input: people[0]: want an object"},
		{"the request's own field", refusal(400, "collectionId is required"), false, "", ""},
		{"people without an index", refusal(400, "people: want at least one person"), false, "", ""},
		{"a 413 names nobody but is about size", refusal(413, "too big"), true, "", "413 invalid_input: too big"},
		{"a 404 is never split", refusal(404, "people[0].x"), false, "", ""},
		{"a 400 whose outcome is unknown is never split",
			&apiclient.Error{Status: 400, Message: "people[0].x: y", Outcome: apiclient.OutcomeUnknown}, false, "", ""},
		{"an echoed value is masked", refusal(400, `people[0].birthDate: want a date, got "1990-13-45"`), true, "birthDate",
			`birthDate: want a date, got "…"`},
		{"an unclosed quote is masked to the end", refusal(400, `people[0].email: got "a@b.c`), true, "email", `email: got "…`},
		{"a long message is cut", refusal(400, "people[0].lastName: "+strings.Repeat("x", 500)), true, "lastName", "xxx…"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := splittable(c.err); got != c.split {
				t.Fatalf("splittable = %v, want %v", got, c.split)
			}
			if !c.split {
				return
			}
			r := refusalOf(model.Person{ExternalID: "E1", Line: 3}, c.err)
			if r.Field != c.field || !strings.Contains(r.Reason, c.reasonHas) || len([]rune(r.Reason)) > maxReason {
				t.Errorf("refusal %+v; want field %q and a reason of at most %d characters with %q", r, c.field, maxReason, c.reasonHas)
			}
			if strings.Contains(r.Reason, "1990-13-45") || strings.Contains(r.Reason, "a@b.c") {
				t.Errorf("a refused value reached the reason: %q", r.Reason)
			}
		})
	}
}
