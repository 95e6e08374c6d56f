package remotedrop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"time"

	"hrsync/sources"
	"hrsync/sources/csvsrc"
)

// archiveTimeout bounds the archiving of one export, which goes on when
// the run's context ends: the outcome is committed by then.
const archiveTimeout = time.Minute

// export is one file of a remote drop folder as a sources.Export.
type export struct {
	folder *Folder
	// ctx is the context of the run that found it; Archive outlives its
	// cancellation (the outcome is committed).
	ctx context.Context
	// name is the file's path in the folder ("employees.csv").
	name  string
	entry Entry
	sha   string
	// problem, when not nil, is why the export can never be read (it
	// wraps sources.ErrUnusable).
	problem error
}

// Name is the file's name as every output prints it (sources.DisplayName).
func (x *export) Name() string   { return sources.DisplayName(path.Base(x.name)) }
func (x *export) SHA256() string { return x.sha }
func (x *export) Size() int64    { return x.entry.Size }

// Read downloads the export into a private temporary file (mode 0600,
// removed after the read), checks that what came is the content hashed
// when it was found (sources.ErrChanged if not: the file was replaced),
// and reads it as CSV.
func (x *export) Read(ctx context.Context, h sources.Handler) (sources.Stats, error) {
	var st sources.Stats
	err := x.withCopy(ctx, func(r io.ReadSeeker) error {
		var err error
		st, err = csvsrc.Read(ctx, x.Name(), r, x.folder.csv, h)
		return err
	})
	return st, err
}

// withCopy downloads the export into a private temporary file (mode 0600,
// removed afterwards), checks its hash (sources.ErrChanged when the file
// was replaced), and gives read the copy.
func (x *export) withCopy(ctx context.Context, read func(r io.ReadSeeker) error) error {
	if x.problem != nil {
		return x.problem
	}
	tmp, err := os.CreateTemp("", "hrsync-export-*.csv")
	if err != nil {
		return fmt.Errorf("download %s: %w", x.Name(), err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if err := x.download(ctx, tmp); err != nil {
		return err
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("read %s: %w", x.Name(), err)
	}
	return read(tmp)
}

// download copies the export into w in one session, and checks its hash.
func (x *export) download(ctx context.Context, w io.Writer) error {
	s, err := x.folder.dial(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	sum, err := hashOf(ctx, s, x.name, w)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s is no longer in the drop folder: %w", x.Name(), err)
	case err != nil:
		return fmt.Errorf("download %s: %w", x.Name(), err)
	case sum != x.sha:
		return fmt.Errorf("%s: %w", x.Name(), sources.ErrChanged)
	}
	return nil
}

// Archive moves the export into processed/ or failed/ with the reports
// render makes beside it (mode ReportFileMode where the server has modes),
// and removes its marker; see sources.Export. Nothing is overwritten: a
// name taken, by the export or one of its reports, gets the suffix of
// sources.ArchiveName.
func (x *export) Archive(processed bool, render sources.RenderReports) (string, error) {
	outcome := sources.FailedDir
	if processed {
		outcome = sources.ProcessedDir
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(x.ctx), archiveTimeout)
	defer cancel()
	s, err := x.folder.dial(ctx)
	if err != nil {
		return "", fmt.Errorf("archive %s: %w", x.Name(), err)
	}
	defer s.Close()
	if err := x.current(ctx, s); err != nil {
		return "", err
	}
	for attempt := 0; ; attempt++ {
		as := sources.ArchiveName(path.Base(x.name), x.sha, x.folder.now(), attempt)
		dest := path.Join(outcome, as)
		archivedAs := outcome + "/" + sources.DisplayName(as)
		reports, err := render(archivedAs)
		if err != nil {
			return "", fmt.Errorf("render the reports of %s: %w", x.Name(), err)
		}
		written, err := x.writeReports(ctx, s, dest, reports)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("write reports of %s: %w", x.Name(), err)
		}
		err = s.Archive(ctx, x.name, dest, x.entry)
		if err != nil {
			removeAll(ctx, s, written) // ours: written just above
		}
		switch {
		case errors.Is(err, fs.ErrExist):
			continue
		case errors.Is(err, fs.ErrNotExist):
			return "", fmt.Errorf("%s is no longer in the drop folder: %w", x.Name(), fs.ErrNotExist)
		case errors.Is(err, sources.ErrChanged):
			return "", fmt.Errorf("%s: %w", x.Name(), sources.ErrChanged)
		case err != nil:
			return "", fmt.Errorf("archive %s: %w", x.Name(), err)
		}
		if err := s.Remove(ctx, x.name+sources.MarkerSuffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return archivedAs, fmt.Errorf("remove marker of %s: %w", x.Name(), err)
		}
		return archivedAs, nil
	}
}

// writeReports writes each report beside dest, never over a file, and
// returns the names written; on an error (fs.ErrExist when a name is
// taken) it removes those it wrote.
func (x *export) writeReports(ctx context.Context, s Store, dest string, reports []sources.ReportFile) ([]string, error) {
	mode := x.folder.opts.ReportFileMode()
	written := make([]string, 0, len(reports))
	for _, r := range reports {
		name := dest + r.Suffix
		if err := s.WriteReport(ctx, name, r.Write, mode); err != nil {
			removeAll(ctx, s, written)
			return nil, err
		}
		written = append(written, name)
	}
	return written, nil
}

// removeAll removes the reports Archive wrote for an export it could not
// move; best effort: a report left behind names no archived export.
func removeAll(ctx context.Context, s Store, names []string) {
	for _, n := range names {
		_ = s.Remove(ctx, n)
	}
}

// Rows reads back the records of the export that start on the given lines,
// for the rejects report (people.RowReader): it downloads the export again
// and checks that it is still the content read.
func (x *export) Rows(ctx context.Context, lines map[int]bool) (csvsrc.Records, error) {
	var recs csvsrc.Records
	err := x.withCopy(ctx, func(r io.ReadSeeker) error {
		var err error
		recs, err = csvsrc.Rows(ctx, x.Name(), r, x.folder.csv, lines)
		return err
	})
	return recs, err
}

// current checks, before Archive moves it, that the export is still in the
// folder as the version read: same size, modification time and ETag, and,
// where the server keeps no ETag, the same content.
func (x *export) current(ctx context.Context, s Store) error {
	now, err := s.Stat(ctx, x.name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s is no longer in the drop folder: %w", x.Name(), fs.ErrNotExist)
	case err != nil:
		return fmt.Errorf("stat %s: %w", x.Name(), err)
	case !sameVersion(now, x.entry):
		return fmt.Errorf("%s: %w", x.Name(), sources.ErrChanged)
	case x.sha == "" || x.entry.ETag != "":
		return nil
	}
	sum, err := hashOf(ctx, s, x.name, io.Discard)
	switch {
	case err != nil:
		return fmt.Errorf("hash %s: %w", x.Name(), err)
	case sum != x.sha:
		return fmt.Errorf("%s: %w", x.Name(), sources.ErrChanged)
	}
	return nil
}
