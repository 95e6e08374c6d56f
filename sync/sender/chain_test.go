package sender_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"hrsync/api"
	"hrsync/emulator"
	"hrsync/internal/storetest"
	"hrsync/model"
	"hrsync/store"
	"hrsync/sync/sender"
)

// protocolLog records the steps of the exactly-once protocol as a Sender
// takes them, by Idempotency-Key: "intent KEY" and "outcome KEY" once
// committed, "call KEY" when the call starts; and the commits made.
type protocolLog struct {
	mu       sync.Mutex
	steps    []string
	keys     map[int64]string
	commits  []string // "begin", "finish", "joint"
	inFlight int
	maxCalls int
	// failJoint makes every FinishAndBegin fail before it commits.
	failJoint bool
}

// record appends steps and a commit, under the lock.
func (l *protocolLog) record(commit string, steps ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.commits = append(l.commits, commit)
	l.steps = append(l.steps, steps...)
}

// key is the Idempotency-Key of journal entry id.
func (l *protocolLog) key(id int64) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.keys[id]
}

// loggedStore is a sender.Store that records the commits.
type loggedStore struct {
	sender.Store
	log *protocolLog
}

// BeginBatch commits an intent and records it.
func (s loggedStore) BeginBatch(ctx context.Context, in store.BatchIntent) (int64, error) {
	id, err := s.Store.BeginBatch(ctx, in)
	if err == nil {
		s.log.mu.Lock()
		s.log.keys[id] = in.IdempotencyKey
		s.log.mu.Unlock()
		s.log.record("begin", "intent "+in.IdempotencyKey)
	}
	return id, err
}

// FinishBatch commits an outcome and records it.
func (s loggedStore) FinishBatch(ctx context.Context, journalID int64, out store.BatchOutcome) error {
	err := s.Store.FinishBatch(ctx, journalID, out)
	if err == nil {
		s.log.record("finish", "outcome "+s.log.key(journalID))
	}
	return err
}

// FinishAndBegin commits an outcome and an intent together and records
// them, or fails when the log says so.
func (s loggedStore) FinishAndBegin(ctx context.Context, journalID int64, out store.BatchOutcome, in store.BatchIntent) (int64, error) {
	if s.log.failJoint {
		return 0, errors.New("joint commit refused by the test")
	}
	id, err := s.Store.FinishAndBegin(ctx, journalID, out, in)
	if err == nil {
		s.log.mu.Lock()
		s.log.keys[id] = in.IdempotencyKey
		s.log.mu.Unlock()
		s.log.record("joint", "outcome "+s.log.key(journalID), "intent "+in.IdempotencyKey)
	}
	return id, err
}

// loggedCreator records the calls and how many are in flight at once.
type loggedCreator struct {
	sender.Creator
	log *protocolLog
}

// CreatePeople records the call and makes it.
func (c loggedCreator) CreatePeople(ctx context.Context, req api.CreatePeopleRequest, key string) ([]api.ReturnedPerson, error) {
	c.log.mu.Lock()
	c.log.inFlight++
	c.log.maxCalls = max(c.log.maxCalls, c.log.inFlight)
	c.log.steps = append(c.log.steps, "call "+key)
	c.log.mu.Unlock()
	defer func() {
		c.log.mu.Lock()
		c.log.inFlight--
		c.log.mu.Unlock()
	}()
	return c.Creator.CreatePeople(ctx, req, key)
}

// TestOutcomeCommittedWithTheNextIntent: a worker commits each call's
// outcome in one transaction with its next call's intent, and the last
// outcome alone; every call's intent is committed before it and its
// outcome after it, at most Concurrency calls are in flight, and every
// grant is applied once. When the joint commit fails, the outcome and the
// intent are committed one after the other, with the same result.
func TestOutcomeCommittedWithTheNextIntent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, ts storetest.Store) {
		e := newGrantsEnv(t, ts, 7)
		for pass, failJoint := range []bool{false, true} {
			log := &protocolLog{keys: map[int64]string{}, failJoint: failJoint}
			occurrence := map[bool]string{false: "2026", true: "2027"}[failJoint]
			s, err := sender.New(sender.Options{
				Tenant: "acme", CompanyID: emulator.DatasetCompanyID, CollectionID: emulator.PlainCollectionID,
				Job: model.JobGrants, Rule: "birthday", BatchSize: 2, Concurrency: 1,
			}, loggedStore{Store: ts.St, log: log}, loggedCreator{Creator: e.client, log: log}, nil)
			if err != nil {
				t.Fatal(err)
			}
			ids := []string{"E01", "E02", "E03", "E04", "E05", "E06", "E07"}
			res, err := s.Send(t.Context(), e.run(model.JobGrants), e.grants("birthday", occurrence, 25, ids...))
			if err != nil {
				t.Fatal(err)
			}
			if res.Calls != 4 || res.Applied != 7 || res.NotApplied+res.Unknown+res.Skipped != 0 {
				t.Errorf("failJoint %v: result %+v, want 4 calls, 7 applied", failJoint, res)
			}
			log.mu.Lock()
			want := "begin joint joint joint finish"
			if failJoint {
				want = "begin finish begin finish begin finish begin finish"
			}
			if got := strings.Join(log.commits, " "); got != want {
				t.Errorf("failJoint %v: commits %q, want %q", failJoint, got, want)
			}
			if log.maxCalls != 1 {
				t.Errorf("%d calls in flight at once, want 1", log.maxCalls)
			}
			checkProtocolOrder(t, log.steps, log.keys)
			log.mu.Unlock()
			for _, id := range ids {
				if g := e.grant(id, "birthday", occurrence); g.State != model.GrantApplied {
					t.Errorf("grant of %s is %s, want applied", id, g.State)
				}
				if _, amounts := e.platform(id); len(amounts) != 2+pass {
					t.Errorf("%s received %v, want the initial balance and %d birthday grants", id, amounts, 1+pass)
				}
			}
		}
	})
}

// checkProtocolOrder fails t unless each call's intent precedes it and
// its outcome follows it, once each.
func checkProtocolOrder(t *testing.T, steps []string, keys map[int64]string) {
	t.Helper()
	if len(steps) != 3*len(keys) {
		t.Errorf("steps %v, want 3 for each of %d calls", steps, len(keys))
	}
	at := map[string]int{}
	for i, st := range steps {
		if _, dup := at[st]; dup {
			t.Errorf("step %q twice", st)
		}
		at[st] = i
	}
	for _, key := range keys {
		in, okIn := at["intent "+key]
		call, okCall := at["call "+key]
		out, okOut := at["outcome "+key]
		if !okIn || !okCall || !okOut || in > call || call > out {
			t.Errorf("call %s: steps %v, want intent, call, outcome in that order", key, steps)
		}
	}
}

// TestFinishAndBeginIsOneTransaction: when the next intent cannot be
// committed (its grant was applied already), neither is the outcome it
// came with: the call stays sent, and its outcome can be committed alone.
func TestFinishAndBeginIsOneTransaction(t *testing.T) {
	storetest.Each(t, func(t *testing.T, ts storetest.Store) {
		e := newGrantsEnv(t, ts, 1)
		run := e.run(model.JobGrants)
		intent := func(key, reason, occurrence string) store.BatchIntent {
			return store.BatchIntent{RunID: run, Tenant: "acme", Job: model.JobGrants, IdempotencyKey: key, RequestSHA: "x",
				ItemCount: 1, Grants: []model.Grant{{ExternalID: "E01", Reason: reason, Occurrence: occurrence, Amount: 5}}}
		}
		id, err := ts.St.BeginBatch(t.Context(), intent("k1", "birthday", "2026"))
		if err != nil {
			t.Fatal(err)
		}
		// The people sync's initial grant of E01 is applied: it cannot be sent again.
		_, err = ts.St.FinishAndBegin(t.Context(), id, store.BatchOutcome{State: store.JournalSucceeded},
			intent("k2", model.InitialGrantReason, "1"))
		if !errors.Is(err, store.ErrGrantConflict) {
			t.Fatalf("joint commit with a conflicting intent: %v, want ErrGrantConflict", err)
		}
		j, err := ts.St.Journal(t.Context(), store.JournalFilter{Tenant: "acme", Job: model.JobGrants})
		if err != nil || len(j) != 1 || j[0].State != store.JournalSent {
			t.Fatalf("journal %+v (%v), want the first call alone, still sent", j, err)
		}
		if err := ts.St.FinishBatch(t.Context(), id, store.BatchOutcome{State: store.JournalSucceeded}); err != nil {
			t.Fatal(err)
		}
		if g := e.grant("E01", "birthday", "2026"); g.State != model.GrantApplied {
			t.Errorf("grant %s, want applied", g.State)
		}
	})
}
