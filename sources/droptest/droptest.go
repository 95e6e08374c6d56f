// Package droptest checks that a drop-folder backend (local, SFTP, S3) keeps the
// protocol of sources.DropFolder, against a real server the backend's tests
// start: exports are found with their hash, read once, archived with their
// reports (JSON, HTML, rejects CSV) only when unchanged, never overwriting an archived file; markers,
// empty files, a replaced file and a server restarted between the read and
// the archive behave as the protocol says.
package droptest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hrsync/sources"
	"hrsync/sources/registry"
	"hrsync/sources/sourcestest"
)

// Harness is a backend under test, over a real server.
type Harness struct {
	// Open opens the backend's drop folder (an empty one for each call
	// of Open, created by the harness) with the given stability options
	// (Pattern, StableFor, DoneMarker); the harness sets the type and the
	// server's options.
	Open func(t *testing.T, opts sources.DropFolderOptions, csv sources.CSVOptions) sources.DropFolder
	// Put writes a file of the folder opened last ("employees.csv",
	// "processed/x.csv"), replacing any of that name.
	Put func(t *testing.T, name string, content []byte)
	// Get reads a file of the folder opened last; false when it is not
	// there.
	Get func(t *testing.T, name string) ([]byte, bool)
	// Restart stops the server and starts it again, on the same address
	// and with the same files.
	Restart func(t *testing.T)
}

// CSV is the export format the suite writes.
func CSV() sources.CSVOptions {
	return sources.CSVOptions{Mapping: sources.Mapping{Columns: map[string]string{
		"externalId": "id", "email": "email", "firstName": "first", "lastName": "last",
	}}}
}

// Export is an export of n fictional people, starting at number from.
func Export(from, n int) []byte {
	var b strings.Builder
	b.WriteString("id,email,first,last\n")
	for i := from; i < from+n; i++ {
		fmt.Fprintf(&b, "E%04d,e%04d@example.test,First%d,Last\n", i, i, i)
	}
	return []byte(b.String())
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Run runs the suite.
func Run(t *testing.T, h Harness) {
	t.Run("ready, read once, archived with its reports", func(t *testing.T) { readAndArchive(t, h) })
	t.Run("a taken name is never overwritten", func(t *testing.T) { nameTaken(t, h) })
	t.Run("done marker", func(t *testing.T) { doneMarker(t, h) })
	t.Run("empty file goes to failed", func(t *testing.T) { emptyFile(t, h) })
	t.Run("replaced after hashing: the read refuses it", func(t *testing.T) { replacedBeforeRead(t, h) })
	t.Run("replaced after the read: it stays", func(t *testing.T) { replacedAfterRead(t, h) })
	t.Run("server restarted between read and archive", func(t *testing.T) { restartBeforeArchive(t, h) })
	t.Run("count waiting and archived", func(t *testing.T) { count(t, h) })
	t.Run("take back from failed", func(t *testing.T) { takeBack(t, h) })
	t.Run("approvals from approve/", func(t *testing.T) { approvals(t, h) })
	t.Run("a large report is written as it is made", func(t *testing.T) { largeReport(t, h) })
}

// largeReportSize is the size of the report largeReport writes: more than
// a backend may hold in memory (the S3 backend spools past 8 MiB).
const largeReportSize = 12 << 20

// largeReport archives an export with a JSON report larger than a backend
// holds in memory, written in many small pieces as a streamed report is,
// and checks it arrives whole, byte for byte.
func largeReport(t *testing.T, h Harness) {
	x := readyOne(t, h, Export(1, 3))
	if _, err := read(t, x); err != nil {
		t.Fatalf("Read: %v", err)
	}
	line := []byte(`{"externalId": "E0000001", "email": "e***@e***.test", "granted": 25},` + "\n")
	var want []byte
	for len(want) < largeReportSize {
		want = append(want, line...)
	}
	writes := 0
	render := func(string) ([]sources.ReportFile, error) {
		return []sources.ReportFile{{Suffix: sources.ReportSuffix, Write: func(w io.Writer) error {
			for rest := want; len(rest) > 0; rest = rest[min(len(rest), 4096):] {
				writes++
				if _, err := w.Write(rest[:min(len(rest), 4096)]); err != nil {
					return err
				}
			}
			return nil
		}}}, nil
	}
	if _, err := x.Archive(true, render); err != nil {
		t.Fatalf("Archive: %v", err)
	}
	got, ok := h.Get(t, "processed/employees.csv"+sources.ReportSuffix)
	if !ok || !bytes.Equal(got, want) {
		t.Errorf("the report archived: %v, %d bytes, want the %d bytes written in %d pieces", ok, len(got), len(want), writes)
	}
}

func ready(t *testing.T, folder sources.DropFolder) []sources.Export {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got, err := folder.Ready(ctx)
	if err != nil {
		t.Fatalf("Ready: %v", err)
	}
	return got
}

func read(t *testing.T, x sources.Export) (sourcestest.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var r sourcestest.Result
	_, err := x.Read(ctx, r.Handler())
	return r, err
}

func stable() sources.DropFolderOptions {
	return sources.DropFolderOptions{StableFor: time.Millisecond}
}

func readAndArchive(t *testing.T, h Harness) {
	folder := h.Open(t, stable(), CSV())
	content := Export(1, 3)
	h.Put(t, "employees.csv", content)
	h.Put(t, "notes.txt", []byte("not an export"))
	h.Put(t, "upload.csv.part", Export(1, 1))
	got := ready(t, folder)
	if len(got) != 1 || got[0].Name() != "employees.csv" {
		t.Fatalf("Ready: %d exports %v, want employees.csv alone", len(got), names(got))
	}
	x := got[0]
	var renderedFor []string
	render := func(archivedAs string) ([]sources.ReportFile, error) {
		renderedFor = append(renderedFor, archivedAs)
		return Reports(`{"outcome":"ok"}`)(archivedAs)
	}
	if x.SHA256() != sum(content) || x.Size() != int64(len(content)) {
		t.Errorf("hash %.12s size %d, want %.12s %d", x.SHA256(), x.Size(), sum(content), len(content))
	}
	r, err := read(t, x)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if len(r.People) != 3 || r.People[0].ExternalID != "E0001" || len(r.Rejections) != 0 {
		t.Fatalf("Read: %d people %d rejections, want 3 and 0", len(r.People), len(r.Rejections))
	}
	where, err := x.Archive(true, render)
	if err != nil || where != "processed/employees.csv" {
		t.Fatalf("Archive: %q %v, want processed/employees.csv", where, err)
	}
	checkArchivedFiles(t, h, content, renderedFor)
	if _, ok := h.Get(t, "employees.csv"); ok {
		t.Errorf("employees.csv is still in the folder after Archive")
	}
	if got := ready(t, folder); len(got) != 0 {
		t.Errorf("Ready after archiving: %v, want none", names(got))
	}
	checkLastGoodExport(t, folder, content)
}

func checkArchivedFiles(t *testing.T, h Harness, content []byte, renderedFor []string) {
	t.Helper()
	if b, ok := h.Get(t, "processed/employees.csv"); !ok || string(b) != string(content) {
		t.Errorf("processed/employees.csv: %v, want the export", ok)
	}
	var report struct{ Outcome string }
	if b, ok := h.Get(t, "processed/employees.csv.report.json"); !ok || json.Unmarshal(b, &report) != nil || report.Outcome != "ok" {
		t.Errorf("report: %q %v, want the JSON report given", b, ok)
	}
	if len(renderedFor) != 1 || renderedFor[0] != "processed/employees.csv" {
		t.Errorf("the reports were rendered for %q, want processed/employees.csv once", renderedFor)
	}
	for suffix, want := range map[string]string{
		sources.HTMLReportSuffix: "<p>processed/employees.csv</p>",
		sources.RejectsSuffix:    "hrsync line,id\n2,E0002\n",
	} {
		if b, ok := h.Get(t, "processed/employees.csv"+suffix); !ok || string(b) != want {
			t.Errorf("processed/employees.csv%s: %q %v, want %q", suffix, b, ok, want)
		}
	}
}

func checkLastGoodExport(t *testing.T, folder sources.DropFolder, content []byte) {
	t.Helper()
	last, err := folder.Archived(context.Background(), "employees.csv", sum(content))
	if err != nil {
		t.Fatalf("Archived: %v", err)
	}
	var again sourcestest.Result
	if _, err := last.Read(context.Background(), again.Handler()); err != nil || len(again.People) != 3 {
		t.Errorf("last good export read: %d people, %v", len(again.People), err)
	}
	if _, err := folder.Archived(context.Background(), "employees.csv", sum([]byte("other"))); err == nil {
		t.Errorf("Archived found an export of another hash")
	}
}

func nameTaken(t *testing.T, h Harness) {
	folder := h.Open(t, stable(), CSV())
	h.Put(t, "processed/employees.csv", []byte("earlier"))
	content := Export(1, 2)
	h.Put(t, "employees.csv", content)
	got := ready(t, folder)
	if len(got) != 1 {
		t.Fatalf("Ready: %v", names(got))
	}
	where, err := got[0].Archive(true, JSONReport(`{}`))
	if err != nil {
		t.Fatalf("Archive: %v", err)
	}
	want := "processed/employees." // plus time and hash
	if !strings.HasPrefix(where, want) || !strings.HasSuffix(where, "-"+sum(content)[:8]+".csv") {
		t.Fatalf("archived as %q, want %s<time>-%s.csv", where, want, sum(content)[:8])
	}
	if b, _ := h.Get(t, "processed/employees.csv"); string(b) != "earlier" {
		t.Errorf("the earlier archived file was overwritten: %q", b)
	}
	if b, ok := h.Get(t, where); !ok || string(b) != string(content) {
		t.Errorf("%s does not hold the export", where)
	}
	if _, ok := h.Get(t, where+sources.ReportSuffix); !ok {
		t.Errorf("no report beside %s", where)
	}
}

func doneMarker(t *testing.T, h Harness) {
	opts := stable()
	opts.DoneMarker = true
	folder := h.Open(t, opts, CSV())
	h.Put(t, "a.csv", Export(1, 1))
	h.Put(t, "b.csv", Export(2, 1))
	h.Put(t, "b.csv.done", nil)
	got := ready(t, folder)
	if len(got) != 1 || got[0].Name() != "b.csv" {
		t.Fatalf("Ready: %v, want b.csv alone (a.csv has no marker)", names(got))
	}
	if _, err := got[0].Archive(false, JSONReport(`{}`)); err != nil {
		t.Fatalf("Archive: %v", err)
	}
	if _, ok := h.Get(t, "b.csv.done"); ok {
		t.Errorf("the marker stays after Archive")
	}
	if _, ok := h.Get(t, "failed/b.csv"); !ok {
		t.Errorf("b.csv is not in failed/")
	}
}

func emptyFile(t *testing.T, h Harness) {
	folder := h.Open(t, stable(), CSV())
	h.Put(t, "empty.csv", nil)
	got := ready(t, folder)
	if len(got) != 1 {
		t.Fatalf("Ready: %v, want empty.csv with its problem", names(got))
	}
	_, err := read(t, got[0])
	if !errors.Is(err, sources.ErrUnusable) || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("Read: %v, want an unusable, empty export", err)
	}
	if where, err := got[0].Archive(false, JSONReport(`{}`)); err != nil || where != "failed/empty.csv" {
		t.Fatalf("Archive: %q %v", where, err)
	}
}

func replacedBeforeRead(t *testing.T, h Harness) {
	x := readyOne(t, h, Export(1, 2))
	h.Put(t, "employees.csv", Export(5, 2))
	if _, err := read(t, x); !errors.Is(err, sources.ErrChanged) {
		t.Fatalf("Read of a replaced export: %v, want ErrChanged", err)
	}
}

func replacedAfterRead(t *testing.T, h Harness) {
	x := readyOne(t, h, Export(1, 2))
	if _, err := read(t, x); err != nil {
		t.Fatal(err)
	}
	replaced := Export(5, 2) // the same size: only the content tells
	h.Put(t, "employees.csv", replaced)
	_, err := x.Archive(true, Reports(`{}`))
	if !errors.Is(err, sources.ErrChanged) {
		t.Fatalf("Archive of a replaced export: %v, want ErrChanged", err)
	}
	if b, ok := h.Get(t, "employees.csv"); !ok || string(b) != string(replaced) {
		t.Errorf("the replaced export did not stay in the folder")
	}
	if _, ok := h.Get(t, "processed/employees.csv"); ok {
		t.Errorf("a changed export was archived")
	}
	for _, suffix := range []string{sources.ReportSuffix, sources.HTMLReportSuffix} {
		if _, ok := h.Get(t, "processed/employees.csv"+suffix); ok {
			t.Errorf("a report (%s) was left for an export not archived", suffix)
		}
	}
}

func restartBeforeArchive(t *testing.T, h Harness) {
	x := readyOne(t, h, Export(1, 2))
	if _, err := read(t, x); err != nil {
		t.Fatal(err)
	}
	h.Restart(t)
	if where, err := x.Archive(true, JSONReport(`{}`)); err != nil || where != "processed/employees.csv" {
		t.Fatalf("Archive after a restart: %q %v", where, err)
	}
	if _, err := x.Archive(true, JSONReport(`{}`)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a second Archive: %v, want not found", err)
	}
}

func count(t *testing.T, h Harness) {
	folder := h.Open(t, stable(), CSV())
	for _, name := range []string{"a.csv", "b.csv", "notes.txt", "c.csv.part",
		"processed/x.csv", "processed/x.csv.report.json", "processed/x.csv.report.html", "processed/x.csv.rejects.csv",
		"failed/y.csv", "failed/y.csv.report.json", "failed/z.csv", "failed/fixed.rejects.csv"} {
		h.Put(t, name, Export(1, 1))
	}
	got, err := folder.Count(context.Background())
	// x.csv's HTML report and rejects CSV are reports; fixed.rejects.csv,
	// alone, is an export of corrections.
	want := sources.DropCounts{Waiting: 2, Processed: 1, Failed: 3}
	if err != nil || got != want {
		t.Fatalf("Count: %+v %v, want %+v", got, err, want)
	}
	if times, err := folder.Waiting(context.Background()); err != nil || len(times) != 2 || times[0].IsZero() {
		t.Errorf("Waiting: %v %v, want the times of a.csv and b.csv", times, err)
	}
}

func takeBack(t *testing.T, h Harness) {
	folder := h.Open(t, stable(), CSV())
	ctx := context.Background()
	content := Export(1, 2)
	h.Put(t, "failed/march.csv", content)
	h.Put(t, "failed/march.csv.report.json", []byte(`{}`))
	h.Put(t, "march.csv", Export(7, 1)) // a newer export of the same name waits
	for _, rel := range []string{"processed/march.csv", "failed/april.csv", "failed/march.csv.report.json", "../failed/march.csv", ""} {
		if err := folder.FailedExport(ctx, rel); !errors.Is(err, sources.ErrNotFailedExport) {
			t.Errorf("FailedExport(%q): %v, want a refusal", rel, err)
		}
	}
	if err := folder.FailedExport(ctx, "failed/march.csv"); err != nil {
		t.Fatalf("FailedExport: %v", err)
	}
	x, err := folder.Restore(ctx, "failed/march.csv")
	if err != nil {
		t.Fatalf("Restore: %v", err)
	}
	if x.SHA256() != sum(content) || x.Name() == "march.csv" || !strings.HasPrefix(x.Name(), "march.") {
		t.Fatalf("restored as %s (sha %.12s), want a suffixed name beside the waiting march.csv, sha %.12s", x.Name(), x.SHA256(), sum(content))
	}
	if b, _ := h.Get(t, "march.csv"); string(b) != string(Export(7, 1)) {
		t.Errorf("the waiting export was overwritten")
	}
	if _, ok := h.Get(t, "failed/march.csv"); ok {
		t.Errorf("the export is still in failed/")
	}
	if _, ok := h.Get(t, "failed/march.csv.report.json"); !ok {
		t.Errorf("the stopped run's report left failed/")
	}
	if r, err := read(t, x); err != nil || len(r.People) != 2 {
		t.Errorf("read of the restored export: %d people, %v", len(r.People), err)
	}
	if err := folder.FailedExport(ctx, "failed/march.csv"); !errors.Is(err, sources.ErrNotFailedExport) || !strings.Contains(err.Error(), "no longer in failed/") {
		t.Errorf("FailedExport after Restore: %v, want no longer in failed/", err)
	}
}

// approvals: Approvals lists the files of approve/ (whatever the pattern,
// reports and partial uploads left out, none of the folder's own waiting
// exports), each hashed and readable, as sources.Approved exports; one
// archived goes from approve/ to processed/ with its reports; Ready never
// lists a file of approve/.
func approvals(t *testing.T, h Harness) {
	folder := h.Open(t, sources.DropFolderOptions{StableFor: time.Millisecond, Pattern: "*.csv"}, CSV())
	ctx := context.Background()
	content := Export(1, 2)
	h.Put(t, "approve/march.csv", content)
	h.Put(t, "approve/march.csv.report.json", []byte(`{}`))
	h.Put(t, "approve/upload.csv.part", Export(1, 1))
	h.Put(t, "approve/notes.txt", []byte("not an export"))
	h.Put(t, "april.csv", Export(5, 1))
	if got := ready(t, folder); len(got) != 1 || got[0].Name() != "april.csv" {
		t.Fatalf("Ready: %v, want april.csv alone", names(got))
	}
	got, err := folder.Approvals(ctx)
	if err != nil {
		t.Fatalf("Approvals: %v", err)
	}
	if len(got) != 2 {
		t.Fatalf("Approvals: %v, want march.csv and notes.txt", names(got))
	}
	var x sources.Export
	for _, a := range got {
		if _, ok := a.(sources.Approved); !ok {
			t.Errorf("%s is not an approved export", a.Name())
		}
		if a.Name() == "march.csv" {
			x = a
		}
	}
	if x == nil || x.SHA256() != sum(content) {
		t.Fatalf("Approvals: %v, want march.csv with its hash", names(got))
	}
	if r, err := read(t, x); err != nil || len(r.People) != 2 {
		t.Fatalf("read: %d people, %v", len(r.People), err)
	}
	where, err := x.Archive(true, Reports(`{"outcome":"ok"}`))
	if err != nil || where != "processed/march.csv" {
		t.Fatalf("Archive: %q %v, want processed/march.csv", where, err)
	}
	if b, ok := h.Get(t, "processed/march.csv"); !ok || string(b) != string(content) {
		t.Errorf("processed/march.csv: %v", ok)
	}
	if _, ok := h.Get(t, "processed/march.csv.report.json"); !ok {
		t.Errorf("no report beside processed/march.csv")
	}
	if _, ok := h.Get(t, "approve/march.csv"); ok {
		t.Errorf("march.csv is still in approve/")
	}
	if _, ok := h.Get(t, "approve/march.csv.report.json"); !ok {
		t.Errorf("the report moved along into approve/ was not left alone")
	}
}

// JSONReport renders the JSON report body alone.
func JSONReport(body string) sources.RenderReports {
	return func(string) ([]sources.ReportFile, error) {
		return []sources.ReportFile{sources.ReportBytes(sources.ReportSuffix, []byte(body))}, nil
	}
}

// Reports renders the three reports an archived export gets: the JSON
// report body, an HTML page naming where the export was archived, and a
// rejects CSV of one row.
func Reports(body string) sources.RenderReports {
	return func(archivedAs string) ([]sources.ReportFile, error) {
		return []sources.ReportFile{
			sources.ReportBytes(sources.ReportSuffix, []byte(body)),
			sources.ReportBytes(sources.HTMLReportSuffix, []byte("<p>"+archivedAs+"</p>")),
			sources.ReportBytes(sources.RejectsSuffix, []byte("hrsync line,id\n2,E0002\n")),
		}, nil
	}
}

// readyOne opens a new folder, puts content in it as employees.csv, and
// returns it as Ready finds it.
func readyOne(t *testing.T, h Harness, content []byte) sources.Export {
	t.Helper()
	folder := h.Open(t, stable(), CSV())
	h.Put(t, "employees.csv", content)
	got := ready(t, folder)
	if len(got) != 1 {
		t.Fatalf("Ready: %v, want employees.csv", names(got))
	}
	return got[0]
}

func names(xs []sources.Export) []string {
	out := []string{}
	for _, x := range xs {
		out = append(out, x.Name())
	}
	return out
}

// PutFile writes content to name (slash-separated) under dir as an upload
// does: written aside under a name no backend takes, then renamed.
func PutFile(t *testing.T, dir, name string, content []byte) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p+".part", content, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p+".part", p); err != nil {
		t.Fatal(err)
	}
}

// GetFile reads name (slash-separated) under dir; false when it is not
// there.
func GetFile(t *testing.T, dir, name string) ([]byte, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if errors.Is(err, os.ErrNotExist) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return b, true
}

// OpenKind opens the drop folder of a kind's options through the source
// registry, the way cmd opens a tenant's: defaults filled, options
// validated, the source opened, then its folder. warn may be nil.
func OpenKind(opts registry.Options, warn func(string)) (sources.DropFolder, error) {
	opts.FillDefaults()
	if errs := opts.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("options: %w", errors.Join(errs...))
	}
	src, err := registry.Open(context.Background(), opts, registry.Env{Tenant: "acme", Warn: warn})
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	return src.Folder()
}
