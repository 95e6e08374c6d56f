package emulator

import (
	"math"
	"net/http"
	"sort"
	"strings"

	openapi_types "github.com/oapi-codegen/runtime/types"
	"golang.org/x/text/language"

	"hrsync/api"
)

// NegotiateLocale picks the supported locale (see Locales) for an
// Accept-Language header value, with golang.org/x/text/language: entries
// are weighed by q (q=0 excludes one), a bare language takes its first
// supported region (fr gives fr-FR, es gives es-ES), an unsupported region
// takes the nearest supported one (es-AR gives es-MX), case does not
// matter, and "*", an empty header, an unreadable one or a language not
// supported at all give en-US.
func NegotiateLocale(header string) string {
	locales := Locales()
	header = strings.TrimSpace(header)
	if header == "" {
		return locales[0]
	}
	tags, _, err := language.ParseAcceptLanguage(header)
	if err != nil {
		tags = nil
		// Keep the entries that can be read: one bad entry does not void the rest.
		type weighted struct {
			tag language.Tag
			q   float32
		}
		var good []weighted
		for _, part := range strings.Split(header, ",") {
			t, q, err := language.ParseAcceptLanguage(part)
			if err == nil && len(t) == 1 {
				good = append(good, weighted{t[0], q[0]})
			}
		}
		sort.SliceStable(good, func(i, j int) bool { return good[i].q > good[j].q })
		for _, g := range good {
			tags = append(tags, g.tag)
		}
	}
	if len(tags) == 0 {
		return locales[0]
	}
	supported := make([]language.Tag, len(locales))
	for i, l := range locales {
		supported[i] = language.MustParse(l)
	}
	_, idx, conf := language.NewMatcher(supported).Match(tags...)
	if conf == language.No {
		return locales[0]
	}
	return locales[idx]
}

// GetProduct answers one product of the collection, in the negotiated
// locale, with prices that include the country's delta when countryCode is
// given. The personalization query parameters are accepted and ignored.
func (h apiHandlers) GetProduct(w http.ResponseWriter, r *http.Request, collectionID api.CollectionIdUUID, productID openapi_types.UUID, params api.GetProductParams) {
	country := ""
	if params.CountryCode != nil {
		country = strings.ToUpper(strings.TrimSpace(*params.CountryCode))
		if len(country) != 2 || strings.Trim(country, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
			writeAPIError(w, errInvalid("countryCode %q: want a two-letter country code", *params.CountryCode))
			return
		}
	}
	e := h.e
	if _, ok := e.catalog.collections[collectionID.String()]; !ok {
		writeAPIError(w, errNotFound("collection %s not found", collectionID))
		return
	}
	p, ok := e.catalog.products[productID.String()]
	if !ok || p.CollectionID != collectionID.String() {
		writeAPIError(w, errNotFound("product %s not found in collection", productID))
		return
	}
	header := ""
	if params.AcceptLanguage != nil {
		header = *params.AcceptLanguage
	}
	locale := NegotiateLocale(header)
	w.Header().Set("Content-Language", locale)
	w.Header().Set("Vary", "Accept-Language")
	writeJSON(w, http.StatusOK, renderProduct(p, locale, country))
}

// round2 rounds a price to cents, so that a delta does not leave float noise.
func round2(v float64) float64 { return math.Round(v*100) / 100 }

// renderProduct builds the product's answer in locale, with country's
// price delta included when country is not empty.
func renderProduct(p *productDef, locale, country string) api.Product {
	delta := 0.0
	if country != "" {
		delta = p.PriceDelta[country]
	}
	txt := p.text(locale)
	out := api.Product{
		Id: p.ID, Title: txt.Title, Description: txt.Description, DescriptionV2: txt.DescriptionV2,
		Slug: p.Slug, Status: p.Status, CreationStatus: p.CreationStatus, HiddenAt: p.HiddenAt,
		IsInStock: p.InStock, IsDiscontinued: p.Discontinued, IsPersonalized: p.Personalized,
		Model: nilIfEmpty(p.Model), Brand: nilIfEmpty(p.Brand), Notes: nilIfEmpty(p.Notes),
		SizeChartTable: nilIfEmpty(p.SizeChartTable), Errors: p.Errors,
		Options: []api.ProductOption{}, Tags: []api.Tag{}, Variants: []api.Variant{}, ShippingRegions: []api.ShippingRegion{},
	}
	if p.PriceDelta != nil {
		deltas := make(map[string]float64, len(p.PriceDelta))
		for k, v := range p.PriceDelta {
			deltas[k] = v
		}
		out.PriceDeltaByCountry = &deltas
	}
	for _, o := range p.Options {
		values := make([]api.OptionValue, 0, len(o.Values))
		for _, v := range o.Values {
			values = append(values, optionValue(p, v, locale))
		}
		out.Options = append(out.Options, api.ProductOption{Name: ptr(p.word(o.Name, locale)), Values: &values})
	}
	minP, maxP, minR, maxR := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for i := range p.Variants {
		v := &p.Variants[i]
		price, retail := v.Price+delta, v.RetailPrice+delta
		minP, maxP = math.Min(minP, price), math.Max(maxP, price)
		minR, maxR = math.Min(minR, retail), math.Max(maxR, retail)
		opts := make([]api.VariantOption, 0, len(v.Values))
		for j, val := range v.Values {
			for _, ov := range p.Options[j].Values {
				if ov.Title == val {
					opts = append(opts, api.VariantOption{Name: ptr(p.word(p.Options[j].Name, locale)), Value: ptr(optionValue(p, ov, locale))})
				}
			}
		}
		images := make([]api.Image, 0, len(v.Images))
		for _, im := range v.Images {
			images = append(images, image(im))
		}
		out.Variants = append(out.Variants, api.Variant{
			Id: ptr(v.ID), Title: ptr(p.variantTitle(v, locale)), Price: ptr(round2(price)), RetailPrice: ptr(round2(retail)),
			IsAvailableForSale: ptr(v.Available), Options: &opts, Images: &images,
		})
	}
	if len(p.Variants) > 0 {
		out.PriceRange = api.PriceRange{MinVariantPrice: ptr(round2(minP)), MaxVariantPrice: ptr(round2(maxP))}
		out.RetailPriceRange = &api.PriceRange{MinVariantPrice: ptr(round2(minR)), MaxVariantPrice: ptr(round2(maxR))}
	}
	for _, t := range p.Tags {
		out.Tags = append(out.Tags, api.Tag{Name: ptr(p.word(t, locale))})
	}
	for _, rg := range p.Regions {
		provinces := make([]api.Province, 0, len(rg.Provinces))
		for _, pr := range rg.Provinces {
			provinces = append(provinces, api.Province{ProvinceName: ptr(pr[0]), ProvinceCode: ptr(pr[1])})
		}
		out.ShippingRegions = append(out.ShippingRegions, api.ShippingRegion{
			CountryName: ptr(rg.Name), CountryCode: ptr(rg.Code), IsBlacklisted: ptr(rg.Blacklisted), Provinces: &provinces,
		})
	}
	if p.Featured != nil {
		out.FeaturedImage = ptr(image(*p.Featured))
	}
	if len(p.SizeChartImages) > 0 {
		charts := make([]api.SizeChartImage, 0, len(p.SizeChartImages))
		for _, im := range p.SizeChartImages {
			charts = append(charts, api.SizeChartImage{Url: ptr(im.URL), Width: ptr(im.Width), Height: ptr(im.Height)})
		}
		out.SizeChartImages = &charts
	}
	if p.CustomFields != nil {
		out.CustomFields = ptr(clone(p.CustomFields))
	}
	return out
}

func optionValue(p *productDef, v optionValueDef, locale string) api.OptionValue {
	out := api.OptionValue{Title: ptr(p.word(v.Title, locale))}
	if v.Color != "" {
		out.ColorCode = ptr(v.Color)
	}
	if v.Color2 != "" {
		out.ColorCode2 = ptr(v.Color2)
	}
	return out
}

func image(im imageDef) api.Image {
	out := api.Image{Url: ptr(im.URL), Width: ptr(im.Width), Height: ptr(im.Height)}
	if im.LowResURL != "" {
		out.LowResUrl = ptr(im.LowResURL)
	}
	return out
}

func nilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
