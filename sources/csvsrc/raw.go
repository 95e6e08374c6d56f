package csvsrc

import (
	"strings"
)

// recordTap keeps the text of the records that start on wanted lines as
// the file has it (decoded to UTF-8, before the guard rewrites a carriage
// return that ends a record), so that Rows gives their values byte for
// byte: encoding/csv turns every CRLF into LF, inside quoted fields too,
// and in a CR-only file the guard turns every lone CR into LF.
type recordTap struct {
	want map[int]bool
	got  map[int]string
	cur  []byte
	on   bool // the current record is wanted
}

// newTap keeps the records that start on the given lines (never the
// header, on line 1).
func newTap(lines map[int]bool) *recordTap {
	return &recordTap{want: lines, got: make(map[int]string, len(lines))}
}

// end closes the record that started on line; the next one starts on
// next (0 at the end of the text).
func (t *recordTap) end(line, next int) {
	if t.on {
		t.got[line] = string(t.cur)
		t.cur = t.cur[:0]
	}
	t.on = next > 1 && t.want[next]
}

// take returns the values of the record on line as the file has them,
// when its text was kept and splits into the fields encoding/csv read
// (parsed, the same values up to their line breaks); else parsed. The
// kept text is dropped.
func (t *recordTap) take(line int, delim rune, parsed []string) []string {
	raw, ok := t.got[line]
	delete(t.got, line)
	if !ok || delim >= 0x80 {
		return parsed
	}
	fields, ok := splitRecord(raw, byte(delim))
	if !ok || len(fields) != len(parsed) {
		return parsed
	}
	for i := range fields {
		if lineBreaksAsLF(fields[i]) != lineBreaksAsLF(parsed[i]) {
			return parsed
		}
	}
	return fields
}

// lineBreaksAsLF writes every line break of s (CRLF, CR, LF) as LF.
func lineBreaksAsLF(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// splitRecord splits the text of one record, which encoding/csv read
// without error, into its fields, keeping every byte of a quoted field
// (its doubled quotes undone). The record ends with LF, CRLF, a lone CR
// or the end of the text. false when the text is not one such record.
func splitRecord(raw string, delim byte) ([]string, bool) {
	var fields []string
	for i := 0; ; {
		var field string
		var ok bool
		if i < len(raw) && raw[i] == '"' {
			field, i, ok = quotedField(raw, i+1)
		} else {
			field, i, ok = plainField(raw, i, delim)
		}
		if !ok {
			return nil, false
		}
		fields = append(fields, field)
		rest := raw[i:]
		switch {
		case rest == "", rest == "\n", rest == "\r", rest == "\r\n":
			return fields, true
		case rest[0] == delim:
			i++
		default:
			return nil, false
		}
	}
}

// quotedField reads the quoted field whose text starts at raw[i] (after
// its opening quote): its value and where its closing quote ends.
func quotedField(raw string, i int) (string, int, bool) {
	var b strings.Builder
	for {
		j := strings.IndexByte(raw[i:], '"')
		if j < 0 {
			return "", 0, false
		}
		b.WriteString(raw[i : i+j])
		i += j + 1
		if i < len(raw) && raw[i] == '"' {
			b.WriteByte('"')
			i++
			continue
		}
		return b.String(), i, true
	}
}

// plainField reads the unquoted field at raw[i]: up to the delimiter or
// the record's end.
func plainField(raw string, i int, delim byte) (string, int, bool) {
	j := strings.IndexFunc(raw[i:], func(r rune) bool { return r == rune(delim) || r == '\n' || r == '\r' })
	if j < 0 {
		j = len(raw) - i
	}
	field := raw[i : i+j]
	if strings.IndexByte(field, '"') >= 0 {
		return "", 0, false // a quote inside an unquoted field: not read here
	}
	return field, i + j, true
}
