package sqlite_test

import (
	"path/filepath"
	"sync"
	"testing"

	"hrsync/store"
)

// Two processes starting on a fresh SQLite file both migrate it; the file
// lock makes the second wait instead of failing on a half-made schema.
func TestConcurrentMigrationsOnSQLite(t *testing.T) {
	for round := range 5 {
		path := filepath.Join(t.TempDir(), "state.db")
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st, err := store.Open(t.Context(), "sqlite:"+path, store.Options{Migrate: true})
				if err == nil {
					err = st.Close()
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("round %d, opener %d: %v", round, i, err)
			}
		}
	}
}
