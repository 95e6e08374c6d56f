// Package csvsrc reads CSV exports of HR systems (Excel, Workday, BambooHR,
// ADP...) into validated model.Person records.
//
// Real exports are messy, so a file may be UTF-8 with or without a byte
// order mark, UTF-16 (Excel's "Unicode text") or Windows-1252; comma,
// semicolon or tab separated; with quoted fields holding delimiters,
// quotes and line breaks. Columns are found by their configured header
// names, matched without regard to case and surrounding spaces. Every value
// stays text until validation: an ID keeps its leading zeros, and a date is
// parsed only with its column's configured layout.
//
// Reading streams: encoding/csv reads one record at a time, the header row
// is rewritten from the configured names to the csv tags of a row struct,
// and gocarina/gocsv maps the records onto that struct in batches of a few
// hundred (gocsv.UnmarshalDecoder over a decoder that yields one batch per
// call), in a goroutine of its own while the caller validates the previous
// batch; none of gocsv's package-level settings is touched. The file is
// read twice, as sources.Run explains, so Read needs an io.ReadSeeker; the
// first pass (keys only) does without gocsv. Memory does not grow with the
// records read, only with the duplicate index of sources.Run (16 bytes per
// row and key during the first pass, about 32 MB for a million rows, then
// only the duplicated keys).
package csvsrc

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gocarina/gocsv"

	"hrsync/model"
	"hrsync/sources"
)

// Names of the columns the reader appends to every record for the row
// struct. Headers of the file are all renamed, so these cannot clash.
const (
	colLine    = "_line"
	colProblem = "_problem"
	colBlank   = "_blank"
)

// row is what gocsv fills from one record. Its tags are the field names of
// sources.Field; the file's headers are rewritten to them.
type row struct {
	ExternalID string `csv:"externalId"`
	Email      string `csv:"email"`
	FirstName  string `csv:"firstName"`
	LastName   string `csv:"lastName"`
	Department string `csv:"department"`
	Location   string `csv:"location"`
	StartDate  string `csv:"startDate"`
	BirthDate  string `csv:"birthDate"`
	AddBalance string `csv:"addBalance"`
	Line       int    `csv:"_line"`
	Problem    string `csv:"_problem"`
	Blank      string `csv:"_blank"`
}

// fill copies the row struct into a sources.Row.
func (r *row) fill(out *sources.Row) {
	*out = sources.Row{Line: r.Line, Problem: r.Problem, Blank: r.Blank != ""}
	out.Text[sources.ExternalID] = r.ExternalID
	out.Text[sources.Email] = r.Email
	out.Text[sources.FirstName] = r.FirstName
	out.Text[sources.LastName] = r.LastName
	out.Text[sources.Department] = r.Department
	out.Text[sources.Location] = r.Location
	out.Text[sources.StartDate] = r.StartDate
	out.Text[sources.BirthDate] = r.BirthDate
	out.Text[sources.AddBalance] = r.AddBalance
}

// File satisfies sources.Source.
var _ sources.Source = File{}

// File is a CSV export on disk; it satisfies sources.Source.
type File struct {
	Path    string
	Options sources.CSVOptions
	// Now is the time dates are checked against; zero means time.Now().
	Now time.Time
}

// Name is the file's base name, used as the source of rejections.
func (f File) Name() string { return filepath.Base(f.Path) }

// Read opens the file and reads it with Read.
func (f File) Read(ctx context.Context, emit func(model.Person) error, reject func(model.Rejection) error) (sources.Stats, error) {
	fh, err := os.Open(f.Path)
	if err != nil {
		return sources.Stats{}, fmt.Errorf("open export: %w", err)
	}
	defer fh.Close() //nolint:errcheck // read only
	now := f.Now
	if now.IsZero() {
		now = time.Now()
	}
	return read(ctx, f.Name(), fh, f.Options, now, emit, reject)
}

// Read reads the CSV export r, named name in rejections, with opts. Each
// accepted row goes to emit, each problem of a rejected row to reject, in
// row order and from the calling goroutine; emit is never called for a row
// that is later found to be a duplicate (see sources.Run). Dates are
// checked against the current time.
//
// A returned error concerns the whole file: unreadable, empty, missing a
// configured column (a *sources.ColumnsError), changed while read
// (sources.ErrChanged), or an error of emit or reject.
func Read(ctx context.Context, name string, r io.ReadSeeker, opts sources.CSVOptions,
	emit func(model.Person) error, reject func(model.Rejection) error) (sources.Stats, error) {
	return read(ctx, name, r, opts, time.Now(), emit, reject)
}

func read(ctx context.Context, name string, r io.ReadSeeker, opts sources.CSVOptions, now time.Time,
	emit func(model.Person) error, reject func(model.Rejection) error) (sources.Stats, error) {
	if errs := opts.Validate(); len(errs) > 0 {
		return sources.Stats{}, fmt.Errorf("csv options: %w", errors.Join(errs...))
	}
	v, err := sources.NewValidator(name, opts.Mapping, now)
	if err != nil {
		return sources.Stats{}, err
	}
	format, err := Detect(r, opts)
	if err != nil {
		return sources.Stats{}, fmt.Errorf("%s: %w", name, err)
	}
	pass := func(ctx context.Context, keysOnly bool, visit func(*sources.Row) error) error {
		if _, err := r.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("rewind: %w", err)
		}
		recs, err := openRecords(ctx, name, format.decode(r), format.Delimiter, opts.Mapping)
		if err != nil {
			return err
		}
		if keysOnly {
			return recs.keys(visit)
		}
		return recs.rows(ctx, visit)
	}
	return sources.Run(ctx, v, pass, emit, reject)
}

// records reads the records of one pass. It implements gocsv.Decoder for
// the second pass (GetCSVRows).
type records struct {
	ctx    context.Context
	cr     *csv.Reader
	header []string // rewritten header, first of every batch
	ncols  int      // number of columns in the file's header
	index  [sources.NumFields]int
	batch  [][]string // header and records of the current batch
}

// openRecords reads the header of text and maps it: a configured column
// missing from the header, or found twice, is a *sources.ColumnsError.
func openRecords(ctx context.Context, name string, text io.Reader, delim rune, m sources.Mapping) (*records, error) {
	cr := csv.NewReader(text)
	cr.Comma = delim
	cr.FieldsPerRecord = -1 // a row of the wrong width is a rejection, not a file error
	cr.ReuseRecord = true
	head, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: empty file: no header row", name)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: read header: %w", name, err)
	}
	head = append([]string(nil), head...)
	rec := &records{ctx: ctx, cr: cr, ncols: len(head)}
	rec.header = make([]string, len(head), len(head)+3)
	for i := range head {
		rec.header[i] = "\x00" + strconv.Itoa(i) // matches no tag: ignored by gocsv
	}
	byHeader := map[string][]int{}
	for i, h := range head {
		byHeader[sources.NormalizeHeader(h)] = append(byHeader[sources.NormalizeHeader(h)], i)
	}
	var missing, twice []string
	for f := range sources.NumFields {
		rec.index[f] = -1
		col := m.Columns[f.String()]
		if strings.TrimSpace(col) == "" {
			continue
		}
		at := byHeader[sources.NormalizeHeader(col)]
		switch len(at) {
		case 0:
			missing = append(missing, col)
		case 1:
			rec.index[f] = at[0]
			rec.header[at[0]] = f.String()
		default:
			twice = append(twice, col)
		}
	}
	if len(missing) > 0 || len(twice) > 0 {
		found := make([]string, 0, len(head))
		for _, h := range head {
			found = append(found, strings.TrimSpace(strings.Trim(h, "\ufeff")))
		}
		return nil, &sources.ColumnsError{Source: name, Missing: missing, Duplicated: twice, Found: found}
	}
	rec.header = append(rec.header, colLine, colProblem, colBlank)
	return rec, nil
}

// next reads one record: its fields (nil when malformed), the line it
// starts on, and a problem that rejects it.
func (rc *records) next() (fields []string, line int, problem string, err error) {
	if err := rc.ctx.Err(); err != nil {
		return nil, 0, "", fmt.Errorf("read csv: %w", err)
	}
	fields, err = rc.cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, 0, "", io.EOF
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return nil, pe.StartLine, fmt.Sprintf("malformed CSV: %v (line %d, column %d)", pe.Err, pe.Line, pe.Column), nil
	}
	if err != nil {
		return nil, 0, "", fmt.Errorf("read csv: %w", err)
	}
	line, _ = rc.cr.FieldPos(0)
	if len(fields) < rc.ncols || (len(fields) > rc.ncols && !allEmpty(fields[rc.ncols:])) {
		return nil, line, fmt.Sprintf("the row has %d fields, the header has %d", len(fields), rc.ncols), nil
	}
	return fields, line, "", nil
}

func allEmpty(fields []string) bool {
	for _, f := range fields {
		if strings.TrimSpace(f) != "" {
			return false
		}
	}
	return true
}

// keys runs the first pass: externalId and e-mail only, straight from the
// records.
func (rc *records) keys(visit func(*sources.Row) error) error {
	var r sources.Row
	for {
		fields, line, problem, err := rc.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		r = sources.Row{Line: line, Problem: problem, Blank: problem == "" && allEmpty(fields)}
		if fields != nil {
			for _, f := range []sources.Field{sources.ExternalID, sources.Email} {
				if i := rc.index[f]; i >= 0 {
					r.Text[f] = fields[i]
				}
			}
		}
		if err := visit(&r); err != nil {
			return err
		}
	}
}

// batchLen is how many records gocsv maps in one call in the second pass.
const batchLen = 512

// GetCSVRows implements gocsv.Decoder for the second pass: the rewritten
// header, then up to batchLen records with the line, problem and blank
// columns appended; only the header when the file is exhausted. The slices
// are reused by the next call: gocsv copies the strings into the rows.
func (rc *records) GetCSVRows() ([][]string, error) {
	if rc.batch == nil {
		rc.batch = make([][]string, 1, batchLen+1)
		rc.batch[0] = rc.header
	}
	rc.batch = rc.batch[:1]
	for len(rc.batch) <= batchLen {
		fields, line, problem, err := rc.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		i := len(rc.batch)
		rc.batch = rc.batch[:i+1] // the capacity is batchLen+1
		if rc.batch[i] == nil {
			rc.batch[i] = make([]string, len(rc.header))
		}
		out := rc.batch[i]
		clear(out)
		if fields != nil {
			copy(out, fields[:rc.ncols])
		}
		n := len(out)
		out[n-3] = strconv.Itoa(line)
		out[n-2] = problem
		if problem == "" && allEmpty(fields) {
			out[n-1] = "1"
		}
	}
	return rc.batch, nil
}

// rows runs the second pass. A goroutine reads the records and maps them
// onto the row struct with gocsv, a batch at a time (gocsv's per-row
// streaming API hands every row over a channel and calls back through
// reflection, which cost more than the mapping); the calling goroutine
// visits the rows in order. The goroutine ends before rows returns:
// cancelling the reader's context makes its next read fail.
func (rc *records) rows(ctx context.Context, visit func(*sources.Row) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rc.ctx = ctx
	batches := make(chan []row, 2)
	free := make(chan []row, 3)
	mapped := make(chan error, 1)
	go func() {
		defer close(batches)
		mapped <- rc.mapBatches(ctx, batches, free)
	}()
	var (
		stopErr error
		r       sources.Row
	)
	for b := range batches {
		for i := range b {
			b[i].fill(&r)
			if stopErr = visit(&r); stopErr != nil {
				break
			}
		}
		if stopErr != nil {
			cancel()
			break
		}
		select {
		case free <- b[:cap(b)]:
		default:
		}
	}
	// Drain, so that the goroutine ends.
	for range batches {
	}
	err := <-mapped
	if stopErr != nil {
		return stopErr
	}
	return err
}

// mapBatches maps the records with gocsv, batchLen at a time, and sends
// each batch of rows on batches; it reuses the batches it gets back on
// free.
func (rc *records) mapBatches(ctx context.Context, batches chan<- []row, free <-chan []row) error {
	for {
		var out []row
		select {
		case out = <-free:
		default:
			out = make([]row, batchLen)
		}
		if err := gocsv.UnmarshalDecoder(rc, &out); err != nil {
			return fmt.Errorf("map csv rows: %w", err)
		}
		n := len(rc.batch) - 1
		if n == 0 {
			return nil
		}
		select {
		case batches <- out[:n]:
		case <-ctx.Done():
			return fmt.Errorf("map csv rows: %w", ctx.Err())
		}
	}
}
