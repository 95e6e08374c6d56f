package people

import (
	"context"
	"iter"
	"time"

	"hrsync/model"
	"hrsync/store"
)

// Store is the part of the store the people sync uses: its runs and lock,
// the people of state and their snapshot, the files it read, and the
// grants ledger, which it reads. *store.Store is one. It has no way to the
// batch journal: the people sync's grants go through its Sender, opened
// on the sender.Journal New is given.
type Store interface {
	LockJob(ctx context.Context, job model.Job, tenant string) (release func() error, closed int, err error)
	StartRun(ctx context.Context, r store.Run) error
	FinishRun(ctx context.Context, res store.RunResult) error
	AmendRun(ctx context.Context, id string, outcome model.RunOutcome, errText string) error
	SetRunReports(ctx context.Context, id string, names []string) error
	KeepUnarchivedReport(ctx context.Context, id string, report []byte) error
	UnarchivedReport(ctx context.Context, id string) (report []byte, ok bool, err error)
	ArchivedLate(ctx context.Context, id string, names []string) error
	SourceFileByHash(ctx context.Context, tenant, sha256 string) (f store.SourceFile, ok bool, err error)
	SafeguardStopByHash(ctx context.Context, tenant, sha256 string) (st store.SafeguardStop, ok bool, err error)
	LastGoodImport(ctx context.Context, tenant string) (rows int, ok bool, err error)

	SavePeople(ctx context.Context, tenant string, rows []store.PersonRow) error
	MarkDeparted(ctx context.Context, tenant string, externalIDs []string, at time.Time) error
	ScanPeopleKeysParts(ctx context.Context, tenant string, parts int, fn func(part int, k store.PersonKey) error) (version int64, err error)
	PeopleSnapshot(ctx context.Context, tenant string, fn func(part []byte) error) (version int64, ok bool, err error)
	PeopleSnapshotValid(ctx context.Context, tenant string) (bool, error)
	SavePeopleSnapshot(ctx context.Context, tenant string, version int64, parts iter.Seq[[]byte]) (saved bool, err error)

	Grant(ctx context.Context, key string) (model.Grant, error)
	ListGrants(ctx context.Context, f store.GrantFilter) ([]model.Grant, error)
}
