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
	ctx context.Context //nolint:containedctx // sources.Export.Archive takes none
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
	if x.problem != nil {
		return sources.Stats{}, x.problem
	}
	tmp, err := os.CreateTemp("", "hrsync-export-*.csv")
	if err != nil {
		return sources.Stats{}, fmt.Errorf("download %s: %w", x.Name(), err)
	}
	defer os.Remove(tmp.Name()) //nolint:errcheck // best effort: a private temporary file
	defer tmp.Close()           //nolint:errcheck // read only by then
	if err := x.download(ctx, tmp); err != nil {
		return sources.Stats{}, err
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return sources.Stats{}, fmt.Errorf("read %s: %w", x.Name(), err)
	}
	return csvsrc.Read(ctx, x.Name(), tmp, x.folder.csv, h)
}

// download copies the export into w in one session, and checks its hash.
func (x *export) download(ctx context.Context, w io.Writer) error {
	s, err := x.folder.dial(ctx)
	if err != nil {
		return err
	}
	defer s.Close() //nolint:errcheck // nothing written in this session
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

// Archive moves the export into processed/ or failed/ with its report
// beside it as "<name>.report.json", and removes its marker; see
// sources.Export. Nothing is overwritten: a name taken gets the suffix of
// sources.ArchiveName.
func (x *export) Archive(processed bool, report []byte) (string, error) {
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
	defer s.Close() //nolint:errcheck // each write is checked on its own
	if err := x.current(ctx, s); err != nil {
		return "", err
	}
	body := append(append([]byte{}, report...), '\n')
	for attempt := 0; ; attempt++ {
		as := sources.ArchiveName(path.Base(x.name), x.sha, x.folder.now(), attempt)
		dest := path.Join(outcome, as)
		err := s.WriteReport(ctx, dest+sources.ReportSuffix, body)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("write report of %s: %w", x.Name(), err)
		}
		err = s.Archive(ctx, x.name, dest, x.entry)
		if err != nil {
			_ = s.Remove(ctx, dest+sources.ReportSuffix) // ours: written just above
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
			return outcome + "/" + sources.DisplayName(as), fmt.Errorf("remove marker of %s: %w", x.Name(), err)
		}
		return outcome + "/" + sources.DisplayName(as), nil
	}
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
