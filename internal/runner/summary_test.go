package runner

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"hrsync/internal/jsonstream"
	"hrsync/internal/reports"
	"hrsync/model"
)

// TestSummaryStreamsAsMarshalled checks that a run's JSON summary, its
// jobs' reports streaming (a people report naming the people added), is
// byte for byte what json.MarshalIndent writes, with a cycle without a
// report and one whose report is a nil pointer.
func TestSummaryStreamsAsMarshalled(t *testing.T) {
	added := []reports.Person{{ExternalID: "E1", Granted: 25}, {ExternalID: "E2"}}
	people := &reports.People{Added: reports.ListFunc(2, slices.Values(added)), Granted: 25}
	sum := Summary{Outcome: model.OutcomeOK, Message: "ok", Tenants: []string{"acme"}, Cycles: []CycleSummary{
		{Job: "people", Tenant: "acme", Outcome: model.OutcomeOK, Counts: map[string]int{"created": 2}, Report: people},
		{Job: "grants", Tenant: "acme", Outcome: model.OutcomeOK},
		{Job: "orders", Tenant: "acme", Outcome: model.OutcomeOK, Report: (*reports.People)(nil)},
	}}
	want, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	s := jsonstream.New(&got, "", "  ")
	s.Value(sum)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("streamed:\n%s\nwant:\n%s", got.Bytes(), want)
	}
}
