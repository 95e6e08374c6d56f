package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"hrsync/api"
	"hrsync/apiclient"
	"hrsync/config"
	"hrsync/internal/runner"
	"hrsync/model"
	"hrsync/store"
	"hrsync/sync/orders"
)

// ordersJob builds the orders job of one tenant.
func (a *app) ordersJob(t config.Tenant, st *store.Store, client orders.API) (*orders.Job, error) {
	o := t.Orders
	return orders.New(orders.Options{
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
	}, st, client, a.log.With(zap.String("tenant", t.Name), zap.String("job", "orders")))
}

// ordersFunc is one orders cycle of a tenant as a runner.Func (`hrsync run
// orders` and the daemon): its report is printed to opts.out. client must
// also read orders (an *apiclient.Client does).
func (a *app) ordersFunc(t config.Tenant, st *store.Store, client any, opts jobOptions) runner.Func {
	return func(ctx context.Context) (runner.Result, error) {
		api, ok := client.(orders.API)
		if !ok {
			return runner.Result{Outcome: model.OutcomeFailed}, fmt.Errorf("orders job of %s: the API client cannot read orders", t.Name)
		}
		job, err := a.ordersJob(t, st, api)
		if err != nil {
			return runner.Result{Outcome: model.OutcomeFailed}, err
		}
		rep, err := job.RunOnce(ctx)
		if rep == nil {
			return runner.Result{}, err
		}
		if opts.out != nil {
			if perr := printOrdersReport(opts.out, rep, false); perr != nil && err == nil {
				err = perr
			}
		}
		res := runner.Result{Outcome: rep.Outcome(), Counts: rep.Counts(), Report: rep}
		if byStatus, serr := st.OrdersByStatus(ctx, t.Name); serr == nil {
			res.OrdersByStatus = byStatus
		}
		return res, err
	}
}

func printOrdersReport(w io.Writer, rep *orders.Report, asJSON bool) error {
	if asJSON {
		b, err := json.Marshal(rep)
		if err != nil {
			return fmt.Errorf("encode report: %w", err)
		}
		_, err = fmt.Fprintln(w, string(b))
		return err
	}
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
	return nil
}

// newOrdersCmd is `hrsync orders show`.
func newOrdersCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "orders",
		Short: "Look at the orders held in the reporting tables",
	}
	show := &cobra.Command{
		Use:   "show ORDER_ID",
		Short: "Print what the reporting tables hold for one order (status, lines, shipments, history)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := outputFormat(cmd)
			if err != nil {
				return err
			}
			a, st, err := loadAppStoreReadOnly(cmd)
			if err != nil {
				return err
			}
			tenants, err := a.tenants(cmd)
			if err != nil {
				_ = st.Close()
				return err
			}
			defer st.Close() //nolint:errcheck // read only
			for _, t := range tenants {
				d, ok, err := st.Order(cmd.Context(), t.Name, args[0])
				if err != nil {
					return err
				}
				if !ok {
					continue
				}
				return printOrder(cmd.OutOrStdout(), t.Name, d, format == outputJSON)
			}
			return withCode(exitFailed, fmt.Errorf("order %s: %w", args[0], store.ErrNotFound))
		},
	}
	addConfigFlags(show)
	addOutputFlag(show)
	cmd.AddCommand(show)
	return cmd
}

func printOrder(w io.Writer, tenant string, d store.OrderDetail, asJSON bool) error {
	if asJSON {
		d.Lines, d.History, d.LineHistory = nonNil(d.Lines), nonNil(d.History), nonNil(d.LineHistory)
		if d.ShipmentsByLine == nil {
			d.ShipmentsByLine = map[string][]store.Shipment{}
		}
		return printJSON(w, struct {
			Tenant string `json:"tenant"`
			store.OrderDetail
		}{tenant, d})
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "order\t%s (#%s, tenant %s)\n", d.OrderID, d.OrderNumber, tenant)
	fmt.Fprintf(tw, "person\t%s\n", d.ExternalID)
	fmt.Fprintf(tw, "placed\t%s\n", d.PlacedAt.Format(time.RFC3339))
	status := d.Status
	if status == "" {
		status = "(not polled yet)"
	}
	fmt.Fprintf(tw, "status\t%s\n", status)
	if d.ShippedAt != nil {
		fmt.Fprintf(tw, "shipped\t%s\n", d.ShippedAt.Format(time.RFC3339))
	}
	fmt.Fprintf(tw, "final\t%t\n", d.Final)
	if d.PollingStopped {
		fmt.Fprintf(tw, "polling\tstopped (older than orders.stopPollingAfter)\n")
	}
	_ = tw.Flush()
	fmt.Fprintln(w, "\nline items:")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  ID\tPRODUCT\tTITLE\tQTY\tPRICE\tSTATUS\tPARCELS")
	for _, l := range d.Lines {
		var parcels []string
		for _, s := range d.ShipmentsByLine[l.LineItemID] {
			parcels = append(parcels, s.TrackingNumber)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%g\t%s\t%s\t%s\n", l.LineItemID, l.ProductID, l.Title, l.Quantity, money(l.Price), l.Status, strings.Join(parcels, ", "))
	}
	_ = tw.Flush()
	fmt.Fprintln(w, "\nhistory:")
	type ev struct {
		at   time.Time
		text string
	}
	var evs []ev
	for _, h := range d.History {
		evs = append(evs, ev{h.ObservedAt, fmt.Sprintf("order %s -> %s", orNone(h.Previous), h.Status)})
	}
	for _, h := range d.LineHistory {
		evs = append(evs, ev{h.ObservedAt, fmt.Sprintf("line %s %s -> %s", h.LineItemID, orNone(h.Previous), h.Status)})
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].at.Before(evs[j].at) })
	for _, e := range evs {
		fmt.Fprintf(w, "  %s  %s\n", e.at.Format(time.RFC3339), e.text)
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// newProductCmd is `hrsync product get`.
func newProductCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "product",
		Short: "Look up products at the platform",
	}
	get := &cobra.Command{
		Use:   "get COLLECTION PRODUCT",
		Short: "Read one product live from the platform, in a language and country",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := outputFormat(cmd)
			if err != nil {
				return err
			}
			a, err := loadApp(cmd)
			if err != nil {
				return err
			}
			client, err := a.newClient()
			if err != nil {
				return err
			}
			lang, _ := cmd.Flags().GetString("lang")
			country, _ := cmd.Flags().GetString("country")
			p, err := client.GetProduct(cmd.Context(), args[0], args[1], apiclient.ProductOptions{AcceptLanguage: lang, CountryCode: country})
			if err != nil {
				if errors.Is(err, apiclient.ErrInvalidRequest) {
					return withCode(exitUsage, err)
				}
				return err
			}
			w := cmd.OutOrStdout()
			if format == outputJSON {
				return printJSON(w, p)
			}
			return printProduct(w, p)
		},
	}
	addConfigFlags(get)
	get.Flags().String("lang", "", "accept-language: en-US, fr-FR, fr-CA, es-ES, es-MX, en-AU, en-GB, fr, *...")
	get.Flags().String("country", "", "country code whose price delta the prices include (e.g. CA)")
	addOutputFlag(get)
	cmd.AddCommand(get)
	return cmd
}

// printProduct prints a product as text, prices as money.
func printProduct(w io.Writer, p *api.Product) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "id\t%s\n", p.Id)
	fmt.Fprintf(tw, "title\t%s\n", p.Title)
	fmt.Fprintf(tw, "brand\t%s\n", derefOr(p.Brand, "-"))
	fmt.Fprintf(tw, "model\t%s\n", derefOr(p.Model, "-"))
	fmt.Fprintf(tw, "status\t%s (creation %s)\n", p.Status, p.CreationStatus)
	fmt.Fprintf(tw, "in stock\t%t\n", p.IsInStock)
	if p.PriceRange.MinVariantPrice != nil && p.PriceRange.MaxVariantPrice != nil {
		fmt.Fprintf(tw, "price\t%s - %s\n", money(*p.PriceRange.MinVariantPrice), money(*p.PriceRange.MaxVariantPrice))
	}
	var tags []string
	for _, t := range p.Tags {
		if t.Name != nil {
			tags = append(tags, *t.Name)
		}
	}
	fmt.Fprintf(tw, "tags\t%s\n", strings.Join(tags, ", "))
	_ = tw.Flush()
	fmt.Fprintln(w, "variants:")
	for _, v := range p.Variants {
		price := "-"
		if v.Price != nil {
			price = money(*v.Price)
		}
		avail := v.IsAvailableForSale != nil && *v.IsAvailableForSale
		fmt.Fprintf(w, "  %s  %s  %s  available=%t\n", derefOr(v.Id, "-"), derefOr(v.Title, "-"), price, avail)
	}
	return nil
}

func derefOr(p *string, def string) string {
	if p == nil || *p == "" {
		return def
	}
	return *p
}
