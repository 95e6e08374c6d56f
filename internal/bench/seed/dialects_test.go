package seed_test

// The store dialects this package's tests open register themselves.
import (
	_ "hrsync/store/postgres"
	_ "hrsync/store/sqlite"
)
