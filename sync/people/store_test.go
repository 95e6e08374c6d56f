package people_test

import (
	"hrsync/store"
	"hrsync/sync/people"
)

// The real store is the people package's Store (checked at compile time).
var _ people.Store = (*store.Store)(nil)
