package people

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"

	"hrsync/internal/jsonstream"
	"hrsync/internal/reports"
	"hrsync/model"
	"hrsync/sync/sender"
)

// fullExportReport is an export's report with every member set, the
// people added read lazily as a run's are.
func fullExportReport() ExportReport {
	at := time.Date(2026, 11, 26, 4, 0, 0, 0, time.UTC)
	added := []reports.Person{{ExternalID: "E1", Email: "a***@e***.test", Granted: 25}, {ExternalID: "E<2>", Granted: 12.5}}
	return ExportReport{
		RunID: "run-1", Tenant: "acme", Source: "employees.csv", Outcome: model.OutcomeAttention, Duplicate: true,
		Counts:     map[string]int{"new": 2, "rows": 3},
		Safeguards: []Trip{{Name: "maxDeparted", Value: 0.5, Threshold: 0.1, Message: "half left"}},
		Rejections: []model.Rejection{{Source: "employees.csv", Line: 4, Field: "email", Reason: "not an e-mail address"}},
		People: &reports.People{Added: reports.ListFunc(len(added), slices.Values(added)), Granted: 37.5,
			AlreadyThere: []reports.Person{{ExternalID: "E9"}}, AlreadyThereCount: 1,
			Changed: []reports.Person{{ExternalID: "E3", EmailChanged: true}}, Left: []reports.Person{{ExternalID: "E4"}},
			CameBack: []reports.Person{{ExternalID: "E5"}}},
		Result: &Result{RunID: "run-1", Result: sender.Result{Applied: 2, Granted: 37.5, Calls: 1, Errors: []string{}}, Saved: 1},
		Error:  "e", Cause: "c", Next: "n", Directory: true, ArchivedAs: "processed/employees.csv",
		HeldGrants: []string{"E7"}, Reports: []string{"processed/employees.csv.report.json"},
		ArchivedLate: &LateArchive{SentAt: at, Cause: "c", Next: "n", ByRun: "run-2"},
		NotArchived:  &LateArchive{SentAt: at, Cause: "c", Next: "n"},
		Approval:     &Approval{At: at, By: "root", StoppedRun: "run-0", Stops: []string{"half left"}},
		approveOff:   true,
	}
}

// TestExportReportJSONStreamed checks that the JSON report, written a
// member and a person at a time, is byte for byte json.MarshalIndent's and
// a newline, with every member of the report set (a member added later and
// not set here fails the test), and with none.
func TestExportReportJSONStreamed(t *testing.T) {
	full := fullExportReport()
	v := reflect.ValueOf(full)
	for i := range v.NumField() {
		if f := v.Type().Field(i); f.IsExported() && v.Field(i).IsZero() {
			t.Errorf("fullExportReport leaves %s unset: set it, so that its JSON is checked", f.Name)
		}
	}
	for name, er := range map[string]ExportReport{"every member": full, "none": {}} {
		want, err := json.MarshalIndent(er, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, '\n')
		var got bytes.Buffer
		if err := er.writeJSON(&got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got.Bytes(), want)
		}
		rep := Report{Tenant: "acme", Exports: []ExportReport{er, er}, HeldExternalIDs: []string{"E7"}}
		wantRep, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		var gotRep bytes.Buffer
		s := jsonstream.New(&gotRep, "", "  ")
		s.Value(rep)
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(gotRep.Bytes(), wantRep) {
			t.Errorf("%s, the run's report:\n got %s\nwant %s", name, gotRep.Bytes(), wantRep)
		}
	}
}
