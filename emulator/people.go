package emulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"hrsync/api"
)

// apiHandlers implements the generated api.ServerInterface over an Emulator.
type apiHandlers struct{ e *Emulator }

var _ api.ServerInterface = apiHandlers{}

type createPeopleBody struct {
	People          *[]json.RawMessage `json:"people"`
	CollectionID    *string            `json:"collectionId"`
	CompanyID       *string            `json:"companyId"`
	Amount          *float64           `json:"amount"`
	ShouldSendEmail *bool              `json:"shouldSendEmail"`
}

type inputPerson struct {
	FirstName  *string  `json:"firstName"`
	LastName   *string  `json:"lastName"`
	Email      *string  `json:"email"`
	BirthDate  *string  `json:"birthDate"`
	StartDate  *string  `json:"startDate"`
	ExternalID *string  `json:"externalId"`
	Location   *string  `json:"location"`
	Department *string  `json:"department"`
	AddBalance *float64 `json:"addBalance"`
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return strings.TrimSpace(*p)
}

// parseCreatePeople reads and checks a create-people body; errors name the
// field ("people[2].addBalance").
func parseCreatePeople(b []byte, limits Limits) (createPeopleBody, []inputPerson, *apiError) {
	var body createPeopleBody
	if aerr := decodeJSON(b, &body, ""); aerr != nil {
		return body, nil, aerr
	}
	if body.People == nil {
		return body, nil, errInvalid("people is required")
	}
	if len(*body.People) == 0 {
		return body, nil, errInvalid("people: want at least one person")
	}
	if str(body.CollectionID) == "" {
		return body, nil, errInvalid("collectionId is required")
	}
	if aerr := limits.checkAmount("amount", body.Amount); aerr != nil {
		return body, nil, aerr
	}
	people := make([]inputPerson, len(*body.People))
	for i, raw := range *body.People {
		where := fmt.Sprintf("people[%d]", i)
		if t := strings.TrimSpace(string(raw)); !strings.HasPrefix(t, "{") {
			return body, nil, errInvalid("%s: want an object", where)
		}
		if aerr := decodeJSON(raw, &people[i], where); aerr != nil {
			return body, nil, aerr
		}
		p := &people[i]
		if aerr := limits.checkFields(where, p); aerr != nil {
			return body, nil, aerr
		}
		if str(p.ExternalID) == "" && str(p.Email) == "" {
			return body, nil, errInvalid("%s: externalId or email is required", where)
		}
		for _, d := range []struct {
			field string
			value *string
		}{{"birthDate", p.BirthDate}, {"startDate", p.StartDate}} {
			if str(d.value) == "" {
				continue
			}
			if _, err := parseInputDate(str(d.value)); err != nil {
				return body, nil, errInvalid("%s.%s: want a date as YYYY-MM-DD or RFC 3339, got %q", where, d.field, str(d.value))
			}
		}
		if aerr := limits.checkAmount(where+".addBalance", p.AddBalance); aerr != nil {
			return body, nil, aerr
		}
	}
	return body, people, nil
}

func parseInputDate(s string) (time.Time, error) {
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Parse(time.RFC3339Nano, s)
}

// CreatePeople creates or finds each person (by externalId, else e-mail,
// within the company), adds addBalance and amount to their balance, and
// answers 201 with the people. A repeated Idempotency-Key replays the
// first 201 answer and grants nothing.
func (h apiHandlers) CreatePeople(w http.ResponseWriter, r *http.Request, params api.CreatePeopleParams) {
	b, aerr := readBody(r)
	if aerr != nil {
		writeAPIError(w, aerr)
		return
	}
	body, people, aerr := parseCreatePeople(b, h.e.Limits())
	if aerr != nil {
		writeAPIError(w, aerr)
		return
	}
	companyID, aerr := resolveCompany(r.Context(), body.CompanyID)
	if aerr != nil {
		writeAPIError(w, aerr)
		return
	}
	e := h.e
	if _, ok := e.catalog.collections[str(body.CollectionID)]; !ok {
		writeAPIError(w, errNotFound("collection %q not found", str(body.CollectionID)))
		return
	}
	key := ""
	if params.IdempotencyKey != nil {
		key = *params.IdempotencyKey
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	c := e.st.company(companyID)
	if key != "" {
		if prior, ok := c.idem[key]; ok {
			w.Header().Set("Idempotent-Replayed", "true")
			writeRaw(w, http.StatusCreated, prior)
			return
		}
	}
	now := e.opts.Clock()
	send := body.ShouldSendEmail != nil && *body.ShouldSendEmail
	out := make([]api.ReturnedPerson, 0, len(people))
	for _, in := range people {
		p := c.upsert(in)
		grant := func(source string, amount *float64) {
			if amount == nil || *amount == 0 {
				return
			}
			p.Balance += *amount
			p.Grants = append(p.Grants, Grant{Source: source, Amount: *amount, IdempotencyKey: key, ShouldSendEmail: send, At: now})
		}
		grant("addBalance", in.AddBalance)
		grant("amount", body.Amount)
		if send {
			p.EmailsSent++
		}
		out = append(out, api.ReturnedPerson{Id: p.ID, FirstName: p.FirstName, LastName: p.LastName, Email: p.Email})
	}
	answer, err := json.Marshal(out)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "internal_error", "encode answer")
		return
	}
	if key != "" {
		c.idem[key] = answer
	}
	writeRaw(w, http.StatusCreated, answer)
}

// upsert finds the person by externalId, else by e-mail (case-insensitive),
// or creates them. A person found is kept as is, except that one found by
// e-mail without an externalId takes the one given.
func (c *company) upsert(in inputPerson) *Person {
	ext, email := str(in.ExternalID), str(in.Email)
	if p := c.byExternal[ext]; ext != "" && p != nil {
		return p
	}
	if p := c.byEmail[strings.ToLower(email)]; email != "" && p != nil {
		if p.ExternalID == "" && ext != "" {
			p.ExternalID = ext
			c.index(p)
		}
		return p
	}
	idKey := "externalId:" + ext
	if ext == "" {
		idKey = "email:" + strings.ToLower(email)
	}
	p := &Person{
		ID: derivedID(c.id, "person", idKey), ExternalID: ext, Email: email,
		FirstName: str(in.FirstName), LastName: str(in.LastName),
		Department: str(in.Department), Location: str(in.Location),
		StartDate: str(in.StartDate), BirthDate: str(in.BirthDate),
		Grants: []Grant{},
	}
	c.add(p)
	return p
}
