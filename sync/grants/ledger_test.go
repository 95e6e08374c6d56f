package grants_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"hrsync/model"
	"hrsync/sync/grants"
)

// TestGrantsListShowsVoidReason: grants list (PrintLedger, or the JSON of
// the ledger's grants) shows why a grant was voided: its note.
func TestGrantsListShowsVoidReason(t *testing.T) {
	g := model.Grant{Key: "acme/P1/birthday/2027", Job: "grants", State: model.GrantVoided, Amount: 5,
		Note: "not granted: the person had left on the day (grants job)"}
	var text bytes.Buffer
	if err := grants.PrintLedger(&text, []model.Grant{g}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "NOTE") || !strings.Contains(text.String(), g.Note) {
		t.Errorf("text output without the reason:\n%s", text.String())
	}
	js, err := json.Marshal([]model.Grant{g})
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(js, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0]["note"] != g.Note {
		t.Errorf("JSON output without the reason: %s", js)
	}
}
