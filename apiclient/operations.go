package apiclient

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"hrsync/api"
)

// CreatePeople creates people in bulk (POST /people), with the balances
// and e-mail the request asks for. idempotencyKey is sent as the
// Idempotency-Key header; the caller chooses it and must send the same key
// for every resend of the same request. It is a write: see the package
// documentation for when it is retried. Both 200 and 201 mean success.
func (c *Client) CreatePeople(ctx context.Context, req api.CreatePeopleRequest, idempotencyKey string) ([]api.ReturnedPerson, error) {
	const op = OpCreatePeople
	switch {
	case idempotencyKey == "":
		return nil, invalid(op, "idempotency key is empty")
	case strings.ContainsFunc(idempotencyKey, notTokenRune):
		return nil, invalid(op, "idempotency key contains whitespace or control characters")
	case req.CollectionId == "":
		return nil, invalid(op, "collection id is empty")
	case len(req.People) == 0:
		return nil, invalid(op, "no people to create")
	}
	params := &api.CreatePeopleParams{IdempotencyKey: &idempotencyKey}
	status, body, err := c.do(ctx, call{
		op:      op,
		write:   true,
		timeout: c.cfg.Timeout,
		build: func(server string) (*http.Request, error) {
			return api.NewCreatePeopleRequest(server, params, req)
		},
		ok: func(s int) bool { return s == http.StatusOK || s == http.StatusCreated },
	})
	if err != nil {
		return nil, err
	}
	var people []api.ReturnedPerson
	if err := decode(op, status, body, &people); err != nil {
		return nil, err
	}
	return people, nil
}

// Personalize personalizes a collection from one person's source fields
// (POST /collection/{id}/personalize). The platform takes 15-20 seconds, so
// each attempt is bounded by Config.PersonalizeTimeout. It is a write.
func (c *Client) Personalize(ctx context.Context, collectionID string, req api.PersonalizeRequest) (*api.PersonalizationResult, error) {
	const op = OpPersonalize
	switch {
	case collectionID == "":
		return nil, invalid(op, "collection id is empty")
	case req.CompanyId == "":
		return nil, invalid(op, "company id is empty")
	}
	status, body, err := c.do(ctx, call{
		op:      op,
		write:   true,
		timeout: c.cfg.PersonalizeTimeout,
		build: func(server string) (*http.Request, error) {
			return api.NewPersonalizeCollectionRequest(server, collectionID, req)
		},
		ok: isOK,
	})
	if err != nil {
		return nil, err
	}
	var result api.PersonalizationResult
	if err := decode(op, status, body, &result); err != nil {
		return nil, err
	}
	return &result, nil
}

// ProductOptions are the optional inputs of GetProduct. Empty strings and
// zero times are not sent.
type ProductOptions struct {
	// AcceptLanguage selects translated strings: "*", "fr", "fr-FR" or a
	// weighted list such as "fr-CA, fr;q=0.8".
	AcceptLanguage string
	// CountryCode makes the returned prices include the product's price
	// delta for that country.
	CountryCode string
	// Source fields that personalize the product's preview.
	FirstName, LastName, Department, Location string
	StartDate, BirthDate                      time.Time
}

// GetProduct reads one product of a collection (GET
// /collection/{id}/product/{id}). Both ids are UUIDs. It is a read.
func (c *Client) GetProduct(ctx context.Context, collectionID, productID string, opts ProductOptions) (*api.Product, error) {
	const op = OpGetProduct
	coll, err := uuid.Parse(collectionID)
	if err != nil {
		return nil, invalid(op, "collection id is not a UUID")
	}
	prod, err := uuid.Parse(productID)
	if err != nil {
		return nil, invalid(op, "product id is not a UUID")
	}
	params := &api.GetProductParams{
		AcceptLanguage: optString(opts.AcceptLanguage),
		CountryCode:    optString(opts.CountryCode),
		FirstName:      optString(opts.FirstName),
		LastName:       optString(opts.LastName),
		Department:     optString(opts.Department),
		Location:       optString(opts.Location),
		StartDate:      optTime(opts.StartDate),
		BirthDate:      optTime(opts.BirthDate),
	}
	status, body, err := c.do(ctx, call{
		op:      op,
		timeout: c.cfg.Timeout,
		build: func(server string) (*http.Request, error) {
			return api.NewGetProductRequest(server, coll, prod, params)
		},
		ok: isOK,
	})
	if err != nil {
		return nil, err
	}
	var product api.Product
	if err := decode(op, status, body, &product); err != nil {
		return nil, err
	}
	return &product, nil
}

// GetOrderStatus reads the status of one order (GET
// /collection/{id}/orders/{id}?companyId=...). Both ids are UUIDs and the
// company id is required. It is a read. An answer about another order (its
// id is not orderID) is an *Error wrapping ErrBadResponse: the caller must
// not record it as this order's status.
func (c *Client) GetOrderStatus(ctx context.Context, collectionID, orderID, companyID string) (*api.OrderStatus, error) {
	const op = OpGetOrderStatus
	coll, err := uuid.Parse(collectionID)
	if err != nil {
		return nil, invalid(op, "collection id is not a UUID")
	}
	order, err := uuid.Parse(orderID)
	if err != nil {
		return nil, invalid(op, "order id is not a UUID")
	}
	if companyID == "" {
		return nil, invalid(op, "company id is empty")
	}
	params := &api.GetOrderStatusParams{CompanyId: companyID}
	status, body, err := c.do(ctx, call{
		op:      op,
		timeout: c.cfg.Timeout,
		build: func(server string) (*http.Request, error) {
			return api.NewGetOrderStatusRequest(server, coll, order, params)
		},
		ok: isOK,
	})
	if err != nil {
		return nil, err
	}
	var st api.OrderStatus
	if err := decode(op, status, body, &st); err != nil {
		return nil, err
	}
	if got, err := uuid.Parse(st.Id); err != nil || got != order {
		return nil, &Error{Op: op, Status: status, Outcome: OutcomeApplied,
			Err: fmt.Errorf("%w: the answer is about order %.64q, not the order asked for (%s)", ErrBadResponse, st.Id, order)}
	}
	return &st, nil
}

func isOK(status int) bool { return status == http.StatusOK }

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
