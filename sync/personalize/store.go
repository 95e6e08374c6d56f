package personalize

import (
	"context"

	"hrsync/model"
	"hrsync/store"
)

// Store is the part of the store the personalization uses: its runs and
// lock, the people of state, and the personalizations and refused
// collections it keeps. *store.Store is one.
type Store interface {
	LockJob(ctx context.Context, job model.Job, tenant string) (release func() error, closed int, err error)
	StartRun(ctx context.Context, r store.Run) error
	FinishRun(ctx context.Context, res store.RunResult) error

	Person(ctx context.Context, tenant, externalID string) (p store.PersonRow, ok bool, err error)
	Personalizations(ctx context.Context, tenant string) (map[store.PersonalizationKey]store.Personalization, error)
	SavePersonalization(ctx context.Context, p store.Personalization) error
	RefusedCollections(ctx context.Context, tenant string) (map[string]store.RefusedCollection, error)
	MarkNotPersonalizable(ctx context.Context, tenant string, c store.RefusedCollection) error
}
