package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"hrsync/model"
)

// TestGrantsListShowsVoidReason: grants list prints why a grant was
// voided (its note), in text and in JSON.
func TestGrantsListShowsVoidReason(t *testing.T) {
	g := model.Grant{Key: "acme/P1/birthday/2027", Job: "grants", State: model.GrantVoided, Amount: 5,
		Note: "not granted: the person had left on the day (grants job)"}
	var text bytes.Buffer
	if err := printGrants(&text, []model.Grant{g}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "NOTE") || !strings.Contains(text.String(), g.Note) {
		t.Errorf("text output without the reason:\n%s", text.String())
	}
	var js bytes.Buffer
	if err := printJSON(&js, []model.Grant{g}); err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0]["note"] != g.Note {
		t.Errorf("JSON output without the reason: %s", js.String())
	}
}
