package sender_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"hrsync/api"
	"hrsync/emulator"
	"hrsync/internal/storetest"
	"hrsync/model"
	"hrsync/store"
	"hrsync/sync/sender"
)

// protocolLog records the steps of the exactly-once protocol as a Sender
// takes them, by Idempotency-Key, and the calls in flight.
type protocolLog struct {
	mu       sync.Mutex
	steps    []string // "intent KEY", "call KEY", "outcome KEY"
	keys     map[int64]string
	inFlight int
	maxCalls int
	calls    int
	// second is closed when the second call starts.
	second chan struct{}
}

// step records one step of the call with Idempotency-Key key.
func (l *protocolLog) step(what, key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.steps = append(l.steps, what+" "+key)
}

// loggedStore records the intents' and outcomes' commits; the first
// outcome's commit waits until the second call has started (or 10 s).
type loggedStore struct {
	sender.Store
	log *protocolLog
}

// BeginBatch commits the intent and records it.
func (s loggedStore) BeginBatch(ctx context.Context, in store.BatchIntent) (int64, error) {
	id, err := s.Store.BeginBatch(ctx, in)
	if err == nil {
		s.log.mu.Lock()
		s.log.keys[id] = in.IdempotencyKey
		s.log.mu.Unlock()
		s.log.step("intent", in.IdempotencyKey)
	}
	return id, err
}

// FinishBatch commits the outcome (the first one once the second call
// started) and records it.
func (s loggedStore) FinishBatch(ctx context.Context, journalID int64, out store.BatchOutcome) error {
	s.log.mu.Lock()
	key, first := s.log.keys[journalID], s.log.calls == 1
	s.log.mu.Unlock()
	if first {
		select {
		case <-s.log.second:
		case <-time.After(10 * time.Second):
		}
	}
	err := s.Store.FinishBatch(ctx, journalID, out)
	if err == nil {
		s.log.step("outcome", key)
	}
	return err
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
	c.log.calls++
	c.log.maxCalls = max(c.log.maxCalls, c.log.inFlight)
	if c.log.calls == 2 {
		close(c.log.second)
	}
	c.log.steps = append(c.log.steps, "call "+key)
	c.log.mu.Unlock()
	defer func() {
		c.log.mu.Lock()
		c.log.inFlight--
		c.log.mu.Unlock()
	}()
	return c.Creator.CreatePeople(ctx, req, key)
}

// TestOutcomeCommitDoesNotHoldTheCallSlot: with one call at a time, the
// second call starts while the first call's outcome is still being
// committed (its slot is released when its answer arrives), yet every
// call's intent is committed before it and its outcome after it, no two
// calls are in flight at once, and every grant is applied once.
func TestOutcomeCommitDoesNotHoldTheCallSlot(t *testing.T) {
	storetest.Each(t, func(t *testing.T, ts storetest.Store) {
		e := newGrantsEnv(t, ts, 6)
		log := &protocolLog{keys: map[int64]string{}, second: make(chan struct{})}
		s, err := sender.New(sender.Options{
			Tenant: "acme", CompanyID: emulator.DatasetCompanyID, CollectionID: emulator.PlainCollectionID,
			Job: model.JobGrants, Rule: "birthday", BatchSize: 2, Concurrency: 1,
		}, loggedStore{Store: ts.St, log: log}, loggedCreator{Creator: e.client, log: log}, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Send(t.Context(), e.run(model.JobGrants), e.grants("birthday", "2026", 25, "E01", "E02", "E03", "E04", "E05", "E06"))
		if err != nil {
			t.Fatal(err)
		}
		if res.Calls != 3 || res.Applied != 6 {
			t.Errorf("result %+v, want 3 calls, 6 applied", res)
		}
		log.mu.Lock()
		defer log.mu.Unlock()
		if log.maxCalls != 1 {
			t.Errorf("%d calls in flight at once, want 1", log.maxCalls)
		}
		checkProtocolOrder(t, log.steps, log.keys)
		first := log.keys[minKey(log.keys)]
		firstOutcome, secondCall := -1, -1
		for i, st := range log.steps {
			switch {
			case st == "outcome "+first:
				firstOutcome = i
			case secondCall < 0 && strings.HasPrefix(st, "call ") && st != "call "+first:
				secondCall = i
			}
		}
		if secondCall < 0 || firstOutcome < secondCall {
			t.Errorf("steps %v: the second call waited for the first call's outcome to be committed", log.steps)
		}
		for _, id := range []string{"E01", "E02", "E03", "E04", "E05", "E06"} {
			if g := e.grant(id, "birthday", "2026"); g.State != model.GrantApplied {
				t.Errorf("grant of %s is %s, want applied", id, g.State)
			}
			if _, amounts := e.platform(id); len(amounts) != 2 {
				t.Errorf("%s received %v, want the initial balance and one birthday grant", id, amounts)
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

// minKey is the smallest journal id of keys: the first call's.
func minKey(keys map[int64]string) int64 {
	first := int64(-1)
	for id := range keys {
		if first < 0 || id < first {
			first = id
		}
	}
	return first
}
