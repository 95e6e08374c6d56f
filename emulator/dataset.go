package emulator

import (
	"time"

	"hrsync/api"
	"hrsync/emulator/personalization"
)

// The built-in dataset's fixed ids, so that docs, examples and tests can
// name them. GET /_emulator/dataset lists them all.
const (
	DatasetCompanyID = "10000000-0000-4000-8000-000000000001"

	// PersonalizableCollectionID is the collection that can be personalized
	// (its products are engraved or embroidered).
	PersonalizableCollectionID = "20000000-0000-4000-8000-000000000001"
	// PlainCollectionID is a collection that cannot be personalized.
	PlainCollectionID = "20000000-0000-4000-8000-000000000002"

	BottleProductID   = "30000000-0000-4000-8000-000000000001" // personalizable, with country price deltas
	HoodieProductID   = "30000000-0000-4000-8000-000000000002" // personalizable, sizes, size chart, a sold-out variant
	NotebookProductID = "30000000-0000-4000-8000-000000000003" // plain, no price deltas
	PlantProductID    = "30000000-0000-4000-8000-000000000004" // plain, Draft, hidden, with error flags

	BottleBlackVariantID  = "31000000-0000-4000-8000-000000000011"
	BottleSilverVariantID = "31000000-0000-4000-8000-000000000012"
	HoodieSVariantID      = "31000000-0000-4000-8000-000000000021"
	HoodieMVariantID      = "31000000-0000-4000-8000-000000000022"
	HoodieLVariantID      = "31000000-0000-4000-8000-000000000023"
	NotebookVariantID     = "31000000-0000-4000-8000-000000000031"
	PlantVariantID        = "31000000-0000-4000-8000-000000000041"

	PersonJamesID   = "40000000-0000-4000-8000-000000000001" // externalId E1001
	PersonJeanLucID = "40000000-0000-4000-8000-000000000002" // externalId E1002, born on 29 February
	PersonAnaID     = "40000000-0000-4000-8000-000000000003" // externalId E1003
	PersonZoeID     = "40000000-0000-4000-8000-000000000004" // externalId E1004

	OrderPlacedID           = "50000000-0000-4000-8000-000000000001" // Placed
	OrderPendingID          = "50000000-0000-4000-8000-000000000002" // Pending, personalized, created 23:59:59
	OrderPartiallyShippedID = "50000000-0000-4000-8000-000000000003" // Partially Shipped, one line canceled
	OrderShippedID          = "50000000-0000-4000-8000-000000000004" // Shipped in two parcels
)

// Locales are the supported locales, the default (en-US) first.
func Locales() []string {
	return []string{"en-US", "fr-FR", "fr-CA", "es-ES", "es-MX", "en-AU", "en-GB"}
}

type collectionDef struct {
	ID             string
	Title          string
	Personalizable bool
}

type imageDef struct {
	URL, LowResURL string
	Width, Height  float64
}

type optionValueDef struct{ Title, Color, Color2 string }

type optionDef struct {
	Name   string
	Values []optionValueDef
}

type variantDef struct {
	ID          string
	Values      []string // one value title per product option, in order
	Price       float64
	RetailPrice float64
	Available   bool
	Images      []imageDef
}

type regionDef struct {
	Name, Code  string
	Blacklisted bool
	Provinces   [][2]string // name, code
}

// textDef is a product's strings in one locale. Words translates option
// names, option value titles and tag names; a word it lacks stays in en-US.
type textDef struct {
	Title, Description, DescriptionV2 string
	Words                             map[string]string
}

type productDef struct {
	ID, CollectionID      string
	Slug, Model, Brand    string
	Notes, SizeChartTable string
	Status                api.ProductStatus
	CreationStatus        api.ProcessingStatus
	HiddenAt              *time.Time
	InStock, Discontinued bool
	Personalized          bool
	Text                  map[string]textDef // by locale; en-US always present
	Options               []optionDef
	Variants              []variantDef
	Tags                  []string
	PriceDelta            map[string]float64 // by upper-case country code; nil when none
	Errors                *api.ProductErrors
	Regions               []regionDef
	Featured              *imageDef
	SizeChartImages       []imageDef
	CustomFields          map[string]any
}

type catalog struct {
	collections map[string]collectionDef
	order       []string // collection ids in dataset order
	products    map[string]*productDef
	productIDs  []string // in dataset order
}

func (p *productDef) variant(id string) *variantDef {
	for i := range p.Variants {
		if p.Variants[i].ID == id {
			return &p.Variants[i]
		}
	}
	return nil
}

// variantTitle joins the variant's option values, translated for locale.
func (p *productDef) variantTitle(v *variantDef, locale string) string {
	t := ""
	for i, val := range v.Values {
		if i > 0 {
			t += " / "
		}
		t += p.word(val, locale)
	}
	return t
}

func (p *productDef) text(locale string) textDef {
	base := p.Text["en-US"]
	if t, ok := p.Text[locale]; ok {
		if t.Title == "" {
			t.Title = base.Title
		}
		if t.Description == "" {
			t.Description = base.Description
		}
		if t.DescriptionV2 == "" {
			t.DescriptionV2 = base.DescriptionV2
		}
		return t
	}
	return base
}

func (p *productDef) word(w, locale string) string {
	if tr, ok := p.Text[locale].Words[w]; ok {
		return tr
	}
	return w
}

func img(name string) imageDef {
	return imageDef{
		URL:       "https://images.example.com/products/" + name + ".jpg",
		LowResURL: "https://images.example.com/products/" + name + "-low.jpg",
		Width:     1200, Height: 1200,
	}
}

func regions(codes ...string) []regionDef {
	all := map[string]regionDef{
		"US": {Name: "United States", Code: "US", Provinces: [][2]string{{"California", "CA"}, {"New York", "NY"}, {"Texas", "TX"}}},
		"CA": {Name: "Canada", Code: "CA", Provinces: [][2]string{{"Ontario", "ON"}, {"Quebec", "QC"}}},
		"GB": {Name: "United Kingdom", Code: "GB"},
		"FR": {Name: "France", Code: "FR"},
		"ES": {Name: "Spain", Code: "ES"},
		"MX": {Name: "Mexico", Code: "MX", Provinces: [][2]string{{"Jalisco", "JAL"}, {"Ciudad de México", "CMX"}}},
		"AU": {Name: "Australia", Code: "AU", Provinces: [][2]string{{"New South Wales", "NSW"}, {"Victoria", "VIC"}}},
		"BR": {Name: "Brazil", Code: "BR", Blacklisted: true},
	}
	out := make([]regionDef, 0, len(codes))
	for _, c := range codes {
		out = append(out, all[c])
	}
	return out
}

// builtinCatalog returns the dataset's collections and products (fresh on
// each call; nothing here is shared between emulators).
func builtinCatalog() *catalog {
	colour := map[string]string{"Color": "Colour"}
	hidden := time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)
	yes, no := true, false
	products := []*productDef{{
		ID: BottleProductID, CollectionID: PersonalizableCollectionID,
		Slug: "engraved-water-bottle", Model: "HB-750", Brand: "Hydro Basics",
		Status: api.Active, CreationStatus: api.ProcessingStatusDone,
		InStock: true, Personalized: true,
		Text: map[string]textDef{
			"en-US": {Title: "Engraved Water Bottle", Description: "Insulated steel bottle, engraved with your name.",
				DescriptionV2: "<p>Insulated steel bottle, 750 ml, <strong>engraved with your name</strong>.</p>"},
			"en-GB": {Title: "Engraved Water Bottle", Words: colour},
			"en-AU": {Title: "Engraved Drink Bottle", Words: colour},
			"fr-FR": {Title: "Gourde gravée", Description: "Gourde isotherme en acier, gravée à votre nom.",
				DescriptionV2: "<p>Gourde isotherme en acier, 750 ml, <strong>gravée à votre nom</strong>.</p>",
				Words:         map[string]string{"Color": "Couleur", "Black": "Noir", "Silver": "Argent", "Drinkware": "Gourdes et tasses"}},
			"fr-CA": {Title: "Bouteille d'eau gravée", Description: "Bouteille isolante en acier, gravée à votre nom.",
				DescriptionV2: "<p>Bouteille isolante en acier, 750 ml, <strong>gravée à votre nom</strong>.</p>",
				Words:         map[string]string{"Color": "Couleur", "Black": "Noir", "Silver": "Argent", "Drinkware": "Articles pour boire"}},
			"es-ES": {Title: "Botella grabada", Description: "Botella térmica de acero, grabada con tu nombre.",
				DescriptionV2: "<p>Botella térmica de acero, 750 ml, <strong>grabada con tu nombre</strong>.</p>",
				Words:         map[string]string{"Color": "Color", "Black": "Negro", "Silver": "Plata", "Drinkware": "Menaje"}},
			"es-MX": {Title: "Termo grabado", Description: "Termo de acero, grabado con tu nombre.",
				DescriptionV2: "<p>Termo de acero, 750 ml, <strong>grabado con tu nombre</strong>.</p>",
				Words:         map[string]string{"Color": "Color", "Black": "Negro", "Silver": "Plateado", "Drinkware": "Termos y tazas"}},
		},
		Options: []optionDef{{Name: "Color", Values: []optionValueDef{{"Black", "#000000", ""}, {"Silver", "#C0C0C0", "#E5E4E2"}}}},
		Variants: []variantDef{
			{ID: BottleBlackVariantID, Values: []string{"Black"}, Price: 24, RetailPrice: 30, Available: true, Images: []imageDef{img("bottle-black")}},
			{ID: BottleSilverVariantID, Values: []string{"Silver"}, Price: 26, RetailPrice: 32, Available: true, Images: []imageDef{img("bottle-silver")}},
		},
		Tags:       []string{"Drinkware", "Eco"},
		PriceDelta: map[string]float64{"CA": 3, "GB": 4.5, "AU": 5, "MX": 6},
		Errors:     &api.ProductErrors{HasLowResolutionElements: &no, HasNonCmykElements: &no, HasBaseProductIssue: &no, HasNonBlackAndWhiteElements: &no, IsBlank: &no, HasOldPrintAreas: &no},
		Regions:    regions("US", "CA", "GB", "FR", "ES", "MX", "AU"),
		Featured:   &imageDef{URL: "https://images.example.com/products/bottle.jpg", LowResURL: "https://images.example.com/products/bottle-low.jpg", Width: 1600, Height: 1200},
	}, {
		ID: HoodieProductID, CollectionID: PersonalizableCollectionID,
		Slug: "embroidered-hoodie", Model: "EH-01", Brand: "Threadline",
		Notes:          "Embroidery is placed on the left chest.",
		SizeChartTable: "<table><tr><th>Size</th><th>Chest (in)</th></tr><tr><td>S</td><td>36</td></tr><tr><td>M</td><td>40</td></tr><tr><td>L</td><td>44</td></tr></table>",
		Status:         api.Active, CreationStatus: api.ProcessingStatusDone,
		InStock: true, Personalized: true,
		Text: map[string]textDef{
			"en-US": {Title: "Embroidered Hoodie", Description: "Heavyweight cotton hoodie with your initials.",
				DescriptionV2: "<p>Heavyweight cotton hoodie, <em>embroidered with your initials</em>.</p>"},
			"en-GB": {Title: "Embroidered Hooded Jumper", Words: map[string]string{"Color": "Colour", "Apparel": "Clothing"}},
			"en-AU": {Title: "Embroidered Hoodie", Words: map[string]string{"Color": "Colour"}},
			"fr-FR": {Title: "Sweat à capuche brodé", Description: "Sweat à capuche en coton épais, brodé de vos initiales.",
				Words: map[string]string{"Size": "Taille", "Color": "Couleur", "Navy": "Marine", "Apparel": "Vêtements"}},
			"fr-CA": {Title: "Kangourou brodé", Description: "Kangourou en coton épais, brodé de vos initiales.",
				Words: map[string]string{"Size": "Taille", "Color": "Couleur", "Navy": "Marine", "Apparel": "Vêtements"}},
			"es-ES": {Title: "Sudadera con capucha bordada", Description: "Sudadera de algodón grueso con tus iniciales.",
				Words: map[string]string{"Size": "Talla", "Color": "Color", "Navy": "Azul marino", "Apparel": "Ropa"}},
			"es-MX": {Title: "Sudadera con gorro bordada", Description: "Sudadera de algodón grueso con tus iniciales.",
				Words: map[string]string{"Size": "Talla", "Color": "Color", "Navy": "Azul marino", "Apparel": "Ropa"}},
		},
		Options: []optionDef{
			{Name: "Size", Values: []optionValueDef{{"S", "", ""}, {"M", "", ""}, {"L", "", ""}}},
			{Name: "Color", Values: []optionValueDef{{"Navy", "#1B2A49", ""}}},
		},
		Variants: []variantDef{
			{ID: HoodieSVariantID, Values: []string{"S", "Navy"}, Price: 45, RetailPrice: 60, Available: true, Images: []imageDef{img("hoodie-navy")}},
			{ID: HoodieMVariantID, Values: []string{"M", "Navy"}, Price: 45, RetailPrice: 60, Available: true, Images: []imageDef{img("hoodie-navy")}},
			{ID: HoodieLVariantID, Values: []string{"L", "Navy"}, Price: 48, RetailPrice: 64, Available: false, Images: []imageDef{img("hoodie-navy")}},
		},
		Tags:            []string{"Apparel"},
		PriceDelta:      map[string]float64{"CA": 6, "MX": 8, "ES": 5.5, "FR": 5.5},
		Regions:         regions("US", "CA", "FR", "ES", "MX", "BR"),
		Featured:        &imageDef{URL: "https://images.example.com/products/hoodie.jpg", LowResURL: "https://images.example.com/products/hoodie-low.jpg", Width: 1200, Height: 1500},
		SizeChartImages: []imageDef{{URL: "https://images.example.com/products/hoodie-size-chart.png", Width: 800, Height: 600}},
		CustomFields:    map[string]any{"embroideryColor": "white", "maxInitials": 3},
	}, {
		ID: NotebookProductID, CollectionID: PlainCollectionID,
		Slug: "classic-notebook", Brand: "Papeterie",
		Status: api.Active, CreationStatus: api.ProcessingStatusDone, InStock: true,
		Text: map[string]textDef{
			"en-US": {Title: "Classic Notebook", Description: "A5 dotted notebook, 160 pages.", DescriptionV2: "<p>A5 dotted notebook, 160 pages.</p>"},
			"fr-FR": {Title: "Carnet classique", Description: "Carnet A5 à points, 160 pages."},
			"fr-CA": {Title: "Cahier classique", Description: "Cahier A5 à points, 160 pages."},
			"es-ES": {Title: "Cuaderno clásico", Description: "Cuaderno A5 punteado, 160 páginas."},
			"es-MX": {Title: "Libreta clásica", Description: "Libreta A5 punteada, 160 páginas."},
		},
		Options:  []optionDef{{Name: "Color", Values: []optionValueDef{{"Kraft", "#C8A165", ""}}}},
		Variants: []variantDef{{ID: NotebookVariantID, Values: []string{"Kraft"}, Price: 12.5, RetailPrice: 15, Available: true, Images: []imageDef{img("notebook")}}},
		Tags:     []string{"Stationery"},
		Regions:  regions("US", "CA", "GB", "FR", "ES", "MX", "AU"),
	}, {
		ID: PlantProductID, CollectionID: PlainCollectionID,
		Slug: "desk-plant", Model: "DP-S", Brand: "Greenery",
		Status: api.Draft, CreationStatus: api.ProcessingStatusError, HiddenAt: &hidden,
		Discontinued: true,
		Text: map[string]textDef{
			"en-US": {Title: "Desk Plant", Description: "A small succulent in a ceramic pot.", DescriptionV2: "<p>A small succulent in a ceramic pot.</p>"},
			"fr-FR": {Title: "Plante de bureau"},
			"es-ES": {Title: "Planta de escritorio"},
		},
		Options:  []optionDef{},
		Variants: []variantDef{{ID: PlantVariantID, Values: nil, Price: 18, RetailPrice: 22, Available: false}},
		Tags:     []string{},
		Errors:   &api.ProductErrors{HasLowResolutionElements: &yes, HasNonCmykElements: &yes, HasBaseProductIssue: &no, HasNonBlackAndWhiteElements: &no, IsBlank: &yes, HasOldPrintAreas: &no},
		Regions:  regions("US"),
	}}
	c := &catalog{
		collections: map[string]collectionDef{
			PersonalizableCollectionID: {ID: PersonalizableCollectionID, Title: "Welcome kit", Personalizable: true},
			PlainCollectionID:          {ID: PlainCollectionID, Title: "Anniversary store"},
		},
		order:    []string{PersonalizableCollectionID, PlainCollectionID},
		products: map[string]*productDef{},
	}
	for _, p := range products {
		c.products[p.ID] = p
		c.productIDs = append(c.productIDs, p.ID)
	}
	return c
}

// datasetPeople are the built-in company's people, with their starting balance.
func datasetPeople() []*Person {
	return []*Person{
		{ID: PersonJamesID, ExternalID: "E1001", Email: "james.smith@example.com", FirstName: "James", LastName: "Smith",
			Department: "Sales", Location: "Boston", StartDate: "2015-06-01", BirthDate: "1985-12-25", Balance: 50},
		{ID: PersonJeanLucID, ExternalID: "E1002", Email: "jean-luc.obrien@example.com", FirstName: "Jean-Luc", LastName: "O'Brien",
			Department: "Engineering", Location: "Montréal", StartDate: "2020-03-02", BirthDate: "1992-02-29", Balance: 25},
		{ID: PersonAnaID, ExternalID: "E1003", Email: "ana.delacruz@example.com", FirstName: "Ana María", LastName: "de la Cruz",
			Department: "Marketing", Location: "Madrid", StartDate: "2024-01-15", BirthDate: "1990-07-23"},
		{ID: PersonZoeID, ExternalID: "E1004", Email: "zoe.vanderberg@example.com", FirstName: "Zoë", LastName: "van der Berg",
			Department: "People", Location: "Amsterdam", StartDate: "2025-03-01", BirthDate: "1999-03-21", Balance: 100},
	}
}

// datasetOrders are the built-in company's orders, one in each status.
func datasetOrders() []PlaceOrder {
	at := func(s string) *time.Time {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			panic(err)
		}
		return &t
	}
	return []PlaceOrder{
		{ID: OrderPlacedID, CollectionID: PlainCollectionID, UserID: PersonJamesID, CreatedAt: at("2025-01-06T09:15:00Z"),
			Lines: []PlaceOrderLine{{ProductID: NotebookProductID, VariantID: NotebookVariantID, Quantity: 2}}},
		{ID: OrderPendingID, CollectionID: PersonalizableCollectionID, UserID: PersonJeanLucID, CreatedAt: at("2025-01-20T23:59:59Z"),
			Status: api.OrderStatusValuePending,
			Lines:  []PlaceOrderLine{{ProductID: BottleProductID, VariantID: BottleBlackVariantID, Quantity: 1}}},
		{ID: OrderPartiallyShippedID, CollectionID: PersonalizableCollectionID, UserID: PersonAnaID, CreatedAt: at("2025-02-03T00:00:00Z"),
			Status: api.OrderStatusValuePartiallyShipped,
			Lines: []PlaceOrderLine{
				{ProductID: HoodieProductID, VariantID: HoodieMVariantID, Quantity: 1},
				{ProductID: BottleProductID, VariantID: BottleSilverVariantID, Quantity: 1},
				{ProductID: HoodieProductID, VariantID: HoodieLVariantID, Quantity: 1},
			}},
		{ID: OrderShippedID, CollectionID: PlainCollectionID, UserID: PersonZoeID, CreatedAt: at("2025-03-10T14:30:00Z"),
			Status: api.OrderStatusValueShipped,
			Lines:  []PlaceOrderLine{{ProductID: NotebookProductID, VariantID: NotebookVariantID, Quantity: 3}}},
	}
}

// sourceOf is a person's personalization source fields.
func sourceOf(p *Person) personalization.Source {
	return personalization.Source{
		FirstName: p.FirstName, LastName: p.LastName, Department: p.Department, Location: p.Location,
		StartDate: p.StartDate, BirthDate: p.BirthDate,
	}
}
