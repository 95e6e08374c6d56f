package store_test

import (
	"testing"

	"hrsync/store"
)

func TestBacklogPersonalizations(t *testing.T) {
	eachStore(t, func(t *testing.T, s *store.Store) {
		states := map[string]store.PersonalizationState{
			"e1": store.PersonalizationPending, "e2": store.PersonalizationRetry, "e3": store.PersonalizationRetry,
			"e4": store.PersonalizationDone, "e5": store.PersonalizationFailed, "e6": store.PersonalizationError,
		}
		for ext, state := range states {
			must(t, s.SavePersonalization(ctx(t), personalization(ext, "c1", state)))
		}
		other := personalization("e1", "c1", store.PersonalizationPending)
		other.Tenant = "beta"
		must(t, s.SavePersonalization(ctx(t), other))
		b, err := s.Backlog(ctx(t), "acme")
		must(t, err)
		if want := (store.Backlog{PersonalizationsPending: 3, PersonalizationsFailed: 2}); b != want {
			t.Fatalf("backlog = %+v, want %+v (pending+retry, failed+error; done left out)", b, want)
		}
		b, err = s.Backlog(ctx(t), "beta")
		must(t, err)
		if want := (store.Backlog{PersonalizationsPending: 1}); b != want {
			t.Fatalf("beta's backlog = %+v, want %+v", b, want)
		}
	})
}
