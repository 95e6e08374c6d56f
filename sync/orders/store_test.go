package orders_test

import (
	"hrsync/store"
	"hrsync/sync/orders"
)

// The real store is the orders package's Store (checked at compile time).
var _ orders.Store = (*store.Store)(nil)
