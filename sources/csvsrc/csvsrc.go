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
// Reading streams, in one pass and on every processor (sources.Run): one
// goroutine reads the text through the guard (record limits, line ends,
// quotes) and cuts it into chunks of whole records that the workers parse
// (see chunks and read), or, after a quote inside an unquoted field,
// reads its records with encoding/csv, keeping the values of the mapped
// columns in batches of sources.BatchLen. The workers split the lines that
// encoding/csv would read trivially themselves (plainLines) and read any
// other record with encoding/csv; they put each value in the field that
// gocarina/gocsv maps it to, a mapping worked out once per file by running
// gocsv on the header (gocsvFields: gocsv.UnmarshalDecoder over a decoder
// that yields the batch, its header rewritten from the configured names
// to the struct's csv tags), and check the rows; the caller gets them in
// order, with the same lines, rejections and duplicates as the existing
// way (readMode.slow: every record with encoding/csv, every batch mapped
// by gocsv). None of gocsv's package-level settings is touched. Memory does not grow with the file,
// only with the keys kept to find duplicates.
package csvsrc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/gocarina/gocsv"

	"hrsync/sources"
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
}

// UnmarshalCSVWithFields sets the field whose csv tag is key. gocsv calls
// it for each value of a record (its TypeUnmarshalCSVWithFields), in place
// of setting the field through reflection, which boxes every value.
func (r *row) UnmarshalCSVWithFields(key, value string) error {
	switch key {
	case "externalId":
		r.ExternalID = value
	case "email":
		r.Email = value
	case "firstName":
		r.FirstName = value
	case "lastName":
		r.LastName = value
	case "department":
		r.Department = value
	case "location":
		r.Location = value
	case "startDate":
		r.StartDate = value
	case "birthDate":
		r.BirthDate = value
	case "addBalance":
		r.AddBalance = value
	default:
		return fmt.Errorf("no field %q in the row", key)
	}
	return nil
}

// fill copies the row struct into the texts of a sources.Row.
func (r *row) fill(out *sources.Row) {
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

// Read opens the file and reads it with Read. A file whose size or
// modification time moved during the read fails with sources.ErrChanged:
// what was read may mix two versions of it.
func (f File) Read(ctx context.Context, h sources.Handler) (sources.Stats, error) {
	fh, err := os.Open(f.Path)
	if err != nil {
		return sources.Stats{}, fmt.Errorf("open export: %w", err)
	}
	defer fh.Close()
	before, err := fh.Stat()
	if err != nil {
		return sources.Stats{}, fmt.Errorf("stat export: %w", err)
	}
	now := f.Now
	if now.IsZero() {
		now = time.Now()
	}
	st, err := read(ctx, f.Name(), fh, f.Options, now, h)
	if err != nil {
		return st, err
	}
	after, err := os.Stat(f.Path)
	if err != nil {
		return st, fmt.Errorf("stat export: %w", err)
	}
	if after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) {
		return st, fmt.Errorf("%s: %w (size %d, then %d bytes)", f.Name(), sources.ErrChanged, before.Size(), after.Size())
	}
	return st, nil
}

// Read reads the CSV export r, named name in rejections, with opts, and
// hands its rows to h as sources.Handler says. Dates are checked against
// the current time. r is read once, from its start.
//
// A returned error concerns the whole file: unreadable, empty, missing a
// configured column (a *sources.ColumnsError), a record over the limits
// of opts or a quote never closed (a *sources.RecordError), or an error
// of h.
func Read(ctx context.Context, name string, r io.ReadSeeker, opts sources.CSVOptions, h sources.Handler) (sources.Stats, error) {
	return read(ctx, name, r, opts, time.Now(), h)
}

// read is Read with dates checked against now. It reads in chunks
// (chunks), parsed on the workers with the fast path (plainLines), on any
// number of processors: with the fast path the chunks cost less CPU than
// the sequential read, whose records encoding/csv reads in one goroutine,
// on one processor as on two (docs/benchmarks.md). Both give the same
// results as the existing way, readMode.slow (TestParallelReadSameAsSequential).
func read(ctx context.Context, name string, r io.ReadSeeker, opts sources.CSVOptions, now time.Time,
	h sources.Handler) (sources.Stats, error) {
	mode := readMode{parallel: runtime.GOMAXPROCS(0) > parallelAbove, lend: h.AcceptRow != nil}
	return readWith(ctx, name, r, opts, now, mode, h)
}

// parallelAbove is the number of processors above which read reads in
// chunks: 0, always.
const parallelAbove = 0

// readMode is how a read splits the work of a file.
type readMode struct {
	// parallel parses the records in chunks on the workers of sources.Run
	// (chunks); else one goroutine reads them all (records).
	parallel bool
	// chunk is the least size of a chunk in bytes; 0 means chunkSize.
	chunk int
	// slow reads the records with encoding/csv alone and maps them with
	// gocsv, without the fast path (plainLines, gocsvFields): the
	// reference the tests compare the fast path with.
	slow bool
	// lend lends the values of the fast path (records.lend): for a
	// handler whose accepted rows go to AcceptRow.
	lend bool
}

// readWith is read, in mode.
func readWith(ctx context.Context, name string, r io.ReadSeeker, opts sources.CSVOptions, now time.Time,
	mode readMode, h sources.Handler) (sources.Stats, error) {
	if errs := opts.Validate(); len(errs) > 0 {
		return sources.Stats{}, fmt.Errorf("csv options: %w", errors.Join(errs...))
	}
	v, err := sources.NewValidator(name, opts.Mapping, now)
	if err != nil {
		return sources.Stats{}, err
	}
	rd, rc, err := openReader(name, r, opts, mode)
	if err != nil {
		return sources.Stats{}, err
	}
	st, err := sources.Run(ctx, v, rd, h)
	st.Corrections = rc.corrections
	return st, err
}

// openReader works out the format of r, reads its header and returns the
// Reader of its rows in mode, with the header's mapping.
func openReader(name string, r io.ReadSeeker, opts sources.CSVOptions, mode readMode) (sources.Reader, *records, error) {
	format, err := Detect(r, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return nil, nil, fmt.Errorf("%s: rewind: %w", name, err)
	}
	text, watch, err := format.text(r)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	g := newGuard(name, text, format.Delimiter, opts.RecordLines(), opts.RecordBytes())
	if !mode.parallel {
		rc, err := openRecords(name, g, format.Delimiter, opts.Mapping, watch, mode.slow)
		if err != nil {
			return nil, nil, err
		}
		return rc, rc, nil
	}
	c, err := openChunks(name, g, format.Delimiter, opts.Mapping, watch, mode)
	if err != nil {
		return nil, nil, err
	}
	return c, c.rc, nil
}

// records reads the records of a file; it is the file's sources.Reader.
// Next reads the records and keeps the values of the mapped columns;
// Fill maps them onto the row struct with gocsv, in the workers.
type records struct {
	cr     *csv.Reader
	ncols  int      // number of columns in the file's header
	cols   []int    // the file's column of each mapped field, in header order
	header []string // the field names of the mapped fields, for gocsv
	// watch, for a text read as it is on disk (UTF-8), says whether bytes
	// that are not UTF-8 were seen: the values of the records read since
	// get them replaced in Fill, as the decoder of the other encodings
	// does for the whole text.
	watch *utf8Watch
	// corrections says the header has sources.CorrectionsColumn.
	corrections bool
	// keep is the most bytes of a mapped value a batch keeps: enough for
	// the validator to find it over maxValueLength (a character is at most
	// 4 bytes), so that a 10 MB value rejects its row without the batch
	// holding it.
	keep int
	// lineOff is added to the lines cr reports: cr may read a part of the
	// file that starts on line lineOff+1 (chunks).
	lineOff int
	// slow reads every record with encoding/csv and maps every batch
	// with gocsv: the way the fast path is checked against (readMode).
	slow bool
	// fields is where gocsv puts each mapped value (gocsvFields), for Fill
	// to put it there itself; nil when that could not be worked out, and
	// then Fill maps with gocsv.
	fields []sources.Field
	// slot is the index in cols of each column of the header, -1 for a
	// column not mapped, for the fast split (plainLines).
	slot []int
	// delim is the delimiter, for the fast split.
	delim byte
	// lend, for a reader whose accepted rows go to a
	// sources.Handler.AcceptRow alone, gives the rows of the fast split
	// values that point into the batch's own buffers (its chunk's text,
	// its arena) instead of a copy of each record: they stay valid until
	// the ordered stage has handed the batch's rows on, as AcceptRow's
	// contract says, and the read makes no garbage for its values.
	lend bool
}

// scratch is what a batch keeps for records between uses.
type scratch struct {
	values [][]string // the header, then the mapped values of each row
	out    []row
	fix    bool // the values may hold bytes that are not UTF-8

	// text, when parse is set, is a run of whole records that starts on
	// line: Next cut it, Fill parses it (chunks).
	text  []byte
	line  int
	parse bool
	src   bytes.Reader  // reads text, for br
	br    *bufio.Reader // reads src for encoding/csv

	// rec and bounds are the values of a record split by plainRecord,
	// and where each starts and ends in them.
	rec    []byte
	bounds []int
	// arena holds, for a read that lends its values (records.lend), the
	// values of the batch's records that plainRecord unquoted.
	arena []byte
}

// openRecords reads the header of text and maps it: a configured column
// missing from the header, or found twice, is a *sources.ColumnsError.
func openRecords(name string, text io.Reader, delim rune, m sources.Mapping, watch *utf8Watch, slow bool) (*records, error) {
	cr := csv.NewReader(text)
	cr.Comma = delim
	cr.FieldsPerRecord = -1 // a row of the wrong width is a rejection, not a file error
	cr.ReuseRecord = true
	head, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: empty file: no header row", name)
	}
	var rec *sources.RecordError
	if errors.As(err, &rec) {
		return nil, rec
	}
	if err != nil {
		return nil, fmt.Errorf("%s: read header: %w", name, err)
	}
	head = append([]string(nil), head...)
	if watch != nil {
		for i := range head {
			head[i] = validUTF8String(head[i])
		}
	}
	rc := &records{cr: cr, ncols: len(head), watch: watch, keep: 4*m.ValueMax() + 4, slow: slow, delim: byte(delim)}
	byHeader := map[string][]int{}
	for i, h := range head {
		byHeader[sources.NormalizeHeader(h)] = append(byHeader[sources.NormalizeHeader(h)], i)
	}
	rc.corrections = len(byHeader[sources.NormalizeHeader(sources.CorrectionsColumn)]) > 0
	var missing, twice []string
	for f := range sources.NumFields {
		col := m.Columns[f.String()]
		if strings.TrimSpace(col) == "" {
			continue
		}
		at := byHeader[sources.NormalizeHeader(col)]
		switch len(at) {
		case 0:
			missing = append(missing, col)
		case 1:
			rc.cols = append(rc.cols, at[0])
			rc.header = append(rc.header, f.String())
		default:
			twice = append(twice, col)
		}
	}
	if len(missing) > 0 || len(twice) > 0 {
		return nil, &sources.ColumnsError{Source: name, Missing: missing, Duplicated: twice, Found: sources.FoundColumns(head)}
	}
	rc.fast()
	return rc, nil
}

// next reads one record: its fields (nil when malformed), the line it
// starts on, and a problem that rejects it.
func (rc *records) next() (fields []string, line int, problem string, err error) {
	fields, err = rc.cr.Read()
	if err != nil {
		line, problem, err = readError(err, rc.lineOff)
		return nil, line, problem, err
	}
	line, _ = rc.cr.FieldPos(0)
	line += rc.lineOff
	if len(fields) < rc.ncols || (len(fields) > rc.ncols && !allEmpty(fields[rc.ncols:])) {
		return nil, line, fmt.Sprintf("the row has %d fields, the header has %d", len(fields), rc.ncols), nil
	}
	return fields, line, "", nil
}

// readError sorts an error of the CSV reader: io.EOF, a record over the
// limits (a file error), a malformed record (a problem that rejects its
// row, on its line) or a failed read. It is apart from next so that the
// targets of errors.As are allocated only when there is an error. off is
// added to the lines of a malformed record.
func readError(err error, off int) (line int, problem string, _ error) {
	if errors.Is(err, io.EOF) {
		return 0, "", io.EOF
	}
	var rec *sources.RecordError
	if errors.As(err, &rec) {
		return 0, "", rec
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return pe.StartLine + off, fmt.Sprintf("malformed CSV: %v (line %d, column %d)", pe.Err, pe.Line+off, pe.Column), nil
	}
	return 0, "", fmt.Errorf("read csv: %w", err)
}

func allEmpty(fields []string) bool {
	for _, f := range fields {
		if strings.TrimSpace(f) != "" {
			return false
		}
	}
	return true
}

// Next reads up to sources.BatchLen records into b: each row's line,
// problem and blankness, and the values of its mapped columns.
func (rc *records) Next(ctx context.Context, b *sources.Batch) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("read csv: %w", err)
	}
	sc := rc.scratchOf(b)
	sc.parse = false
	b.Rows, sc.values = b.Rows[:0], sc.values[:1]
	if err := rc.readRows(b, sc, sources.BatchLen); err != nil {
		return err
	}
	if len(b.Rows) == 0 {
		return io.EOF
	}
	sc.fix = rc.watch != nil && rc.watch.bad
	return nil
}

// scratchOf returns the scratch of b, made on its first use.
func (rc *records) scratchOf(b *sources.Batch) *scratch {
	sc, _ := b.Scratch.(*scratch)
	if sc == nil {
		sc = &scratch{values: [][]string{rc.header}}
		b.Scratch = sc
	}
	return sc
}

// readRows reads the records of rc.cr into b and sc, up to limit of them
// (none when limit < 0), until the end of its text.
func (rc *records) readRows(b *sources.Batch, sc *scratch, limit int) error {
	for limit < 0 || len(b.Rows) < limit {
		fields, line, problem, err := rc.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		// The row is set in place: a CSV row has no native dates, and
		// Fill sets the texts of the rows it looks at.
		b.Rows = slices.Grow(b.Rows, 1)[:len(b.Rows)+1]
		r := &b.Rows[len(b.Rows)-1]
		r.Line, r.Problem, r.Blank = line, problem, problem == "" && allEmpty(fields)
		rc.keepValues(rc.nextValues(sc), fields)
	}
	return nil
}

// nextValues returns the values of the next row of sc, reused.
func (rc *records) nextValues(sc *scratch) []string {
	i := len(sc.values)
	sc.values = slices.Grow(sc.values, 1)[:i+1]
	if sc.values[i] == nil {
		sc.values[i] = make([]string, len(rc.cols))
	}
	return sc.values[i]
}

// copyAbove is the size of a record past which the values a batch keeps
// are copied out of it, so that the batch does not hold its text.
const copyAbove = 64 << 10

// keepValues sets vals to the values of the mapped columns of fields (all
// "" when fields is nil). A value over rc.keep bytes is cut to rc.keep
// bytes, still over maxValueLength characters, so that it rejects its row
// by its column without the batch holding it; the values of a record over
// copyAbove bytes are copied out of its text.
func (rc *records) keepValues(vals, fields []string) {
	size := 0
	for _, f := range fields {
		size += len(f)
	}
	for k, col := range rc.cols {
		vals[k] = ""
		if fields == nil {
			continue
		}
		v := fields[col]
		if size > copyAbove {
			v = strings.Clone(v[:min(len(v), rc.keep)])
		}
		vals[k] = v
	}
}

// batchValues hands a batch's values to gocsv: it implements gocsv.Decoder.
type batchValues [][]string

func (v batchValues) GetCSVRows() ([][]string, error) { return v, nil }

// Fill parses the batch's chunk, if it has one, and sets the texts of its
// rows from their values, as gocsv maps them (rc.fields), or with gocsv
// itself when rc is slow or that mapping is unknown.
func (rc *records) Fill(b *sources.Batch) error {
	sc := b.Scratch.(*scratch)
	if sc.parse {
		if err := rc.parseText(b, sc); err != nil {
			return err
		}
	}
	if rc.slow || rc.fields == nil {
		return rc.fillGocsv(b, sc)
	}
	for i := range b.Rows {
		r := &b.Rows[i]
		if r.Problem != "" || r.Blank {
			continue
		}
		r.Text = [sources.NumFields]string{}
		for k, f := range rc.fields {
			r.Text[f] = sc.values[i+1][k]
		}
		if sc.fix {
			for f := range r.Text {
				r.Text[f] = validUTF8String(r.Text[f])
			}
		}
	}
	return nil
}

// fillGocsv maps the values of a batch onto the row struct with gocsv (a
// batch per call: gocsv's per-row streaming API hands every row over a
// channel and calls back through reflection, which cost more than the
// mapping), then copies them into the rows.
func (rc *records) fillGocsv(b *sources.Batch, sc *scratch) error {
	if err := gocsv.UnmarshalDecoder(batchValues(sc.values), &sc.out); err != nil {
		return fmt.Errorf("map csv rows: %w", err)
	}
	for i := range b.Rows {
		r := &b.Rows[i]
		if r.Problem != "" || r.Blank {
			continue
		}
		sc.out[i].fill(r)
		if sc.fix {
			for f := range r.Text {
				r.Text[f] = validUTF8String(r.Text[f])
			}
		}
	}
	return nil
}
