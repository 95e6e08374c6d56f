package main

import (
	"errors"
	"fmt"
	"hrsync/internal/textfmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"hrsync/api"
	"hrsync/apiclient"
	"hrsync/store"
)

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
			return withReadOnly(cmd, false, func(ro readOnly) error {
				for _, t := range ro.tenants {
					d, ok, err := ro.st.Order(cmd.Context(), t.Name, args[0])
					if err != nil {
						return err
					}
					if ok {
						return printOrder(cmd.OutOrStdout(), t.Name, d, ro.asJSON)
					}
				}
				return withCode(exitFailed, fmt.Errorf("order %s: %w", args[0], store.ErrNotFound))
			})
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
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%g\t%s\t%s\t%s\n", l.LineItemID, l.ProductID, l.Title, l.Quantity, textfmt.Money(l.Price), l.Status, strings.Join(parcels, ", "))
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
		fmt.Fprintf(tw, "price\t%s - %s\n", textfmt.Money(*p.PriceRange.MinVariantPrice), textfmt.Money(*p.PriceRange.MaxVariantPrice))
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
			price = textfmt.Money(*v.Price)
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
