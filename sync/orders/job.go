// Package orders is hrsync's orders job: for each tenant it lists the
// collection's orders placed by the people hrsync synced (over a window of
// calendar days that starts at a watermark), upserts them with their line
// items into the reporting tables, polls the status of every order that is
// not final with bounded concurrency (recording every change in a history
// table and every parcel in shipments), and looks up each product seen in an
// order. Writes are bulk and idempotent: a run that finds nothing new at the
// platform writes nothing but its run record.
package orders

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"

	"hrsync/api"
	"hrsync/apiclient"
	"hrsync/internal/runner"
	"hrsync/model"
	"hrsync/store"
)

// API is what the job asks of the platform; *apiclient.Client is one.
type API interface {
	ListOrders(ctx context.Context, collectionID, companyID string, userIDs []string, firstDay, lastDay time.Time) (apiclient.OrderList, error)
	GetOrderStatus(ctx context.Context, collectionID, orderID, companyID string) (*api.OrderStatus, error)
	GetProduct(ctx context.Context, collectionID, productID string, opts apiclient.ProductOptions) (*api.Product, error)
}

// Options configure the orders job of one tenant.
type Options struct {
	Tenant       string
	CompanyID    string
	CollectionID string
	// BackfillDays is how many days before today the first run lists.
	BackfillDays int
	// OverlapDays is how many days before the watermark later runs start.
	OverlapDays int
	// UserIDsChunk bounds the user ids of one orders list call.
	UserIDsChunk int
	// PollConcurrency bounds the status (and product) calls in flight.
	PollConcurrency int
	// StopPollingAfter is the age after which an order that is not final
	// is no longer polled.
	StopPollingAfter time.Duration
	// ProductRefresh is how old a product row may get before it is read again.
	ProductRefresh time.Duration
	// Country is the countryCode product prices are asked in ("" for none).
	Country string
	// Language is the accept-language product texts are asked in.
	Language string
	// ApplyBatch is how many polled orders one store transaction records
	// (default 500).
	ApplyBatch int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Job runs the orders job of one tenant.
type Job struct {
	opts  Options
	store Store
	api   API
	log   *zap.Logger
}

// New checks the options, fills their defaults and returns a job.
func New(opts Options, st Store, client API, log *zap.Logger) (*Job, error) {
	if problems := checkOptions(opts, st, client); len(problems) > 0 {
		return nil, fmt.Errorf("orders job: %s", strings.Join(problems, "; "))
	}
	opts = withDefaults(opts)
	if log == nil {
		log = zap.NewNop()
	}
	return &Job{opts: opts, store: st, api: client, log: log}, nil
}

// checkOptions lists what is wrong with the options and the job's
// dependencies, for New.
func checkOptions(opts Options, st Store, client API) []string {
	var problems []string
	if opts.Tenant == "" {
		problems = append(problems, "tenant is required")
	}
	if opts.CollectionID == "" {
		problems = append(problems, "collection id is required")
	}
	if opts.CompanyID == "" {
		problems = append(problems, "company id is required (order status calls need it)")
	}
	if opts.BackfillDays < 0 || opts.OverlapDays < 0 || opts.UserIDsChunk < 0 || opts.PollConcurrency < 0 ||
		opts.StopPollingAfter < 0 || opts.ProductRefresh < 0 || opts.ApplyBatch < 0 {
		problems = append(problems, "days, chunk, concurrency and durations must not be negative")
	}
	if st == nil || client == nil {
		problems = append(problems, "a store and an API client are required")
	}
	return problems
}

// withDefaults fills the options left zero with their defaults.
func withDefaults(opts Options) Options {
	if opts.BackfillDays == 0 {
		opts.BackfillDays = 30
	}
	if opts.UserIDsChunk == 0 {
		opts.UserIDsChunk = 100
	}
	if opts.PollConcurrency == 0 {
		opts.PollConcurrency = 8
	}
	if opts.StopPollingAfter == 0 {
		opts.StopPollingAfter = 90 * 24 * time.Hour
	}
	if opts.ProductRefresh == 0 {
		opts.ProductRefresh = 24 * time.Hour
	}
	if opts.ApplyBatch == 0 {
		opts.ApplyBatch = 500
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return opts
}

// Report is what one RunOnce did.
type Report struct {
	Tenant string `json:"tenant"`
	RunID  string `json:"runId"`
	// FirstDay and LastDay are the UTC days listed (YYYY-MM-DD).
	FirstDay string `json:"firstDay"`
	LastDay  string `json:"lastDay"`
	// People counts the synced people whose orders were asked for.
	People int `json:"people"`
	// Listed counts the orders the platform listed.
	Listed int `json:"listed"`
	// OutsideWindow counts the rows the platform listed although they were
	// placed on a day outside the days asked for: ignored, not stored.
	OutsideWindow int `json:"outsideWindow"`
	// CountBelowRows counts the list answers whose count was below the rows
	// they held (the rows are kept).
	CountBelowRows int `json:"countBelowRows"`
	// Ingested counts the order and line item rows inserted or changed.
	Ingested store.IngestResult `json:"ingested"`
	// Polled counts the status calls answered; PollErrors those that failed.
	Polled     int `json:"polled"`
	PollErrors int `json:"pollErrors"`
	// Status is what the polls changed.
	Status store.StatusResult `json:"status"`
	// StoppedPolling counts the orders newly flagged as too old to poll.
	StoppedPolling int `json:"stoppedPolling"`
	// ProductsRead counts the products looked up; ProductsChanged those
	// whose row changed; ProductErrors the lookups that failed.
	ProductsRead    int `json:"productsRead"`
	ProductsChanged int `json:"productsChanged"`
	ProductErrors   int `json:"productErrors"`
	// Written counts every reporting row inserted or changed (the watermark
	// and the run record aside).
	Written int `json:"written"`
	// Errors lists distinct errors, without personal data.
	Errors []string `json:"errors,omitempty"`
	// Failed is set when the run stopped on an error.
	Failed bool `json:"failed"`
	// Interrupted is set when a stop of the process cut the run short.
	Interrupted bool `json:"interrupted"`
}

// Outcome is interrupted when a stop cut the run short, failed when it
// stopped on an error, attention when some status or product calls
// failed, ok otherwise.
func (r *Report) Outcome() model.RunOutcome {
	switch {
	case r.Interrupted:
		return model.OutcomeInterrupted
	case r.Failed:
		return model.OutcomeFailed
	case r.PollErrors > 0 || r.ProductErrors > 0:
		return model.OutcomeAttention
	}
	return model.OutcomeOK
}

// Counts are the report's counters as the run record keeps them.
func (r *Report) Counts() map[string]int {
	return map[string]int{
		"people": r.People, "listed": r.Listed, "outsideWindow": r.OutsideWindow, "countBelowRows": r.CountBelowRows,
		"ordersWritten": r.Ingested.Orders, "lineItemsWritten": r.Ingested.LineItems,
		"polled": r.Polled, "pollErrors": r.PollErrors, "ordersChanged": r.Status.OrdersChanged,
		"linesChanged": r.Status.LinesChanged, "newShipments": r.Status.NewShipments, "becameFinal": r.Status.BecameFinal,
		"stoppedPolling": r.StoppedPolling, "productsRead": r.ProductsRead, "productsChanged": r.ProductsChanged,
		"productErrors": r.ProductErrors, "written": r.Written,
	}
}

func (r *Report) addError(err error) {
	msg := err.Error()
	for _, e := range r.Errors {
		if e == msg {
			return
		}
	}
	if len(r.Errors) < 20 {
		r.Errors = append(r.Errors, msg)
	}
}

// utcDay is UTC midnight of t's UTC calendar day.
func utcDay(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// Window returns the days the next run lists: from today minus BackfillDays
// on the first run, else from the watermark minus OverlapDays; to today.
func (j *Job) Window(ctx context.Context) (first, last time.Time, err error) {
	last = utcDay(j.opts.Now())
	wm, ok, err := j.store.OrdersWatermark(ctx, j.opts.Tenant)
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	if ok {
		first = wm.AddDate(0, 0, -j.opts.OverlapDays)
	} else {
		first = last.AddDate(0, 0, -j.opts.BackfillDays)
	}
	if first.After(last) {
		first = last
	}
	return first, last, nil
}

// RunOnce runs one cycle under the tenant's lock ("orders-<tenant>"): list,
// upsert, poll, look up products, move the watermark, and record the run.
// It returns model.ErrLocked at once when another run holds the lock.
func (j *Job) RunOnce(ctx context.Context) (*Report, error) {
	release, err := runner.LockJob(ctx, j.store, model.JobOrders, j.opts.Tenant, j.log)
	if err != nil {
		return nil, err
	}
	defer release()
	rep := &Report{Tenant: j.opts.Tenant, RunID: newRunID()}
	log := j.log.With(zap.String("run", rep.RunID))
	if err := j.store.StartRun(ctx, store.Run{ID: rep.RunID, Job: model.JobOrders, Tenant: j.opts.Tenant}); err != nil {
		rep.Failed = true
		return rep, fmt.Errorf("record run start: %w", err)
	}
	runErr := j.cycle(ctx, log, rep)
	if runErr != nil && runner.CutShort(ctx, model.OutcomeFailed) == model.OutcomeInterrupted {
		log.Warn("orders run cut short: the process is stopping", zap.Error(runErr))
		rep.Interrupted, runErr = true, runner.Cut(runErr)
	}
	if runErr != nil {
		rep.Failed = true
		rep.addError(runErr)
	}
	finishCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	res := store.RunResult{ID: rep.RunID, Outcome: rep.Outcome(), Counts: rep.Counts()}
	if runErr != nil {
		res.Err = runErr
	} else if len(rep.Errors) > 0 {
		res.Err = errors.New(strings.Join(rep.Errors, "; "))
	}
	if err := j.store.FinishRun(finishCtx, res); err != nil && runErr == nil {
		runErr = fmt.Errorf("record run outcome: %w", err)
		rep.Failed = true
	}
	log.Info("orders run done", zap.String("outcome", string(rep.Outcome())), zap.Int("listed", rep.Listed),
		zap.Int("outsideWindow", rep.OutsideWindow), zap.Int("polled", rep.Polled), zap.Int("pollErrors", rep.PollErrors),
		zap.Int("written", rep.Written), zap.Int("stoppedPolling", rep.StoppedPolling))
	return rep, runErr
}

// cycle is the body of a run; its error fails the run.
func (j *Job) cycle(ctx context.Context, log *zap.Logger, rep *Report) error {
	first, last, err := j.Window(ctx)
	if err != nil {
		return err
	}
	rep.FirstDay, rep.LastDay = first.Format(time.DateOnly), last.Format(time.DateOnly)
	if err := j.list(ctx, log, rep, first, last); err != nil {
		return err
	}
	if err := j.poll(ctx, log, rep); err != nil {
		return err
	}
	if err := j.products(ctx, log, rep); err != nil {
		return err
	}
	// The watermark moves only after everything listed is stored, and not
	// while nobody is synced: the first people synced still get the backfill.
	if rep.People == 0 {
		return nil
	}
	if err := j.store.SetOrdersWatermark(ctx, j.opts.Tenant, last); err != nil {
		return fmt.Errorf("set watermark: %w", err)
	}
	return nil
}

// list asks for the orders of the synced people, chunk by chunk, and
// upserts each chunk's orders.
func (j *Job) list(ctx context.Context, log *zap.Logger, rep *Report, first, last time.Time) error {
	var userIDs []string
	known := map[string]bool{}
	if err := j.store.ScanPeople(ctx, j.opts.Tenant, func(p store.PersonRow) error {
		if p.RemoteID != "" {
			userIDs = append(userIDs, p.RemoteID)
			known[p.ExternalID] = true
		}
		return nil
	}); err != nil {
		return fmt.Errorf("read people: %w", err)
	}
	rep.People = len(userIDs)
	if len(userIDs) == 0 {
		// An empty user filter would list everybody's orders.
		log.Info("no synced person yet: no orders to list")
		return nil
	}
	for start := 0; start < len(userIDs); start += j.opts.UserIDsChunk {
		chunk := userIDs[start:min(start+j.opts.UserIDsChunk, len(userIDs))]
		listed, err := j.api.ListOrders(ctx, j.opts.CollectionID, j.opts.CompanyID, chunk, first, last)
		if err != nil {
			return fmt.Errorf("list orders: %w", err)
		}
		rep.OutsideWindow += listed.OutsideWindow
		rep.CountBelowRows += listed.CountBelowRows
		rows := make([]store.OrderRow, 0, len(listed.Orders))
		for _, o := range listed.Orders {
			row, ok := orderRow(o, j.opts.CollectionID, known)
			if !ok {
				log.Warn("listed order without id or creation time skipped")
				continue
			}
			rows = append(rows, row)
		}
		rep.Listed += len(rows)
		res, err := j.store.UpsertOrders(ctx, j.opts.Tenant, rows)
		if err != nil {
			return fmt.Errorf("store orders: %w", err)
		}
		rep.Ingested.Orders += res.Orders
		rep.Ingested.LineItems += res.LineItems
		rep.Written += res.Orders + res.LineItems
	}
	if rep.OutsideWindow > 0 {
		log.Warn("the platform listed orders placed outside the days asked for; they are ignored",
			zap.Int("orders", rep.OutsideWindow), zap.String("firstDay", rep.FirstDay), zap.String("lastDay", rep.LastDay))
	}
	return nil
}

// orderRow maps a listed order; the person is kept only when the store
// knows them.
func orderRow(o api.Order, collectionID string, known map[string]bool) (store.OrderRow, bool) {
	if o.Id == nil || *o.Id == "" || o.CreatedAt == nil {
		return store.OrderRow{}, false
	}
	row := store.OrderRow{OrderID: *o.Id, CollectionID: collectionID, OrderNumber: deref(o.OrderNumber), PlacedAt: *o.CreatedAt}
	switch {
	case o.User != nil && known[deref(o.User.ExternalId)]:
		row.ExternalID = deref(o.User.ExternalId)
	case known[deref(o.ExternalId)]:
		row.ExternalID = deref(o.ExternalId)
	}
	if o.OrderLineItems == nil {
		return row, true
	}
	seen := map[string]bool{}
	for _, l := range *o.OrderLineItems {
		id := deref(l.Id)
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		li := store.LineItemRow{
			LineItemID: id, ProductID: deref(l.ProductId), VariantID: deref(l.VariantId), Title: deref(l.Title),
			ProductTitle: deref(l.ProductTitle), VariantTitle: deref(l.VariantTitle), Quantity: derefF(l.Quantity),
			Price: derefF(l.Price), RetailPrice: derefF(l.RetailPrice), Sha: deref(l.Sha),
		}
		if l.Image != nil {
			li.ImageURL, li.ImageAspectRatio = deref(l.Image.Url), l.Image.AspectRatio
		}
		if l.Personalizations != nil {
			if b, err := json.Marshal(l.Personalizations); err == nil {
				li.Personalizations = string(b)
			}
		}
		row.Lines = append(row.Lines, li)
	}
	return row, true
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func derefF(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}
