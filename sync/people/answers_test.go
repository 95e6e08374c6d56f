package people_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"hrsync/api"
	"hrsync/emulator"
	"hrsync/internal/emutest"
	"hrsync/model"
	"hrsync/sync/people"
	"hrsync/sync/sender"
)

// newHire is a person added to an export so that its content differs from
// the last one (the same content again is a duplicate, and sends nothing).
func newHire() person {
	return person{id: "000099", email: "n@example.com", first: "N", last: "N", start: "2026-11-01"}
}

// rewrite changes the people of a createPeople answer.
type rewrite func(got []api.ReturnedPerson) []api.ReturnedPerson

// rewriting serves next, but answers createPeople with the people rewrite
// makes of next's answer: the platform applied the call, and its answer
// makes no sense.
func rewriting(t *testing.T, next http.Handler, fn rewrite) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/ext/v1/people" {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if rec.Code == http.StatusCreated || rec.Code == http.StatusOK {
			var got []api.ReturnedPerson
			if err := json.Unmarshal(body, &got); err != nil {
				t.Errorf("emulator's createPeople answer: %v", err)
			}
			var err error
			if body, err = json.Marshal(fn(got)); err != nil {
				t.Errorf("encode rewritten answer: %v", err)
			}
		}
		maps.Copy(w.Header(), rec.Header())
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	})
}

// answerEnv is env with a platform whose createPeople answers are rewritten
// (and still checked against the contract); logs holds the last run's lines.
type answerEnv struct {
	*env
	logs *observer.ObservedLogs
}

func newAnswerEnv(t *testing.T, fn rewrite) *answerEnv {
	t.Helper()
	e := newEnv(t)
	return serve(t, e, emutest.Validated(t, rewriting(t, e.emu, fn)))
}

// serve points e's client at a loopback server of h.
func serve(t *testing.T, e *env, h http.Handler) *answerEnv {
	t.Helper()
	e.client = emutest.Client(t, h)
	return &answerEnv{env: e}
}

func (a *answerEnv) run(trust bool, rows []person, name string) *people.Report {
	a.t.Helper()
	core, logs := observer.New(zap.DebugLevel)
	a.logs = logs
	j, err := people.New(people.Options{
		Tenant: "acme", CompanyID: emulator.DatasetCompanyID, CollectionID: emulator.PlainCollectionID,
		BatchSize: 3, Concurrency: 1, DefaultBalance: 10, Safeguards: people.DefaultSafeguards(),
		TrustIdempotencyKey: trust,
	}, a.st, sender.NewJournal(a.st), a.client, zap.New(core))
	if err != nil {
		a.t.Fatal(err)
	}
	rep, err := j.RunOnce(a.t.Context(), feed(a.export(name, rows)), people.RunFlags{})
	if err != nil {
		a.t.Fatalf("run: %v", err)
	}
	return rep
}

// platformIDs returns the emulator's id per externalId of the company.
func (a *answerEnv) platformIDs() map[string]string {
	out := map[string]string{}
	for _, c := range a.emu.State().Companies {
		if c.ID != emulator.DatasetCompanyID {
			continue
		}
		for _, p := range c.People {
			if p.ExternalID != "" {
				out[p.ExternalID] = p.ID
			}
		}
	}
	return out
}

func (a *answerEnv) remoteID(ext string) string {
	a.t.Helper()
	p, ok, err := a.st.Person(a.t.Context(), "acme", ext)
	if err != nil || !ok {
		a.t.Fatalf("person %s: found %v, %v", ext, ok, err)
	}
	return p.RemoteID
}

// heldIDs returns the externalIds whose grants are held as unknown.
func (a *answerEnv) heldIDs() []string {
	var ids []string
	for _, g := range a.grants(model.GrantUnknown) {
		ids = append(ids, g.ExternalID)
	}
	return ids
}

// warning returns the one warning about unaccounted people, and checks that
// no log line of the run holds an e-mail address.
func (a *answerEnv) warning() map[string]any {
	a.t.Helper()
	var found []map[string]any
	for _, entry := range a.logs.All() {
		b, err := json.Marshal(entry.ContextMap())
		if err != nil {
			a.t.Fatal(err)
		}
		if bytes.Contains(b, []byte("@")) || strings.Contains(entry.Message, "@") {
			a.t.Errorf("log line holds an e-mail: %s %s", entry.Message, b)
		}
		if strings.Contains(entry.Message, "did not account for every person") {
			if entry.Level != zap.WarnLevel {
				a.t.Errorf("level %s, want warn", entry.Level)
			}
			found = append(found, entry.ContextMap())
		}
	}
	if len(found) != 1 {
		a.t.Fatalf("%d warnings about unaccounted people, want 1", len(found))
	}
	return found[0]
}

func TestAnswerAccountingForNobodyHoldsEveryGrant(t *testing.T) {
	// The platform creates the people but answers with e-mails nobody sent
	// (only for the people of the first export).
	a := newAnswerEnv(t, func(got []api.ReturnedPerson) []api.ReturnedPerson {
		for i := range got {
			if strings.HasPrefix(got[i].Email, "p") {
				got[i].Email = "someone.else." + got[i].Email
			}
		}
		return got
	})
	rows := genPeople(3)
	rep := a.run(false, rows, "a.csv")

	if rep.Outcome() != model.OutcomeAttention || rep.HeldGrants != 3 {
		t.Fatalf("outcome %s with %d held, want attention with 3 held", rep.Outcome(), rep.HeldGrants)
	}
	c := rep.Exports[0].Counts
	if c["created"] != 0 || c["unknown"] != 3 {
		t.Errorf("counts %v, want created 0 and unknown 3", c)
	}
	if res := rep.Exports[0].Result; res.Granted != 0 {
		t.Errorf("granted %g, want 0 (nothing confirmed)", res.Granted)
	}
	if held := a.heldIDs(); strings.Join(held, ",") != "000001,000002,000003" {
		t.Errorf("held grants %v, want all three", held)
	}
	if applied := a.grants(model.GrantApplied); len(applied) != 0 {
		t.Errorf("%d grants applied, want none", len(applied))
	}
	for _, p := range rows {
		if id := a.remoteID(p.id); id != "" {
			t.Errorf("person %s has remote id %q, want none", p.id, id)
		}
	}
	w := a.warning()
	if w["sent"] != int64(3) || w["returned"] != int64(3) || w["unaccounted"] != int64(3) || w["extra"] != int64(3) {
		t.Errorf("warning fields %v", w)
	}
	if ids, _ := w["heldExternalIds"].([]any); len(ids) != 3 || ids[0] != "000001" {
		t.Errorf("warning names %v, want the three externalIds", w["heldExternalIds"])
	}

	t.Run("a trusted run does not send the held people again", func(t *testing.T) {
		calls := a.createCalls()
		rep := a.run(true, append(rows, newHire()), "b.csv")
		if got := a.createCalls(); got != calls+1 { // the new hire only
			t.Errorf("createPeople calls %d, want %d", got, calls+1)
		}
		c := rep.Exports[0].Counts
		if rep.Outcome() != model.OutcomeAttention || rep.HeldGrants != 3 || c["resent"] != 0 || c["created"] != 1 || c["held"] != 3 {
			t.Errorf("outcome %s, held %d, counts %v; want attention, 3 held, 0 resent, 1 created", rep.Outcome(), rep.HeldGrants, c)
		}
		for id, b := range a.balances() {
			if strings.HasPrefix(id, "00000") && b != 10 {
				t.Errorf("balance of %s = %g, want 10 (granted once)", id, b)
			}
		}
	})
}

func TestAnswerLeavingOnePersonOutHoldsOnlyThem(t *testing.T) {
	// The platform creates three people but answers with the first twice,
	// the third, and a person nobody sent: the second is not accounted for.
	a := newAnswerEnv(t, func(got []api.ReturnedPerson) []api.ReturnedPerson {
		var out []api.ReturnedPerson
		for _, p := range got {
			if p.Email != "p2@example.com" {
				out = append(out, p, p)
			}
		}
		return append(out, api.ReturnedPerson{Id: "90000000-0000-4000-8000-000000000009", Email: "stranger@example.com",
			FirstName: "S", LastName: "S"})
	})
	rows := genPeople(3)
	rep := a.run(false, rows, "a.csv")

	if rep.Outcome() != model.OutcomeAttention || rep.HeldGrants != 1 {
		t.Fatalf("outcome %s with %d held, want attention with 1 held", rep.Outcome(), rep.HeldGrants)
	}
	if c := rep.Exports[0].Counts; c["created"] != 2 || c["unknown"] != 1 {
		t.Errorf("counts %v, want created 2 and unknown 1", c)
	}
	if res := rep.Exports[0].Result; res.Granted != 20 {
		t.Errorf("granted %g, want 20", res.Granted)
	}
	if held := a.heldIDs(); len(held) != 1 || held[0] != "000002" {
		t.Fatalf("held %v, want [000002]", held)
	}
	platform := a.platformIDs()
	for _, id := range []string{"000001", "000003"} {
		if got := a.remoteID(id); got == "" || got != platform[id] {
			t.Errorf("remote id of %s = %q, want the platform's %q", id, got, platform[id])
		}
	}
	if got := a.remoteID("000002"); got != "" {
		t.Errorf("remote id of 000002 = %q, want none", got)
	}
	w := a.warning()
	if w["sent"] != int64(3) || w["returned"] != int64(5) || w["unaccounted"] != int64(1) || w["extra"] != int64(1) {
		t.Errorf("warning fields %v", w)
	}

	t.Run("the operator confirms the held grant", func(t *testing.T) {
		g := a.grants(model.GrantUnknown)[0]
		if !strings.Contains(g.LastError, "did not return this person") {
			t.Errorf("last error %q does not say why", g.LastError)
		}
		if err := a.st.ConfirmGrant(t.Context(), g.Key, "seen on the platform"); err != nil {
			t.Fatal(err)
		}
		if held := a.heldIDs(); len(held) != 0 {
			t.Errorf("still held: %v", held)
		}
	})
}

func TestAnswerWithTwoIDsForOneEmailHoldsThatPerson(t *testing.T) {
	a := newAnswerEnv(t, func(got []api.ReturnedPerson) []api.ReturnedPerson {
		twin := got[0]
		twin.Id = "90000000-0000-4000-8000-000000000001"
		return append(got, twin)
	})
	rep := a.run(false, genPeople(2), "a.csv")
	if c := rep.Exports[0].Counts; c["created"] != 1 || c["unknown"] != 1 {
		t.Errorf("counts %v, want created 1 and unknown 1", c)
	}
	if held := a.heldIDs(); len(held) != 1 || held[0] != "000001" {
		t.Fatalf("held %v, want [000001]", held)
	}
	if a.remoteID("000001") != "" || a.remoteID("000002") == "" {
		t.Errorf("remote ids %q and %q: want none for the ambiguous person only", a.remoteID("000001"), a.remoteID("000002"))
	}
	if w := a.warning(); w["ambiguous"] != int64(1) || w["unaccounted"] != int64(1) {
		t.Errorf("warning fields %v", w)
	}
}

func TestAnswerThatAccountsForEveryoneAppliesAll(t *testing.T) {
	// The same answer in another order and e-mail case is still complete.
	a := newAnswerEnv(t, func(got []api.ReturnedPerson) []api.ReturnedPerson {
		for i, j := 0, len(got)-1; i < j; i, j = i+1, j-1 {
			got[i], got[j] = got[j], got[i]
		}
		for i := range got {
			got[i].Email = strings.ToUpper(got[i].Email)
		}
		return got
	})
	rep := a.run(false, genPeople(3), "a.csv")
	if rep.Outcome() != model.OutcomeOK || rep.Exports[0].Counts["created"] != 3 || rep.HeldGrants != 0 {
		t.Fatalf("outcome %s, counts %v, held %d; want ok, 3 created, none held", rep.Outcome(), rep.Exports[0].Counts, rep.HeldGrants)
	}
	for _, entry := range a.logs.All() {
		if entry.Level >= zap.WarnLevel {
			t.Errorf("unexpected %s: %s", entry.Level, entry.Message)
		}
	}
}

func TestUnreadableSuccessAnswerHoldsEveryGrant(t *testing.T) {
	// The platform applies the call and answers 201 with a body that is not
	// the contract's (so no contract check here): nobody is accounted for.
	e := newEnv(t)
	a := serve(t, e, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/ext/v1/people" {
			e.emu.ServeHTTP(w, r)
			return
		}
		e.emu.ServeHTTP(httptest.NewRecorder(), r)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"created": true`))
	}))
	rep := a.run(false, genPeople(2), "a.csv")
	if c := rep.Exports[0].Counts; c["created"] != 0 || c["unknown"] != 2 || rep.Outcome() != model.OutcomeAttention {
		t.Fatalf("outcome %s, counts %v; want attention, created 0, unknown 2", rep.Outcome(), c)
	}
	if held := a.heldIDs(); len(held) != 2 {
		t.Fatalf("held %v, want both", held)
	}
	if a.balances()["000001"] != 10 {
		t.Fatalf("the platform did not apply the call; the test proves nothing")
	}
	if w := a.warning(); w["unaccounted"] != int64(2) || w["returned"] != int64(0) {
		t.Errorf("warning fields %v", w)
	}
}

func TestTrustedResendWhoseAnswerLeavesOneOutHoldsOnlyThem(t *testing.T) {
	// The first call is applied and its connection dropped (no answer); the
	// trusted resend with the same key is answered without the second person.
	e := newEnv(t)
	var creates int
	leaveOut := rewriting(t, e.emu, func(got []api.ReturnedPerson) []api.ReturnedPerson {
		var out []api.ReturnedPerson
		for _, p := range got {
			if p.Email != "p2@example.com" {
				out = append(out, p)
			}
		}
		return out
	})
	a := serve(t, e, emutest.Validated(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/ext/v1/people" {
			creates++
			if creates > 1 {
				leaveOut.ServeHTTP(w, r)
				return
			}
		}
		e.emu.ServeHTTP(w, r)
	})))
	if _, err := e.emu.AddFault(emulator.Fault{Operation: "createPeople", When: emulator.After, Drop: true, Count: 1}); err != nil {
		t.Fatal(err)
	}
	rows := genPeople(3)
	if rep := a.run(false, rows, "a.csv"); rep.HeldGrants != 3 {
		t.Fatalf("%d held after a dropped connection, want 3", rep.HeldGrants)
	}

	rep := a.run(true, append(rows, newHire()), "b.csv")
	if c := rep.Exports[0].Counts; c["resent"] != 3 || c["created"] != 3 || c["unknown"] != 1 || rep.HeldGrants != 1 {
		t.Fatalf("counts %v, held %d; want 3 resent, 3 created (two resent and the new hire), 1 unknown, 1 held", c, rep.HeldGrants)
	}
	if held := a.heldIDs(); len(held) != 1 || held[0] != "000002" {
		t.Fatalf("held %v, want [000002]", held)
	}
	if a.remoteID("000001") == "" || a.remoteID("000003") == "" || a.remoteID("000002") != "" {
		t.Error("remote ids: want them for the people accounted for only")
	}
	a.warning()

	t.Run("the next trusted run does not send the held person again", func(t *testing.T) {
		before := creates
		rep := a.run(true, append(rows, newHire(), person{id: "000098", email: "m@example.com", first: "M", last: "M", start: "2026-11-01"}), "c.csv")
		if creates != before+1 || rep.HeldGrants != 1 || rep.Exports[0].Counts["resent"] != 0 {
			t.Errorf("%d more createPeople calls, %d held, counts %v; want 1 (the new hire), 1 held, none resent",
				creates-before, rep.HeldGrants, rep.Exports[0].Counts)
		}
		if b := a.balances()["000002"]; b != 10 {
			t.Errorf("balance of 000002 = %g, want 10 (granted once)", b)
		}
	})
}
