package sender_test

import (
	"hrsync/store"
	"hrsync/sync/sender"
)

// The real store is the sender's Store (checked at compile time): the
// batch journal the jobs reach through a sender.Journal.
var _ sender.Store = (*store.Store)(nil)
