package main

import (
	"bytes"
	"testing"

	"hrsync/sync/grants"
	"hrsync/sync/people"
)

// TestPlansJSONStreamed checks that the plan document streamed is byte for
// byte what printJSON encodes of it: no plan, one, two; sections nil and
// empty. (The people plans' own JSON is checked in sync/people.)
func TestPlansJSONStreamed(t *testing.T) {
	for _, doc := range []plans{
		{},
		{People: []*people.Plan{}, Grants: []*grants.Plan{}},
		{People: []*people.Plan{{Tenant: "a", Source: "x.csv", Departed: []string{"d<1>"}}}},
		{People: []*people.Plan{{Tenant: "a"}, {Tenant: "b", StateFrom: "scan"}}},
	} {
		var want, got bytes.Buffer
		if err := printJSON(&want, doc); err != nil {
			t.Fatal(err)
		}
		if err := printPlansJSON(&got, doc); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("streamed:\n%s\nprintJSON:\n%s", got.Bytes(), want.Bytes())
		}
	}
}
