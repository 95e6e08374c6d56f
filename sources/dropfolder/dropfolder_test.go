package dropfolder

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"hrsync/sources"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// setMtime gives files distinct, ordered modification times.
func setMtime(t *testing.T, path string, at time.Time) {
	t.Helper()
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}

func names(files []File) []string {
	out := []string{}
	for _, f := range files {
		out = append(out, f.Name)
	}
	return out
}

func newFolder(t *testing.T, opts sources.DropFolderOptions) *Folder {
	t.Helper()
	f, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return f
}

func TestIgnored(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"export.csv", false},
		{"Export.CSV", false},
		{".hidden.csv", true},
		{"upload.csv.tmp", true},
		{"upload.csv.PART", true},
		{"~$export.csv", true},
		{"export.csv.done", true},
		{"export.csv.report.json", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Ignored(tt.name); got != tt.want {
				t.Errorf("Ignored(%q) = %v, want %v", tt.name, got, tt.want)
			}
		})
	}
}

func TestReadyStability(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, name := range []string{"b.csv", "a.CSV", "growing.csv", ".hidden.csv", "x.csv.part", "notes.txt", "~$a.csv", "y.csv.done"} {
		write(t, filepath.Join(dir, name), "content of "+name)
		setMtime(t, filepath.Join(dir, name), base.Add(time.Duration(i)*time.Minute))
	}
	if err := os.Mkdir(filepath.Join(dir, "sub.csv"), 0o700); err != nil {
		t.Fatal(err)
	}
	f := newFolder(t, sources.DropFolderOptions{Dir: dir, StableFor: time.Hour})
	var waited []time.Duration
	f.wait = func(_ context.Context, d time.Duration) error {
		waited = append(waited, d)
		// an upload still in progress during the wait
		fh, err := os.OpenFile(filepath.Join(dir, "growing.csv"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		defer fh.Close()
		_, err = fh.WriteString(" more")
		return err
	}

	t.Run("a file that changes during the wait is not ready", func(t *testing.T) {
		got, err := f.Ready(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"b.csv", "a.CSV"}; !reflect.DeepEqual(names(got), want) {
			t.Errorf("ready = %q, want %q (oldest first)", names(got), want)
		}
		if !reflect.DeepEqual(waited, []time.Duration{time.Hour}) {
			t.Errorf("waited %v, want one wait of StableFor", waited)
		}
		sum := sha256.Sum256([]byte("content of b.csv"))
		if got[0].SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("SHA256 = %s, want the content's", got[0].SHA256)
		}
		if got[0].Size != int64(len("content of b.csv")) || got[0].Path != filepath.Join(dir, "b.csv") {
			t.Errorf("file = %+v", got[0])
		}
	})
	t.Run("once it settles it is ready", func(t *testing.T) {
		f.wait = func(context.Context, time.Duration) error { return nil }
		got, err := f.Ready(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"b.csv", "a.CSV", "growing.csv"}; !reflect.DeepEqual(names(got), want) {
			t.Errorf("ready = %q, want %q", names(got), want)
		}
	})
	t.Run("a cancelled wait returns the error", func(t *testing.T) {
		f.wait = sources.Sleep
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := f.Ready(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	})
}

func TestReadyRealWait(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "e.csv"), "x")
	f := newFolder(t, sources.DropFolderOptions{Dir: dir, StableFor: 5 * time.Millisecond})
	got, err := f.Ready(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(names(got), []string{"e.csv"}) {
		t.Errorf("ready = %q", names(got))
	}
}

func TestReadyDoneMarker(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "with.csv"), "1")
	write(t, filepath.Join(dir, "with.csv.done"), "")
	write(t, filepath.Join(dir, "without.csv"), "2")
	f := newFolder(t, sources.DropFolderOptions{Dir: dir, DoneMarker: true, Pattern: "*.csv"})
	f.wait = func(context.Context, time.Duration) error {
		t.Error("marker mode must not wait")
		return nil
	}
	got, err := f.Ready(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(names(got), []string{"with.csv"}) {
		t.Fatalf("ready = %q, want only the file with a marker", names(got))
	}
	t.Run("archive removes the marker", func(t *testing.T) {
		if _, err := f.Archive(context.Background(), got[0], Processed, jsonReport(map[string]int{"rows": 1})); err != nil {
			t.Fatal(err)
		}
		if exists(filepath.Join(dir, "with.csv.done")) {
			t.Error("marker left behind")
		}
	})
}

func TestArchive(t *testing.T) {
	dir := t.TempDir()
	f := newFolder(t, sources.DropFolderOptions{Dir: dir})
	f.wait = func(context.Context, time.Duration) error { return nil }
	f.now = func() time.Time { return time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC) }
	type report struct {
		Rows int `json:"rows"`
	}
	readyOne := func(t *testing.T, content string) File {
		t.Helper()
		write(t, filepath.Join(dir, "people.csv"), content)
		got, err := f.Ready(context.Background())
		if err != nil || len(got) != 1 {
			t.Fatalf("Ready = %v, %v", names(got), err)
		}
		return got[0]
	}

	first := readyOne(t, "first")
	t.Run("moves the file and writes the report with mode 0600", func(t *testing.T) {
		dest, err := f.Archive(context.Background(), first, Processed, jsonReport(report{Rows: 3}))
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join(dir, "processed", "people.csv"); dest != want {
			t.Errorf("dest = %s, want %s", dest, want)
		}
		if exists(first.Path) {
			t.Error("file still in the drop folder")
		}
		if b, err := os.ReadFile(dest); err != nil || string(b) != "first" {
			t.Errorf("archived content = %q, %v", b, err)
		}
		st, err := os.Stat(dest + ReportSuffix)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("report mode = %v, want 0600", st.Mode().Perm())
		}
		var r report
		b, _ := os.ReadFile(dest + ReportSuffix)
		if err := json.Unmarshal(b, &r); err != nil || r.Rows != 3 {
			t.Errorf("report = %s, %v", b, err)
		}
	})
	t.Run("a name clash gets a suffix and overwrites nothing", func(t *testing.T) {
		second := readyOne(t, "second")
		dest, err := f.Archive(context.Background(), second, Processed, jsonReport(report{Rows: 1}))
		if err != nil {
			t.Fatal(err)
		}
		want := filepath.Join(dir, "processed", "people.20250601T120000Z-"+second.SHA256[:8]+".csv")
		if dest != want {
			t.Errorf("dest = %s, want %s", dest, want)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "processed", "people.csv")); string(b) != "first" {
			t.Errorf("first archive overwritten: %q", b)
		}
		if b, _ := os.ReadFile(dest); string(b) != "second" {
			t.Errorf("second archive = %q", b)
		}
		third := readyOne(t, "second") // same content, same second
		dest3, err := f.Archive(context.Background(), third, Processed, jsonReport(report{}))
		if err != nil {
			t.Fatal(err)
		}
		if dest3 == dest || filepath.Base(dest3) != "people.20250601T120000Z-"+second.SHA256[:8]+"-2.csv" {
			t.Errorf("third dest = %s", dest3)
		}
	})
	t.Run("failed files go to failed/", func(t *testing.T) {
		bad := readyOne(t, "bad")
		dest, err := f.Archive(context.Background(), bad, Failed, jsonReport(map[string]string{"error": "missing column"}))
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Dir(dest) != filepath.Join(dir, "failed") {
			t.Errorf("dest = %s", dest)
		}
	})
	t.Run("archived files are not ready again", func(t *testing.T) {
		got, err := f.Ready(context.Background())
		if err != nil || len(got) != 0 {
			t.Errorf("Ready = %q, %v; want nothing", names(got), err)
		}
	})
	t.Run("unknown outcome", func(t *testing.T) {
		if _, err := f.Archive(context.Background(), first, Outcome("lost"), nil); err == nil {
			t.Error("want an error")
		}
	})
}

// jsonReport renders v as the one JSON report of an archive.
func jsonReport(v any) sources.RenderReports {
	return func(string) ([]sources.ReportFile, error) {
		b, err := json.Marshal(v)
		return []sources.ReportFile{sources.ReportBytes(ReportSuffix, b)}, err
	}
}

func TestArchiveReportMode(t *testing.T) {
	dir := t.TempDir()
	f := newFolder(t, sources.DropFolderOptions{Dir: dir, ReportMode: 0o640})
	f.wait = func(context.Context, time.Duration) error { return nil }
	write(t, filepath.Join(dir, "people.csv"), "a")
	got, err := f.Ready(context.Background())
	if err != nil || len(got) != 1 {
		t.Fatalf("Ready = %v, %v", names(got), err)
	}
	var seen []string
	render := func(archivedAs string) ([]sources.ReportFile, error) {
		seen = append(seen, archivedAs)
		return []sources.ReportFile{sources.ReportBytes(".report.html", []byte("<p>")), sources.ReportBytes(ReportSuffix, []byte("{}"))}, nil
	}
	dest, err := f.Archive(context.Background(), got[0], Failed, render)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(seen, []string{"failed/people.csv"}) {
		t.Errorf("render was given %q, want the place the export takes", seen)
	}
	for _, suffix := range []string{".report.html", ReportSuffix} {
		st, err := os.Stat(dest + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o640 {
			t.Errorf("%s mode = %v, want 0640", suffix, st.Mode().Perm())
		}
	}
	st, err := os.Stat(filepath.Dir(dest))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o750 {
		t.Errorf("failed/ mode = %v, want 0750 (the group may search it to read the reports)", st.Mode().Perm())
	}
}

func TestNewValidates(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		opts sources.DropFolderOptions
	}{
		{"no dir", sources.DropFolderOptions{}},
		{"missing dir", sources.DropFolderOptions{Dir: filepath.Join(dir, "nope")}},
		{"bad pattern", sources.DropFolderOptions{Dir: dir, Pattern: "[x"}},
		{"negative interval", sources.DropFolderOptions{Dir: dir, StableFor: -time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.opts); err == nil {
				t.Error("New succeeded")
			}
		})
	}
}
