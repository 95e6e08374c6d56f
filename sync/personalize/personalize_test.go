package personalize_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"hrsync/api"
	"hrsync/apiclient"
	"hrsync/emulator"
	"hrsync/internal/runner"
	"hrsync/model"
	"hrsync/sources"
	"hrsync/store"
	"hrsync/sync/personalize"
)

const (
	tenant  = "acme"
	token   = "job-test-token"
	company = emulator.DatasetCompanyID
)

// today is the fixed "now" of these tests.
const todayText = "2025-06-15T10:00:00Z"

var today = mustTime(todayText)

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// export is a last good export held in memory.
type export struct {
	name    string
	people  []model.Person
	rejects []model.Rejection
}

func (e *export) Name() string { return e.name }

func (e *export) Read(_ context.Context, h sources.Handler) (sources.Stats, error) {
	st := sources.Stats{}
	for _, p := range e.people {
		st.Rows++
		st.Accepted++
		if err := h.Accept(p); err != nil {
			return st, err
		}
	}
	for _, r := range e.rejects {
		st.Rows++
		st.Rejected++
		if err := h.Reject(r); err != nil {
			return st, err
		}
	}
	return st, nil
}

func (e *export) last(context.Context) (sources.Source, bool, error) { return e, e != nil, nil }

// fakeAPI is a Personalizer whose answers a test chooses.
type fakeAPI struct {
	personalize func(ctx context.Context, collectionID string, req api.PersonalizeRequest) (*api.PersonalizationResult, error)
}

func (f fakeAPI) Personalize(ctx context.Context, collectionID string, req api.PersonalizeRequest) (*api.PersonalizationResult, error) {
	return f.personalize(ctx, collectionID, req)
}

// hire is new hire number i, starting around today.
func hire(i int) model.Person {
	return model.Person{
		ExternalID: fmt.Sprintf("H%03d", i), Email: fmt.Sprintf("h%03d@example.test", i),
		FirstName: "Ada", LastName: fmt.Sprintf("Testwell%d", i), Department: "Engineering", Location: "Lisbon",
		StartDate: time.Date(2025, 6, 10+i%30, 0, 0, 0, 0, time.UTC), // June 10 to July 9: in the window
		BirthDate: time.Date(1990, time.Month(1+i%12), 1+i%28, 0, 0, 0, 0, time.UTC),
	}
}

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "state.db"), store.Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// sync records people as the people sync would (created, active).
func syncPeople(t *testing.T, st *store.Store, people ...model.Person) {
	t.Helper()
	rows := make([]store.PersonRow, 0, len(people))
	for _, p := range people {
		rows = append(rows, store.PersonRow{ExternalID: p.ExternalID, Email: p.Email, FirstName: p.FirstName,
			LastName: p.LastName, Department: p.Department, Location: p.Location, StartDate: p.StartDate,
			RemoteID: "remote-" + p.ExternalID, Fingerprint: 1})
	}
	if err := st.SavePeople(t.Context(), tenant, rows); err != nil {
		t.Fatal(err)
	}
}

// emulatorClient serves an in-process emulator on a loopback port and
// returns it with a real client.
func emulatorClient(t *testing.T) (*emulator.Emulator, *apiclient.Client) {
	t.Helper()
	emu, err := emulator.New(emulator.Options{
		Tokens:           map[string][]string{token: nil},
		PersonalizeDelay: &emulator.DelayRange{Min: time.Millisecond, Max: 3 * time.Millisecond},
		Clock:            func() time.Time { return today },
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(emu)
	t.Cleanup(srv.Close)
	c, err := apiclient.New(apiclient.Config{BaseURL: srv.URL, Token: token, RatePerSecond: math.Inf(1), MaxConcurrency: 16})
	if err != nil {
		t.Fatal(err)
	}
	return emu, c
}

func personalizeCalls(emu *emulator.Emulator) int {
	n := 0
	for _, r := range emu.Requests() {
		if r.OperationID == string(apiclient.OpPersonalize) {
			n++
		}
	}
	return n
}

func newJob(t *testing.T, opts personalize.Options, st *store.Store, p personalize.Personalizer, ex *export) *personalize.Job {
	t.Helper()
	opts.Tenant, opts.CompanyID = tenant, company
	if opts.WindowBefore == 0 {
		opts.WindowBefore = 30 * 24 * time.Hour
	}
	if opts.WindowAfter == 0 {
		opts.WindowAfter = 7 * 24 * time.Hour
	}
	if opts.Now == nil {
		opts.Now = func() time.Time { return today }
	}
	j, err := personalize.New(opts, st, p, ex.last, nil)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func rows(t *testing.T, st *store.Store) map[store.PersonalizationKey]store.Personalization {
	t.Helper()
	got, err := st.Personalizations(t.Context(), tenant)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func key(ext, coll string) store.PersonalizationKey {
	return store.PersonalizationKey{ExternalID: ext, CollectionID: coll}
}

func TestInWindow(t *testing.T) {
	start := time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC)
	before, after := 30*24*time.Hour, 7*24*time.Hour
	cases := []struct {
		name  string
		today time.Time
		want  bool
	}{
		{"the first day of the window", time.Date(2025, 6, 1, 23, 59, 0, 0, time.UTC), true},
		{"the day before the window", time.Date(2025, 5, 31, 23, 59, 0, 0, time.UTC), false},
		{"the start date", start, true},
		{"the last day after the start", time.Date(2025, 7, 8, 0, 0, 0, 0, time.UTC), true},
		{"the day after the window", time.Date(2025, 7, 9, 0, 0, 0, 0, time.UTC), false},
		{"a time of day in another zone counts by its UTC day", time.Date(2025, 7, 9, 1, 0, 0, 0, time.FixedZone("x", 2*3600)), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := personalize.InWindow(start, c.today, before, after); got != c.want {
				t.Errorf("InWindow(%s) = %v, want %v", c.today, got, c.want)
			}
		})
	}
	t.Run("no start date is never in the window", func(t *testing.T) {
		if personalize.InWindow(time.Time{}, start, before, after) {
			t.Error("zero start date in window")
		}
	})
}

func TestFingerprint(t *testing.T) {
	base := hire(1)
	t.Run("the same fields give the same fingerprint", func(t *testing.T) {
		again := base
		again.Email, again.Line = "other@example.test", 99 // not a personalization field
		if personalize.Fingerprint(base) != personalize.Fingerprint(again) {
			t.Error("fingerprint depends on fields that are not sent")
		}
	})
	changes := map[string]func(p *model.Person){
		"firstName":  func(p *model.Person) { p.FirstName = "Bea" },
		"lastName":   func(p *model.Person) { p.LastName = "Other" },
		"department": func(p *model.Person) { p.Department = "Sales" },
		"location":   func(p *model.Person) { p.Location = "Osaka" },
		"startDate":  func(p *model.Person) { p.StartDate = p.StartDate.AddDate(0, 0, 1) },
		"birthDate":  func(p *model.Person) { p.BirthDate = p.BirthDate.AddDate(0, 0, 1) },
		"fields do not run into each other": func(p *model.Person) {
			p.FirstName, p.LastName = p.FirstName+p.LastName[:1], p.LastName[1:]
		},
	}
	for name, change := range changes {
		t.Run(name+" changes it", func(t *testing.T) {
			p := base
			change(&p)
			if personalize.Fingerprint(p) == personalize.Fingerprint(base) {
				t.Error("fingerprint did not change")
			}
		})
	}
	t.Run("the request carries exactly the fingerprinted fields", func(t *testing.T) {
		req := personalize.Request(company, base)
		sf := req.SourceFields
		if req.CompanyId != company || *sf.FirstName != base.FirstName || *sf.LastName != base.LastName ||
			*sf.Department != base.Department || *sf.Location != base.Location ||
			!sf.StartDate.Equal(base.StartDate) || !sf.BirthDate.Equal(base.BirthDate) {
			t.Errorf("request %+v", req)
		}
		empty := personalize.Request(company, model.Person{FirstName: "Ada"})
		if empty.SourceFields.LastName != nil || empty.SourceFields.StartDate != nil || empty.SourceFields.BirthDate != nil {
			t.Errorf("empty fields are sent: %+v", empty.SourceFields)
		}
	})
}

func TestRunAgainstEmulator(t *testing.T) {
	emu, client := emulatorClient(t)
	st := openStore(t)
	coll := emulator.PersonalizableCollectionID
	var hires []model.Person
	for i := range 12 {
		hires = append(hires, hire(i))
	}
	old := hire(50)
	old.StartDate = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC) // long started: out of the window
	unsynced, departed := hire(60), hire(61)
	syncPeople(t, st, append(append([]model.Person{}, hires...), old, departed)...)
	if err := st.MarkDeparted(t.Context(), tenant, []string{departed.ExternalID}, today); err != nil {
		t.Fatal(err)
	}
	ex := &export{name: "staff.csv", people: append(append([]model.Person{}, hires...), old, unsynced, departed),
		rejects: []model.Rejection{{Source: "staff.csv", Line: 40, Field: "email", Reason: "invalid"}}}
	job := newJob(t, personalize.Options{Collections: []string{coll}, Concurrency: 4}, st, client, ex)

	t.Run("the plan lists the new hires only", func(t *testing.T) {
		plan, err := job.BuildPlan(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if plan.Source != "staff.csv" || plan.InWindow != 14 || plan.NotSynced != 2 || len(plan.Items) != 12 {
			t.Fatalf("plan: source %q, %d in window, %d not synced, %d items", plan.Source, plan.InWindow, plan.NotSynced, len(plan.Items))
		}
		for i, it := range plan.Items {
			if it.ExternalID != hires[i].ExternalID || it.CollectionID != coll || it.Reason != personalize.ReasonNew {
				t.Errorf("item %d: %+v", i, it)
			}
		}
		if n := personalizeCalls(emu); n != 0 {
			t.Errorf("planning made %d calls", n)
		}
	})
	t.Run("a run personalizes every new hire and stores the fields as returned, without the birth group", func(t *testing.T) {
		rep, err := job.RunOnce(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if rep.Outcome() != model.OutcomeOK || rep.Counts["done"] != 12 || rep.Counts["calls"] != 24 {
			t.Fatalf("report %+v", rep)
		}
		got := rows(t, st)
		if len(got) != 12 {
			t.Fatalf("%d rows stored, want 12", len(got))
		}
		for _, p := range hires {
			r := got[key(p.ExternalID, coll)]
			answer, err := client.Personalize(t.Context(), coll, personalize.Request(company, p))
			if err != nil {
				t.Fatal(err)
			}
			if answer.Fields.Birth == nil {
				t.Fatalf("%s: the platform answered no birth group: the test would not see it dropped", p.ExternalID)
			}
			kept := answer.Fields
			kept.Birth = nil // derived from the birth date: never stored
			want, _ := json.Marshal(kept)
			if r.State != store.PersonalizationDone || r.PlatformStatus != "Done" || r.Sha != answer.Sha ||
				r.Attempts != 2 || r.DoneAt.IsZero() || !sameJSON(t, r.Fields, want) {
				t.Errorf("%s: stored %+v\nplatform answered %s %s", p.ExternalID, r, answer.Sha, want)
			}
		}
		var f api.PersonalizationFields
		if err := json.Unmarshal(got[key("H003", coll)].Fields, &f); err != nil || f.Work == nil || *f.Work.Department != "Engineering" {
			t.Errorf("stored fields do not hold the department: %s", got[key("H003", coll)].Fields)
		}
	})
	t.Run("a rerun makes no call", func(t *testing.T) {
		emu.ClearRequests()
		rep, err := job.RunOnce(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if n := personalizeCalls(emu); n != 0 || rep.Counts["unchanged"] != 12 {
			t.Errorf("rerun made %d calls; report %+v", n, rep.Counts)
		}
	})
	t.Run("a changed department re-personalizes exactly that person", func(t *testing.T) {
		emu.ClearRequests()
		before := rows(t, st)
		ex.people[3].Department = "Finance"
		rep, err := job.RunOnce(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if n := personalizeCalls(emu); n != 2 || rep.Counts["plannedChanged"] != 1 || rep.Counts["done"] != 1 {
			t.Errorf("%d calls; report %+v", n, rep.Counts)
		}
		after := rows(t, st)
		for k, b := range before {
			a := after[k]
			if k.ExternalID == "H003" {
				if a.Sha == b.Sha || a.Fingerprint == b.Fingerprint || !strings.Contains(string(a.Fields), "Finance") {
					t.Errorf("H003 not re-personalized: %+v", a)
				}
				continue
			}
			if !reflect.DeepEqual(a, b) {
				t.Errorf("%s changed: %+v -> %+v", k.ExternalID, b, a)
			}
		}
	})
}

func TestRefusedCollection(t *testing.T) {
	emu, client := emulatorClient(t)
	st := openStore(t)
	hires := []model.Person{hire(1), hire(2), hire(3)}
	syncPeople(t, st, hires...)
	now := today
	plain, good := emulator.PlainCollectionID, emulator.PersonalizableCollectionID
	job := newJob(t, personalize.Options{Collections: []string{plain, good}, Concurrency: 1,
		RecheckRefused: time.Hour, Now: func() time.Time { return now }}, st, client, &export{name: "x.csv", people: hires})

	t.Run("a 422 is reported once and its collection skipped", func(t *testing.T) {
		rep, err := job.RunOnce(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Refused) != 1 || rep.Refused[0].CollectionID != plain || rep.Outcome() != model.OutcomeAttention {
			t.Fatalf("refused %+v, outcome %s", rep.Refused, rep.Outcome())
		}
		if rep.Counts["done"] != 3 {
			t.Errorf("the good collection was not done for everyone: %+v", rep.Counts)
		}
		got := rows(t, st)
		for k := range got {
			if k.CollectionID == plain {
				t.Errorf("a row was stored for the refused collection: %+v", k)
			}
		}
		// One worker: the refusal was known before the next person's turn.
		if n := personalizeCalls(emu); n != 1+2*3 {
			t.Errorf("%d calls, want 1 refused and 6 for the good collection", n)
		}
	})
	t.Run("the next run does not call it and does not report it again", func(t *testing.T) {
		emu.ClearRequests()
		rep, err := job.RunOnce(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if n := personalizeCalls(emu); n != 0 || len(rep.Refused) != 0 || rep.Outcome() != model.OutcomeOK || rep.Counts["refusedCollections"] != 1 {
			t.Errorf("%d calls, refused %+v, outcome %s, counts %+v", n, rep.Refused, rep.Outcome(), rep.Counts)
		}
	})
	t.Run("after the recheck wait one run tries it again", func(t *testing.T) {
		emu.ClearRequests()
		now = today.Add(2 * time.Hour)
		rep, err := job.RunOnce(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if n := personalizeCalls(emu); n != 1 || len(rep.Refused) != 1 {
			t.Errorf("%d calls, refused %+v", n, rep.Refused)
		}
	})
}

// TestRunFailsWhenNoCallCanSucceed checks the outcome model: a refused
// token stops the run at its first answer, and a run none of whose calls
// reached the platform is failed, not attention; a 5xx on every call stays
// attention (the platform may have acted; the items wait for a retry).
func TestRunFailsWhenNoCallCanSucceed(t *testing.T) {
	coll := "coll-1"
	people := []model.Person{hire(1), hire(2), hire(3)}
	for _, c := range []struct {
		name      string
		err       *apiclient.Error
		outcome   model.RunOutcome
		calls     int32
		errorSays string
	}{
		{"refused token", &apiclient.Error{Op: apiclient.OpPersonalize, Status: 401, Code: "unauthorized", Outcome: apiclient.OutcomeNotApplied},
			model.OutcomeFailed, 1, "401 unauthorized"},
		{"refused company", &apiclient.Error{Op: apiclient.OpPersonalize, Status: 403, Code: "forbidden", Outcome: apiclient.OutcomeNotApplied},
			model.OutcomeFailed, 1, "403 forbidden"},
		{"not reached", &apiclient.Error{Op: apiclient.OpPersonalize, Outcome: apiclient.OutcomeNotApplied, Err: errors.New("connect: connection refused")},
			model.OutcomeFailed, 3, "could not be reached on every personalize call of the run (3)"},
		{"5xx on every call", &apiclient.Error{Op: apiclient.OpPersonalize, Status: 500, Outcome: apiclient.OutcomeUnknown},
			model.OutcomeAttention, 3, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var calls atomic.Int32
			fake := fakeAPI{personalize: func(context.Context, string, api.PersonalizeRequest) (*api.PersonalizationResult, error) {
				calls.Add(1)
				return nil, c.err
			}}
			st := openStore(t)
			syncPeople(t, st, people...)
			job := newJob(t, personalize.Options{Collections: []string{coll}, Concurrency: 1, Now: func() time.Time { return today }},
				st, fake, &export{name: "x.csv", people: people})
			rep, err := job.RunOnce(t.Context())
			if rep.Outcome() != c.outcome || calls.Load() != c.calls {
				t.Fatalf("outcome %s after %d calls (err %v); want %s after %d", rep.Outcome(), calls.Load(), err, c.outcome, c.calls)
			}
			if c.errorSays != "" && (err == nil || !strings.Contains(rep.Error, c.errorSays)) {
				t.Errorf("error %v, report error %q; want it to say %q", err, rep.Error, c.errorSays)
			}
		})
	}
}

func TestFailuresAndStatuses(t *testing.T) {
	coll := "coll-1"
	p := hire(1)
	now := today
	var calls atomic.Int32
	answer := func(ctx context.Context, c string, req api.PersonalizeRequest) (*api.PersonalizationResult, error) {
		return nil, errors.New("unset")
	}
	fake := fakeAPI{personalize: func(ctx context.Context, c string, req api.PersonalizeRequest) (*api.PersonalizationResult, error) {
		calls.Add(1)
		return answer(ctx, c, req)
	}}
	st := openStore(t)
	syncPeople(t, st, p)
	job := newJob(t, personalize.Options{Collections: []string{coll}, MaxAttempts: 3, RetryBackoff: time.Minute,
		MaxBackoff: 90 * time.Second, Now: func() time.Time { return now }}, st, fake, &export{name: "x.csv", people: []model.Person{p}})
	serverError := &apiclient.Error{Op: apiclient.OpPersonalize, Status: 500, Code: "internal_error",
		Message: "birth date 1990-02-02 is odd", Outcome: apiclient.OutcomeUnknown}
	run := func(t *testing.T) *personalize.Report {
		t.Helper()
		calls.Store(0)
		rep, err := job.RunOnce(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}

	t.Run("a failed call waits for its retry, without the platform's message", func(t *testing.T) {
		answer = func(context.Context, string, api.PersonalizeRequest) (*api.PersonalizationResult, error) {
			return nil, serverError
		}
		rep := run(t)
		r := rows(t, st)[key(p.ExternalID, coll)]
		if rep.Outcome() != model.OutcomeAttention || rep.Counts["retry"] != 1 || calls.Load() != 1 {
			t.Fatalf("report %+v, %d calls", rep.Counts, calls.Load())
		}
		if r.State != store.PersonalizationRetry || r.Failures != 1 || r.Attempts != 1 || !r.NextAttemptAt.Equal(now.Add(time.Minute)) {
			t.Errorf("row %+v", r)
		}
		if !strings.Contains(r.LastError, "status 500") || strings.Contains(r.LastError, "1990") {
			t.Errorf("last error %q: want the status, not the message", r.LastError)
		}
	})
	t.Run("no call before the retry is due", func(t *testing.T) {
		rep := run(t)
		if calls.Load() != 0 || rep.Counts["waiting"] != 1 {
			t.Errorf("%d calls, report %+v", calls.Load(), rep.Counts)
		}
	})
	t.Run("the wait doubles, up to the maximum", func(t *testing.T) {
		now = now.Add(time.Minute)
		run(t)
		r := rows(t, st)[key(p.ExternalID, coll)]
		if r.Failures != 2 || !r.NextAttemptAt.Equal(now.Add(90*time.Second)) {
			t.Errorf("row %+v", r)
		}
	})
	t.Run("at the attempt limit it is left for an operator", func(t *testing.T) {
		now = now.Add(2 * time.Minute)
		rep := run(t)
		r := rows(t, st)[key(p.ExternalID, coll)]
		if r.State != store.PersonalizationFailed || r.Failures != 3 || len(rep.GaveUp) != 1 || rep.GaveUp[0].ExternalID != p.ExternalID {
			t.Fatalf("row %+v, gave up %+v", r, rep.GaveUp)
		}
		now = now.Add(24 * time.Hour)
		rep = run(t)
		if calls.Load() != 0 || rep.Counts["leftForOperator"] != 1 || rep.Outcome() != model.OutcomeAttention {
			t.Errorf("a failed personalization was called again: %d calls, %+v", calls.Load(), rep.Counts)
		}
	})
	t.Run("changed fields start again; a second Pending is left for the next run", func(t *testing.T) {
		answer = func(context.Context, string, api.PersonalizeRequest) (*api.PersonalizationResult, error) {
			return &api.PersonalizationResult{Sha: "s1", Status: api.ProcessingStatusPending}, nil
		}
		job := newJob(t, personalize.Options{Collections: []string{coll}, MaxAttempts: 3, Now: func() time.Time { return now }},
			st, fake, &export{name: "y.csv", people: []model.Person{func() model.Person { q := p; q.Location = "Osaka"; return q }()}})
		calls.Store(0)
		rep, err := job.RunOnce(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		r := rows(t, st)[key(p.ExternalID, coll)]
		if calls.Load() != 2 || rep.Counts["pending"] != 1 || r.State != store.PersonalizationPending ||
			r.Attempts != 2 || r.Failures != 0 || r.LastError != "" || r.Sha != "s1" {
			t.Fatalf("%d calls, report %+v, row %+v", calls.Load(), rep.Counts, r)
		}
		calls.Store(0)
		answer = func(context.Context, string, api.PersonalizeRequest) (*api.PersonalizationResult, error) {
			return &api.PersonalizationResult{Sha: "s1", Status: api.ProcessingStatusError}, nil
		}
		rep, err = job.RunOnce(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		r = rows(t, st)[key(p.ExternalID, coll)]
		if calls.Load() != 1 || rep.Counts["unusable"] != 1 || r.State != store.PersonalizationError || rep.Outcome() != model.OutcomeAttention {
			t.Fatalf("%d calls, report %+v, row %+v", calls.Load(), rep.Counts, r)
		}
		calls.Store(0)
		rep, err = job.RunOnce(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if calls.Load() != 0 || rep.Counts["knownUnusable"] != 1 || rep.Outcome() != model.OutcomeOK {
			t.Errorf("unusable fields were sent again or reported again: %d calls, %+v, %s", calls.Load(), rep.Counts, rep.Outcome())
		}
	})
}

func TestLockAndStop(t *testing.T) {
	st := openStore(t)
	hires := []model.Person{hire(1), hire(2), hire(3), hire(4)}
	syncPeople(t, st, hires...)
	started := make(chan struct{}, len(hires))
	fake := fakeAPI{personalize: func(ctx context.Context, _ string, _ api.PersonalizeRequest) (*api.PersonalizationResult, error) {
		started <- struct{}{}
		<-ctx.Done()
		return nil, &apiclient.Error{Op: apiclient.OpPersonalize, Err: ctx.Err()}
	}}
	job := newJob(t, personalize.Options{Collections: []string{"c"}, Concurrency: 2}, st, fake, &export{name: "x.csv", people: hires})

	t.Run("a second run of the tenant finds the lock held", func(t *testing.T) {
		release, err := st.TryLock(t.Context(), "personalize-"+tenant)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = release() }()
		if _, err := job.RunOnce(t.Context()); !errors.Is(err, personalize.ErrLocked) {
			t.Errorf("error = %v, want ErrLocked", err)
		}
	})
	t.Run("a cancelled run commits nothing and is recorded interrupted", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-started
			<-started
			cancel()
		}()
		rep, err := job.RunOnce(ctx)
		wg.Wait()
		if !errors.Is(err, context.Canceled) || !errors.Is(err, runner.ErrCut) || rep.Outcome() != model.OutcomeInterrupted || rep.Counts["stopped"] != 4 {
			t.Fatalf("error %v, report %+v", err, rep)
		}
		if got := rows(t, st); len(got) != 0 {
			t.Errorf("a stopped run committed %d rows", len(got))
		}
		runs, err := st.LastRuns(t.Context(), 1)
		if err != nil || len(runs) != 1 || runs[0].Job != model.JobPersonalize || runs[0].Outcome != model.OutcomeInterrupted || runs[0].Error != runner.ErrCut.Error() || runs[0].SourceRows != nil {
			t.Errorf("run record %+v, %v", runs, err)
		}
	})
}

func TestNoExportAndDisabled(t *testing.T) {
	st := openStore(t)
	fake := fakeAPI{personalize: func(context.Context, string, api.PersonalizeRequest) (*api.PersonalizationResult, error) {
		t.Error("called without an export")
		return nil, errors.New("unexpected")
	}}
	t.Run("no good export yet: nothing to do", func(t *testing.T) {
		var none *export
		job := newJob(t, personalize.Options{Collections: []string{"c"}}, st, fake, none)
		rep, err := job.RunOnce(t.Context())
		if err != nil || rep.Outcome() != model.OutcomeOK || rep.Source != "" {
			t.Errorf("report %+v, error %v", rep, err)
		}
	})
	t.Run("no collections: the job is disabled and records no run", func(t *testing.T) {
		job := newJob(t, personalize.Options{}, st, fake, &export{name: "x.csv", people: []model.Person{hire(1)}})
		if job.Enabled() {
			t.Fatal("enabled without collections")
		}
		if _, err := job.RunOnce(t.Context()); err != nil {
			t.Fatal(err)
		}
		runs, err := st.LastRuns(t.Context(), 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			if r.Job == model.JobPersonalize && r.Counts["planned"] != 0 {
				t.Errorf("disabled job recorded %+v", r)
			}
		}
	})
	t.Run("bad options are refused", func(t *testing.T) {
		for name, o := range map[string]personalize.Options{
			"no tenant":            {CompanyID: company, Collections: []string{"c"}},
			"duplicate collection": {Tenant: tenant, CompanyID: company, Collections: []string{"c", "c"}},
			"negative window":      {Tenant: tenant, CompanyID: company, WindowBefore: -time.Hour},
		} {
			if _, err := personalize.New(o, st, fake, (&export{}).last, nil); err == nil {
				t.Errorf("%s: accepted", name)
			}
		}
	})
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("decode %s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}
