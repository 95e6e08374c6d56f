package csvsrc

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"

	"hrsync/sources"
)

// Records are raw records of an export read back by line.
type Records struct {
	// Header is the file's header row.
	Header []string
	// Values are the fields of each record found, by the line it starts on.
	Values map[int][]string
	// Delimiter is the file's delimiter.
	Delimiter rune
}

// Rows reads back the raw records of an export that start on the given
// lines (the lines of its rejections), as Read found them: the same
// encoding, delimiter and record limits. It returns the file's header and
// the values of each line found, for the rejects report, each as the file
// has it (decoded to UTF-8): a line break inside a quoted value stays LF,
// CRLF or CR, where encoding/csv would make it LF. A line whose record is
// malformed CSV is missing. It checks nothing else.
func Rows(ctx context.Context, name string, r io.ReadSeeker, opts sources.CSVOptions, lines map[int]bool) (Records, error) {
	format, err := Detect(r, opts)
	if err != nil {
		return Records{}, fmt.Errorf("%s: %w", name, err)
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return Records{}, fmt.Errorf("%s: rewind: %w", name, err)
	}
	text, watch, err := format.text(r)
	if err != nil {
		return Records{}, fmt.Errorf("%s: %w", name, err)
	}
	g := newGuard(name, text, format.Delimiter, opts.RecordLines(), opts.RecordBytes())
	g.tap = newTap(lines)
	cr := csv.NewReader(g)
	cr.Comma = format.Delimiter
	cr.FieldsPerRecord = -1
	fix := func(rec []string) []string {
		if watch != nil && watch.bad {
			for i := range rec {
				rec[i] = validUTF8String(rec[i])
			}
		}
		return rec
	}
	header, err := cr.Read()
	if err != nil {
		return Records{}, fmt.Errorf("%s: read header: %w", name, err)
	}
	header = fix(header)
	rows := make(map[int][]string, len(lines))
	for len(rows) < len(lines) {
		if err := ctx.Err(); err != nil {
			return Records{}, fmt.Errorf("%s: %w", name, err)
		}
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			continue // a malformed record: its values cannot be told apart
		}
		if err != nil {
			return Records{}, fmt.Errorf("%s: read rows: %w", name, err)
		}
		if line, _ := cr.FieldPos(0); lines[line] {
			rows[line] = fix(g.tap.take(line, format.Delimiter, rec))
		}
	}
	return Records{Header: header, Values: rows, Delimiter: format.Delimiter}, nil
}
