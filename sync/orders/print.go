package orders

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"hrsync/api"
	"hrsync/internal/textfmt"
	"hrsync/store"
)

// PrintOrder prints what the reporting tables hold for one order of a
// tenant: its status, lines, shipments and history.
func PrintOrder(w io.Writer, tenant string, d store.OrderDetail) {
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
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// PrintProduct prints a product as text, prices as money.
func PrintProduct(w io.Writer, p *api.Product) {
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
}

func derefOr(p *string, def string) string {
	if p == nil || *p == "" {
		return def
	}
	return *p
}
