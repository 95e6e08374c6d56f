package orders

import (
	"context"
	"fmt"
	"io"

	"hrsync/config"
	"hrsync/internal/metrics"
	"hrsync/internal/runner"
	"hrsync/model"
)

// The orders job registers with the runner as the last job of a tenant.
func init() {
	runner.RegisterKind(runner.Kind{
		Job:      model.JobOrders,
		Order:    40,
		Short:    "Poll orders into the reporting tables",
		Schedule: func(t config.Tenant) string { return t.Schedules.Orders },
		Gauges:   []string{metrics.NameOrdersNotPolled},
		Cycle:    cycle,
	})
}

// OptionsFor maps a tenant's configuration to the orders job's options.
func OptionsFor(t config.Tenant) Options {
	o := t.Orders
	return Options{
		Tenant:           t.Name,
		CompanyID:        t.CompanyID,
		CollectionID:     t.CollectionID,
		BackfillDays:     o.BackfillDays,
		OverlapDays:      o.OverlapDays,
		UserIDsChunk:     o.UserIDsChunk,
		PollConcurrency:  o.PollConcurrency,
		StopPollingAfter: o.StopPollingAfter.Duration,
		ProductRefresh:   o.ProductRefresh.Duration,
		Country:          o.Country,
		Language:         o.Language,
	}
}

// cycle is one orders cycle of a tenant as a runner.Func: its report is
// printed to env.Out, and the tenant's orders by status feed the metrics.
func cycle(env runner.Env, t config.Tenant) runner.Func {
	return func(ctx context.Context) (runner.Result, error) {
		if env.API == nil {
			return runner.Result{Outcome: model.OutcomeFailed}, fmt.Errorf("orders job of %s: no API client", t.Name)
		}
		job, err := New(OptionsFor(t), env.Store, env.API, env.JobLog(model.JobOrders, t.Name))
		if err != nil {
			return runner.Result{Outcome: model.OutcomeFailed}, err
		}
		rep, err := job.RunOnce(ctx)
		if rep == nil {
			return runner.Result{}, err
		}
		if env.Out != nil {
			PrintReport(env.Out, rep)
		}
		res := runner.Result{Outcome: rep.Outcome(), Counts: rep.Counts(), Report: rep}
		if byStatus, serr := env.Store.OrdersByStatus(ctx, t.Name); serr == nil {
			res.OrdersByStatus = byStatus
		}
		return res, err
	}
}

// PrintReport prints what an orders run did.
func PrintReport(w io.Writer, rep *Report) {
	fmt.Fprintf(w, "tenant %s: %s (run %s) days %s..%s people=%d listed=%d ordersWritten=%d lineItemsWritten=%d\n",
		rep.Tenant, rep.Outcome(), rep.RunID, rep.FirstDay, rep.LastDay, rep.People, rep.Listed, rep.Ingested.Orders, rep.Ingested.LineItems)
	fmt.Fprintf(w, "  polled=%d pollErrors=%d statusChanges=%d lineStatusChanges=%d newShipments=%d final=%d stoppedPolling=%d\n",
		rep.Polled, rep.PollErrors, rep.Status.OrdersChanged, rep.Status.LinesChanged, rep.Status.NewShipments, rep.Status.BecameFinal, rep.StoppedPolling)
	fmt.Fprintf(w, "  productsRead=%d productsChanged=%d productErrors=%d written=%d\n",
		rep.ProductsRead, rep.ProductsChanged, rep.ProductErrors, rep.Written)
	if rep.StoppedPolling > 0 {
		fmt.Fprintf(w, "  %d orders are older than orders.stopPollingAfter and are no longer polled (orders.polling_stopped)\n", rep.StoppedPolling)
	}
	for _, e := range rep.Errors {
		fmt.Fprintf(w, "  error: %s\n", e)
	}
}
