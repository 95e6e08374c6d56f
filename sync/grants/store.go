package grants

import (
	"context"
	"time"

	"hrsync/model"
	"hrsync/store"
)

// Store is the part of the store the grants job uses: its runs and lock,
// the people of state and their kept birthdays, the days its rules ran,
// and the grants ledger, which it reads and whose occurrences no longer due
// it voids. *store.Store is one. It has no way to the batch journal: the
// job's grants go through the Senders it opens on the sender.Journal New is
// given.
type Store interface {
	LockJob(ctx context.Context, job model.Job, tenant string) (release func() error, closed int, err error)
	StartRun(ctx context.Context, r store.Run) error
	FinishRun(ctx context.Context, res store.RunResult) error

	ScanPeople(ctx context.Context, tenant string, fn func(store.PersonRow) error) error
	Person(ctx context.Context, tenant, externalID string) (p store.PersonRow, ok bool, err error)
	Birthdays(ctx context.Context, tenant string) (map[string]store.MonthDay, error)
	SaveBirthdays(ctx context.Context, tenant string, days map[string]store.MonthDay) error
	ForgetBirthdays(ctx context.Context, tenant string, externalIDs []string) error
	GrantDays(ctx context.Context, tenant string) (map[string]store.GrantDay, error)
	MarkGrantDays(ctx context.Context, tenant string, rules []string, day time.Time) error

	GrantStates(ctx context.Context, keys []string) (map[string]model.GrantState, error)
	ListGrants(ctx context.Context, f store.GrantFilter) ([]model.Grant, error)
	RuleGrantsTotal(ctx context.Context, tenant string, reasons []string, from, to time.Time) (float64, error)
	VoidOccurrences(ctx context.Context, job model.Job, grants []model.Grant, note string) (n int, err error)
}
