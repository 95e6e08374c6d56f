package grants_test

import (
	"hrsync/store"
	"hrsync/sync/grants"
)

// The real store is the grants package's Store (checked at compile time).
var _ grants.Store = (*store.Store)(nil)
