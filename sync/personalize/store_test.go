package personalize_test

import (
	"hrsync/store"
	"hrsync/sync/personalize"
)

// The real store is the personalize package's Store (checked at compile time).
var _ personalize.Store = (*store.Store)(nil)
