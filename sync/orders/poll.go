package orders

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/google/uuid"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"hrsync/api"
	"hrsync/apiclient"
	"hrsync/store"
)

func newRunID() string { return uuid.NewString() }

// forEachLimited calls fn(i) for i in [0, n) with at most limit calls at
// once; it stops starting calls when ctx is done and waits for those in
// flight.
func forEachLimited(ctx context.Context, n, limit int, fn func(ctx context.Context, i int)) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(limit)
	for i := range n {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			fn(gctx, i)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}

// poll reads the status of every open order and records what changed;
// orders older than StopPollingAfter are flagged instead.
func (j *Job) poll(ctx context.Context, log *zap.Logger, rep *Report) error {
	toPoll, err := j.stopStale(ctx, log, rep)
	if err != nil {
		return err
	}
	// Answers are recorded batch by batch while the next calls wait on the
	// network; a store error stops the calls not yet started.
	pollCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu      sync.Mutex
		results = make(chan store.OrderObservation, j.opts.ApplyBatch)
		werr    error
		done    = make(chan struct{})
	)
	go func() {
		defer close(done)
		werr = j.recordStatuses(ctx, results, cancel, &mu, rep)
	}()
	err = forEachLimited(pollCtx, len(toPoll), j.opts.PollConcurrency, func(ctx context.Context, i int) {
		o := toPoll[i]
		st, err := j.api.GetOrderStatus(ctx, o.CollectionID, o.OrderID, j.opts.CompanyID)
		if err != nil {
			mu.Lock()
			rep.PollErrors++
			rep.addError(fmt.Errorf("order status: %w", err))
			mu.Unlock()
			return
		}
		mu.Lock()
		rep.Polled++
		mu.Unlock()
		results <- observation(o.OrderID, st)
	})
	close(results)
	<-done
	if rep.PollErrors > 0 {
		// The orders whose status could not be read are left as they were
		// and polled again by the next run.
		log.Warn("some order status calls failed; those orders are unchanged", zap.Int("orders", rep.PollErrors),
			zap.Int("polled", rep.Polled), zap.String("firstError", rep.Errors[0]))
	}
	if werr != nil {
		return werr
	}
	if err != nil {
		return fmt.Errorf("poll stopped: %w", err)
	}
	return nil
}

// stopStale reads the open orders, flags those placed before
// StopPollingAfter as polled no more, and returns the others, to poll.
func (j *Job) stopStale(ctx context.Context, log *zap.Logger, rep *Report) ([]store.OpenOrder, error) {
	open, err := j.store.OpenOrders(ctx, j.opts.Tenant)
	if err != nil {
		return nil, err
	}
	now := j.opts.Now()
	cutoff := now.Add(-j.opts.StopPollingAfter)
	var (
		stale  []string
		toPoll []store.OpenOrder
	)
	for _, o := range open {
		if o.PlacedAt.Before(cutoff) {
			stale = append(stale, o.OrderID)
			continue
		}
		toPoll = append(toPoll, o)
	}
	if len(stale) > 0 {
		n, err := j.store.StopPolling(ctx, j.opts.Tenant, stale, now)
		if err != nil {
			return nil, err
		}
		rep.StoppedPolling = n
		rep.Written += n
		log.Warn("orders too old to poll any more: flagged polling_stopped", zap.Int("orders", n),
			zap.Duration("stopPollingAfter", j.opts.StopPollingAfter))
	}
	return toPoll, nil
}

// recordStatuses records the observations of results, ApplyBatch at a
// time, until results is closed. A store error cancels the polling
// (cancel) and is returned; the rest of results is drained, so that no
// caller blocks.
func (j *Job) recordStatuses(ctx context.Context, results <-chan store.OrderObservation, cancel context.CancelFunc,
	mu *sync.Mutex, rep *Report) error {
	batch := make([]store.OrderObservation, 0, j.opts.ApplyBatch)
	var werr error
	for ob := range results {
		if werr != nil {
			continue // drain, so that no caller blocks
		}
		batch = append(batch, ob)
		if len(batch) == cap(batch) {
			if werr = j.applyStatuses(ctx, batch, mu, rep); werr != nil {
				cancel()
			}
			batch = batch[:0]
		}
	}
	if werr == nil {
		werr = j.applyStatuses(ctx, batch, mu, rep)
	}
	return werr
}

// applyStatuses records one batch of observations and counts what changed
// into rep, under mu. What was polled is recorded even when the run is cut
// short (ctx cancelled).
func (j *Job) applyStatuses(ctx context.Context, batch []store.OrderObservation, mu *sync.Mutex, rep *Report) error {
	if len(batch) == 0 {
		return nil
	}
	res, err := j.store.ApplyOrderStatuses(context.WithoutCancel(ctx), j.opts.Tenant, batch, j.opts.Now())
	if err != nil {
		return fmt.Errorf("record order statuses: %w", err)
	}
	mu.Lock()
	defer mu.Unlock()
	rep.Status.OrdersChanged += res.OrdersChanged
	rep.Status.LinesChanged += res.LinesChanged
	rep.Status.TrackingChanged += res.TrackingChanged
	rep.Status.NewShipments += res.NewShipments
	rep.Status.BecameFinal += res.BecameFinal
	rep.Status.UnknownLines += res.UnknownLines
	rep.Status.Written += res.Written
	rep.Written += res.Written
	return nil
}

// observation maps an order status answer. A line whose allShipments is
// empty but that carries tracking keeps that tracking as its one parcel.
func observation(orderID string, st *api.OrderStatus) store.OrderObservation {
	ob := store.OrderObservation{OrderID: orderID, Status: string(st.Status)}
	for _, l := range st.LineItems {
		lo := store.LineObservation{LineItemID: deref(l.Id), Status: deref(l.Status),
			TrackingURL: deref(l.TrackingUrl), TrackingNumber: deref(l.TrackingNumber)}
		if lo.LineItemID == "" {
			continue
		}
		if l.AllShipments != nil {
			for _, s := range *l.AllShipments {
				lo.Shipments = append(lo.Shipments, store.Shipment{TrackingNumber: deref(s.TrackingNumber), TrackingURL: deref(s.TrackingUrl)})
			}
		}
		if len(lo.Shipments) == 0 && (lo.TrackingNumber != "" || lo.TrackingURL != "") {
			lo.Shipments = []store.Shipment{{TrackingNumber: lo.TrackingNumber, TrackingURL: lo.TrackingURL}}
		}
		ob.Lines = append(ob.Lines, lo)
	}
	return ob
}

// products looks up each product seen in an order that has no row yet or
// whose row is older than ProductRefresh.
func (j *Job) products(ctx context.Context, log *zap.Logger, rep *Report) error {
	now := j.opts.Now()
	due, err := j.store.ProductsDue(ctx, j.opts.Tenant, now.Add(-j.opts.ProductRefresh))
	if err != nil {
		return err
	}
	if len(due) == 0 {
		return nil
	}
	rows := make([]*store.ProductRow, len(due))
	var mu sync.Mutex
	err = forEachLimited(ctx, len(due), j.opts.PollConcurrency, func(ctx context.Context, i int) {
		p, err := j.api.GetProduct(ctx, due[i].CollectionID, due[i].ProductID,
			apiclient.ProductOptions{AcceptLanguage: j.opts.Language, CountryCode: j.opts.Country})
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			rep.ProductErrors++
			rep.addError(fmt.Errorf("product: %w", err))
			return
		}
		row, err := productRow(due[i], p, j.opts.Country, j.opts.Language)
		if err != nil {
			rep.ProductErrors++
			rep.addError(err)
			return
		}
		rep.ProductsRead++
		rows[i] = &row
	})
	var save []store.ProductRow
	for _, r := range rows {
		if r != nil {
			save = append(save, *r)
		}
	}
	if len(save) > 0 {
		n, serr := j.store.SaveProducts(context.WithoutCancel(ctx), j.opts.Tenant, save, j.opts.Now())
		if serr != nil {
			return fmt.Errorf("store products: %w", serr)
		}
		rep.ProductsChanged = n
		rep.Written += n
	}
	if err != nil {
		return fmt.Errorf("product lookups stopped: %w", err)
	}
	log.Debug("products looked up", zap.Int("read", rep.ProductsRead), zap.Int("changed", rep.ProductsChanged))
	return nil
}

// productRow maps a product; raw keeps the whole document.
func productRow(ref store.ProductRef, p *api.Product, country, language string) (store.ProductRow, error) {
	raw, err := json.Marshal(p)
	if err != nil {
		return store.ProductRow{}, fmt.Errorf("encode product: %w", err)
	}
	row := store.ProductRow{
		ProductID: ref.ProductID, CollectionID: ref.CollectionID, Title: p.Title, Brand: p.Brand, Model: p.Model,
		Status: string(p.Status), CreationStatus: string(p.CreationStatus), InStock: p.IsInStock,
		Discontinued: p.IsDiscontinued, MinPrice: p.PriceRange.MinVariantPrice, MaxPrice: p.PriceRange.MaxVariantPrice,
		CountryCode: country, Language: language, Raw: string(raw),
	}
	for _, t := range p.Tags {
		if n := deref(t.Name); n != "" {
			row.Tags = append(row.Tags, n)
		}
	}
	return row, nil
}
