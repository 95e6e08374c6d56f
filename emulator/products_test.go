package emulator

import (
	"context"
	"net/http"
	"testing"

	"hrsync/api"
)

func TestNegotiateLocale(t *testing.T) {
	cases := []struct{ header, want string }{
		{"", "en-US"},
		{"*", "en-US"},
		{"fr", "fr-FR"},
		{"FR-ca", "fr-CA"},
		{"fr-ca", "fr-CA"},
		{"es-MX;q=0.9, fr;q=0.8", "es-MX"},
		{"fr;q=0.8, es-MX;q=0.9", "es-MX"},
		{"fr;q=0", "en-US"},
		{"fr;q=0, es", "es-ES"},
		{"de", "en-US"},
		{"de, fr;q=0.5", "fr-FR"},
		{"es", "es-ES"},
		{"es-AR", "es-MX"},
		{"en-NZ", "en-GB"}, // x/text groups en-NZ with en-GB (en-001)
		{"en-AU", "en-AU"},
		{"en-gb", "en-GB"},
		{"en", "en-US"},
		{"zz-ZZ, fr-CA;q=0.3", "fr-CA"},
		{";;;", "en-US"},
	}
	for _, c := range cases {
		t.Run(c.header, func(t *testing.T) {
			if got := NegotiateLocale(c.header); got != c.want {
				t.Errorf("NegotiateLocale(%q) = %s, want %s", c.header, got, c.want)
			}
		})
	}
}

func TestGetProduct(t *testing.T) {
	ctx := context.Background()
	get := func(t *testing.T, f *fixture, coll, id string, params api.GetProductParams) (*api.Product, http.Header) {
		t.Helper()
		resp, err := f.client.GetProductWithResponse(ctx, u(coll), u(id), &params)
		if err != nil {
			t.Fatal(err)
		}
		if resp.JSON200 == nil {
			t.Fatalf("status %d body %s", resp.StatusCode(), resp.Body)
		}
		return resp.JSON200, resp.HTTPResponse.Header
	}

	t.Run("locale negotiation over HTTP", func(t *testing.T) {
		f := newFixture(t, nil)
		cases := []struct {
			header    *string
			locale    string
			title     string
			option    string
			value     string
			tagInLang string
		}{
			{nil, "en-US", "Engraved Water Bottle", "Color", "Black", "Drinkware"},
			{sp("*"), "en-US", "Engraved Water Bottle", "Color", "Black", "Drinkware"},
			{sp("fr"), "fr-FR", "Gourde gravée", "Couleur", "Noir", "Gourdes et tasses"},
			{sp("FR-ca"), "fr-CA", "Bouteille d'eau gravée", "Couleur", "Noir", "Articles pour boire"},
			{sp("es-MX;q=0.9, fr;q=0.8"), "es-MX", "Termo grabado", "Color", "Negro", "Termos y tazas"},
			{sp("fr;q=0"), "en-US", "Engraved Water Bottle", "Color", "Black", "Drinkware"},
			{sp("de"), "en-US", "Engraved Water Bottle", "Color", "Black", "Drinkware"},
			{sp("en-GB"), "en-GB", "Engraved Water Bottle", "Colour", "Black", "Drinkware"},
		}
		for _, c := range cases {
			name := "no header"
			if c.header != nil {
				name = *c.header
			}
			t.Run(name, func(t *testing.T) {
				p, h := get(t, f, PersonalizableCollectionID, BottleProductID, api.GetProductParams{AcceptLanguage: c.header})
				if h.Get("Content-Language") != c.locale {
					t.Errorf("Content-Language %q, want %s", h.Get("Content-Language"), c.locale)
				}
				if p.Title != c.title || *p.Options[0].Name != c.option || *(*p.Options[0].Values)[0].Title != c.value ||
					*p.Variants[0].Title != c.value || *p.Tags[0].Name != c.tagInLang {
					t.Errorf("title %q option %q value %q variant %q tag %q", p.Title, *p.Options[0].Name, *(*p.Options[0].Values)[0].Title, *p.Variants[0].Title, *p.Tags[0].Name)
				}
			})
		}
	})

	t.Run("prices include the country's delta only with countryCode", func(t *testing.T) {
		f := newFixture(t, nil)
		cases := []struct {
			name               string
			country            *string
			black, silver, min float64
			retailMax          float64
		}{
			{"no countryCode", nil, 24, 26, 24, 32},
			{"CA", sp("CA"), 27, 29, 27, 35},
			{"lower case gb", sp("gb"), 28.5, 30.5, 28.5, 36.5},
			{"a country without delta", sp("US"), 24, 26, 24, 32},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				p, _ := get(t, f, PersonalizableCollectionID, BottleProductID, api.GetProductParams{CountryCode: c.country})
				if *p.Variants[0].Price != c.black || *p.Variants[1].Price != c.silver || *p.PriceRange.MinVariantPrice != c.min ||
					*p.RetailPriceRange.MaxVariantPrice != c.retailMax {
					t.Errorf("prices %v %v range %v retail max %v", *p.Variants[0].Price, *p.Variants[1].Price, *p.PriceRange.MinVariantPrice, *p.RetailPriceRange.MaxVariantPrice)
				}
				if p.PriceDeltaByCountry == nil || (*p.PriceDeltaByCountry)["CA"] != 3 {
					t.Errorf("priceDeltaByCountry %v", p.PriceDeltaByCountry)
				}
			})
		}
		t.Run("a product without deltas", func(t *testing.T) {
			p, _ := get(t, f, PlainCollectionID, NotebookProductID, api.GetProductParams{CountryCode: sp("CA")})
			if p.PriceDeltaByCountry != nil || *p.Variants[0].Price != 12.5 {
				t.Errorf("deltas %v price %v", p.PriceDeltaByCountry, *p.Variants[0].Price)
			}
		})
		t.Run("a malformed countryCode is 400", func(t *testing.T) {
			status, _, body := f.do(t, "GET", "/api/ext/v1/collection/"+PersonalizableCollectionID+"/product/"+BottleProductID+"?countryCode=CAN", tokDataset, "")
			wantError(t, status, body, http.StatusBadRequest, "invalid_input", "countryCode")
		})
	})

	t.Run("variants, options, images, regions, flags", func(t *testing.T) {
		f := newFixture(t, nil)
		hoodie, _ := get(t, f, PersonalizableCollectionID, HoodieProductID, api.GetProductParams{})
		if len(hoodie.Variants) != 3 || *hoodie.Variants[2].IsAvailableForSale || *hoodie.Variants[1].Title != "M / Navy" ||
			len(*hoodie.Variants[1].Options) != 2 || *(*hoodie.Variants[1].Options)[0].Value.Title != "M" {
			t.Errorf("variants %s", mustJSON(t, hoodie.Variants))
		}
		if hoodie.SizeChartTable == nil || hoodie.SizeChartImages == nil || hoodie.FeaturedImage == nil || hoodie.CustomFields == nil || !hoodie.IsPersonalized {
			t.Errorf("hoodie %s", mustJSON(t, hoodie))
		}
		blacklisted := false
		for _, r := range hoodie.ShippingRegions {
			if *r.CountryCode == "BR" && *r.IsBlacklisted {
				blacklisted = true
			}
		}
		if !blacklisted {
			t.Errorf("regions %s, want BR blacklisted", mustJSON(t, hoodie.ShippingRegions))
		}
		plant, _ := get(t, f, PlainCollectionID, PlantProductID, api.GetProductParams{AcceptLanguage: sp("fr")})
		if plant.Status != api.Draft || plant.HiddenAt == nil || plant.CreationStatus != api.ProcessingStatusError ||
			plant.Errors == nil || !*plant.Errors.IsBlank || plant.Title != "Plante de bureau" || plant.Description != "A small succulent in a ceramic pot." {
			t.Errorf("plant %s", mustJSON(t, plant))
		}
	})

	t.Run("personalization query parameters are checked and ignored", func(t *testing.T) {
		f := newFixture(t, nil)
		status, _, body := f.do(t, "GET", "/api/ext/v1/collection/"+PersonalizableCollectionID+"/product/"+BottleProductID+"?firstName=Ann&startDate=2020-01-01T00:00:00Z", tokDataset, "")
		if status != http.StatusOK {
			t.Errorf("status %d body %s", status, body)
		}
		status, _, body = f.do(t, "GET", "/api/ext/v1/collection/"+PersonalizableCollectionID+"/product/"+BottleProductID+"?startDate=yesterday", tokDataset, "")
		wantError(t, status, body, http.StatusBadRequest, "invalid_input", "startDate")
		status, _, body = f.do(t, "GET", "/api/ext/v1/collection/"+PersonalizableCollectionID+"/product/not-a-uuid", tokDataset, "")
		wantError(t, status, body, http.StatusBadRequest, "invalid_input", "productId")
	})
}
