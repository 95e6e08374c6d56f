package orders

import (
	"context"
	"time"

	"hrsync/model"
	"hrsync/store"
)

// Store is the part of the store the orders job uses: its runs and lock,
// the people of state, and the reporting tables it fills (orders and their
// statuses, products, the watermark). *store.Store is one.
type Store interface {
	LockJob(ctx context.Context, job model.Job, tenant string) (release func() error, closed int, err error)
	StartRun(ctx context.Context, r store.Run) error
	FinishRun(ctx context.Context, res store.RunResult) error

	ScanPeople(ctx context.Context, tenant string, fn func(store.PersonRow) error) error
	OrdersWatermark(ctx context.Context, tenant string) (day time.Time, ok bool, err error)
	SetOrdersWatermark(ctx context.Context, tenant string, day time.Time) error
	UpsertOrders(ctx context.Context, tenant string, orders []store.OrderRow) (store.IngestResult, error)
	OpenOrders(ctx context.Context, tenant string) ([]store.OpenOrder, error)
	ApplyOrderStatuses(ctx context.Context, tenant string, obs []store.OrderObservation, at time.Time) (store.StatusResult, error)
	StopPolling(ctx context.Context, tenant string, orderIDs []string, at time.Time) (int, error)
	ProductsDue(ctx context.Context, tenant string, staleBefore time.Time) ([]store.ProductRef, error)
	SaveProducts(ctx context.Context, tenant string, rows []store.ProductRow, at time.Time) (int, error)
}
