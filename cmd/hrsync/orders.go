package main

import (
	"errors"
	"fmt"
	"hrsync/sync/orders"
	"io"

	"github.com/spf13/cobra"

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
			orders.PrintProduct(w, p)
			return nil
		},
	}
	addConfigFlags(get)
	get.Flags().String("lang", "", "accept-language: en-US, fr-FR, fr-CA, es-ES, es-MX, en-AU, en-GB, fr, *...")
	get.Flags().String("country", "", "country code whose price delta the prices include (e.g. CA)")
	addOutputFlag(get)
	cmd.AddCommand(get)
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
	orders.PrintOrder(w, tenant, d)
	return nil
}
