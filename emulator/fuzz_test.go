package emulator

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// fuzzServe sends one body to path and checks the answer: a JSON success
// of the expected status, or the JSON error shape with a listed status.
func fuzzServe(t *testing.T, e *Emulator, path string, body []byte, success int, errors ...int) {
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tokDataset)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	if !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		t.Fatalf("status %d with Content-Type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	if rec.Code == success {
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("success with invalid JSON: %s", rec.Body)
		}
		return
	}
	if !slices.Contains(errors, rec.Code) {
		t.Fatalf("status %d not expected; body %s", rec.Code, rec.Body)
	}
	var shape struct {
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &shape); err != nil || shape.Error == nil || shape.Error.Code == "" || shape.Error.Message == "" {
		t.Fatalf("status %d without the error shape: %s", rec.Code, rec.Body)
	}
}

func fuzzEmulator(f *testing.F) *Emulator {
	e, err := New(Options{Tokens: map[string][]string{tokDataset: nil}, PersonalizeDelay: &DelayRange{}, Clock: testNow, MaxBodyBytes: 64 << 10})
	if err != nil {
		f.Fatal(err)
	}
	return e
}

func FuzzCreatePeopleBody(f *testing.F) {
	coll := PlainCollectionID
	for _, seed := range []string{
		`{"collectionId":"` + coll + `","people":[{"externalId":"E1","email":"e1@example.com","addBalance":5}],"amount":2,"shouldSendEmail":true}`,
		`{"collectionId":"` + coll + `","people":[{"email":"A@EXAMPLE.COM","birthDate":"1990-02-28","startDate":"2020-01-01T00:00:00Z"}]}`,
		`{"collectionId":"` + coll + `","people":[]}`,
		`{"collectionId":"nope","people":[{"externalId":"x"}]}`,
		`{"people":[{"externalId":1}]}`,
		`{"collectionId":"` + coll + `","people":[null,{"addBalance":"1"}]}`,
		`[]`, `null`, `{`, `{"amount":-1}`, ``, `{"companyId":"other"}`,
	} {
		f.Add([]byte(seed))
	}
	e := fuzzEmulator(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		fuzzServe(t, e, "/api/ext/v1/people", body, http.StatusCreated, 400, 403, 404, 413)
		_ = e.State() // balances must stay representable in JSON
	})
}

func FuzzListOrdersBody(f *testing.F) {
	for _, seed := range []string{
		`{}`,
		`{"companyId":"` + DatasetCompanyID + `","filter":{"userIds":["` + PersonJamesID + `"],"dateRange":{"start":"2025-01-01T00:00:00Z","end":"2025-12-31T23:59:59+02:00"}}}`,
		`{"filter":{"dateRange":{"start":"2025-01-02"}}}`,
		`{"filter":{"dateRange":{"start":"2025-02-01T00:00:00Z","end":"2025-01-01T00:00:00Z"}}}`,
		`{"filter":{"userIds":[1,2]}}`,
		`{"filter":null}`, `[]`, `"x"`, `{"companyId":"other"}`, ``,
	} {
		f.Add([]byte(seed))
	}
	e := fuzzEmulator(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		fuzzServe(t, e, "/api/ext/v1/collection/"+PlainCollectionID+"/orders/get", body, http.StatusOK, 400, 403, 404, 413)
	})
}

func FuzzPersonalizeBody(f *testing.F) {
	for _, seed := range []string{
		`{"companyId":"` + DatasetCompanyID + `","sourceFields":{"firstName":"Zoë","lastName":"van der Berg","startDate":"2020-02-29T00:00:00Z","birthDate":"1990-12-22T00:00:00+01:00"}}`,
		`{"companyId":"` + DatasetCompanyID + `","sourceFields":{"startDate":"2023-02-30T00:00:00Z"}}`,
		`{"companyId":"` + DatasetCompanyID + `","sourceFields":{}}`,
		`{"sourceFields":{"firstName":"A"}}`, `{"companyId":1}`, ``,
	} {
		f.Add([]byte(seed))
	}
	e := fuzzEmulator(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		fuzzServe(t, e, "/api/ext/v1/collection/"+PersonalizableCollectionID+"/personalize", body, http.StatusOK, 400, 403, 404, 413)
	})
}
