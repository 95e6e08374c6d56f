package csvsrc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"hrsync/sources"
	"hrsync/sources/sourcestest"
)

const head4 = "Employee ID,Work Email,First Name,Last Name"

func four() sources.CSVOptions { return opts("externalId", "email", "firstName", "lastName") }

// people makes n rows of the four default columns, from id first.
func people(first, n int, eol string) string {
	var b strings.Builder
	for i := first; i < first+n; i++ {
		fmt.Fprintf(&b, "%d,p%d@example.com,First%d,Last%d%s", i, i, i, i, eol)
	}
	return b.String()
}

func TestCROnlyExport(t *testing.T) {
	data := head4 + "\r" + people(1, 2, "\r") + "3,p3@example.com,\"Two\rLines\",Last3\r4,p4@example.com,F,L"
	res, err := readString(data, four())
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if res.stats != (sources.Stats{Rows: 4, Accepted: 4}) || len(res.rejs) > 0 {
		t.Fatalf("stats %+v, rejections %s", res.stats, rejDump(res.rejs))
	}
	wantLines := []int{2, 3, 4, 6}
	for i, p := range res.people {
		if p.Line != wantLines[i] {
			t.Errorf("person %s on line %d, want %d", p.ExternalID, p.Line, wantLines[i])
		}
	}
	if got := res.people[2].FirstName; got != "Two\nLines" {
		t.Errorf("quoted value across a CR = %q, want a line break", got)
	}
}

func TestLoneCRInCRLFFile(t *testing.T) {
	// A lone CR outside quotes ends its row; inside quotes it stays in the value.
	data := head4 + "\r\n1,p1@example.com,A,B\r2,p2@example.com,C,D\r\n3,p3@example.com,\"E\rF\",G\r\n"
	res, err := readString(data, four())
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if res.stats != (sources.Stats{Rows: 3, Accepted: 3}) {
		t.Fatalf("stats %+v, rejections %s", res.stats, rejDump(res.rejs))
	}
	if res.people[1].ExternalID != "2" || res.people[1].Line != 3 || res.people[2].FirstName != "E\rF" {
		t.Errorf("people = %s", dump(res.people))
	}
}

func TestStrayQuoteIsAFileError(t *testing.T) {
	rows := people(3, 298, "\n")
	t.Run("quote that runs over the lines", func(t *testing.T) {
		data := head4 + "\n1,p1@example.com,A,B\n2,\"p2@example.com,C,D\n" + rows
		res, err := readString(data, four())
		var re *sources.RecordError
		if !errors.As(err, &re) || re.Problem != sources.RecordTooManyLines || re.QuoteLine != 3 || re.Line != 3 {
			t.Fatalf("err = %#v, want a RecordError for the quote of line 3", err)
		}
		want := "s.csv:3: a quoted field opened on line 3 runs over 20 lines (csv.maxRecordLines); a stray quote there would swallow the rows after it; the export was not read"
		if err.Error() != want {
			t.Errorf("message %q, want %q", err.Error(), want)
		}
		if strings.Contains(err.Error(), "@") || res.stats.Rows > 1 {
			t.Errorf("message quotes the file, or rows went on: %+v", res.stats)
		}
	})
	t.Run("quote never closed", func(t *testing.T) {
		data := head4 + "\n" + people(1, 10, "\n") + "11,p11@example.com,\"A,B\n12,p12@example.com,C,D\n"
		_, err := readString(data, four())
		var re *sources.RecordError
		if !errors.As(err, &re) || re.Problem != sources.RecordUnclosed || re.QuoteLine != 12 {
			t.Fatalf("err = %v, want an unclosed quote on line 12", err)
		}
	})
	t.Run("configured lines", func(t *testing.T) {
		o := four()
		o.MaxRecordLines = 3
		data := head4 + "\n1,p1@example.com,\"a\nb\nc\",B\n2,p2@example.com,\"a\nb\nc\nd\",B\n"
		_, err := readString(data, o)
		var re *sources.RecordError
		if !errors.As(err, &re) || re.QuoteLine != 5 {
			t.Fatalf("err = %v, want the quote of line 5 over 3 lines", err)
		}
	})
}

// smallRecords is four() with a record limit of 64 KiB (the limit before
// a value over maxValueLength rejected only its row).
func smallRecords() sources.CSVOptions {
	o := four()
	o.MaxRecordBytes = 64 << 10
	return o
}

func TestRecordTooLong(t *testing.T) {
	long := strings.Repeat("x", smallRecords().MaxRecordBytes)
	for name, row := range map[string]string{
		"unquoted": "2,p2@example.com," + long + ",B\n",
		"quoted":   "2,p2@example.com,\"" + long + "\",B\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := readString(head4+"\n1,p1@example.com,A,B\n"+row+"3,p3@example.com,C,D\n", smallRecords())
			var re *sources.RecordError
			if !errors.As(err, &re) || re.Problem != sources.RecordTooLong || re.Line != 3 {
				t.Fatalf("err = %v, want a record over its bytes on line 3", err)
			}
			if len(err.Error()) > 300 {
				t.Errorf("message of %d bytes", len(err.Error()))
			}
		})
	}
	t.Run("header", func(t *testing.T) {
		_, err := readString(head4+","+long+"\n1,p1@example.com,A,B\n", smallRecords())
		var re *sources.RecordError
		if !errors.As(err, &re) || re.Line != 1 {
			t.Fatalf("err = %v, want a record over its bytes on line 1", err)
		}
	})
}

// TestRowsAddUp checks that accepted, rejected and skipped rows add up to
// the records of the file, whatever is wrong with them.
func TestRowsAddUp(t *testing.T) {
	data := head4 + "\r\n" +
		"1,p1@example.com,A,B\r\n" + // accepted
		",,,\r\n" + // blank: skipped
		"2,p2@example.com,A\"x,B\r\n" + // bare quote: rejected
		"3,p3@example.com,\"A\"x,B\r\n" + // quote then text: rejected
		"4,p4@example.com,\"A\r\nB\",C\r\n" + // two lines: accepted
		"5,not-an-email,A,B\r" + // lone CR: rejected, and ends the row
		"6,p6@example.com,A,B,extra\r\n" + // too many fields: rejected
		"\r\n" + // empty line: not a record
		"7,p7@example.com,A,B" // no line end: accepted
	res, err := readString(data, four())
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	want := sources.Stats{Rows: 7, Accepted: 3, Rejected: 4, Skipped: 1}
	if res.stats != want {
		t.Fatalf("stats %+v, want %+v; rejections %s", res.stats, want, rejDump(res.rejs))
	}
}

// TestChunkedReadsGiveTheSameResult reads files a byte at a time, so that
// every carriage return is the last byte of a read.
func TestChunkedReadsGiveTheSameResult(t *testing.T) {
	for _, data := range []string{
		head4 + "\r" + people(1, 3, "\r"),
		head4 + "\r\n" + people(1, 3, "\r\n") + "4,p4@example.com,\"A\rB\",C\r5,p5@example.com,A,B\r",
		head4 + "\n" + people(1, 2, "\n") + "3,\"p3@example.com\"\r,A,B\n",
		// Lines with quoted fields, taken at once by the guard's fast path
		// when every quote closes on its line, else scanned step by step.
		head4 + "\r\n" + "1,\"p1@example.com\",\"A, \"\"Al\"\"\",B\r\n2,p2@example.com,\"\",\"B\"\r\n",
		head4 + "\n" + "1,p1@example.com,A\"x,B\n2,p2@example.com,\"A\"x,B\n3,p3@example.com,\"A\nB\",C\n",
		head4 + "\n" + "1,p1@example.com,\"A\",\"B\n4,p4@example.com,C,D\n",
	} {
		whole, werr := readString(data, four())
		var got sourcestest.Result
		st, err := read(context.Background(), "s.csv", trickle{bytes.NewReader([]byte(data))}, four(), testNow(), got.Handler())
		if fmt.Sprint(werr) != fmt.Sprint(err) || st != whole.stats || dump(got.People) != dump(whole.people) {
			t.Errorf("%q: whole %+v %v, a byte at a time %+v %v", data, whole.stats, werr, st, err)
		}
	}
}

// TestTenMegabyteFieldMemory reads an export with a 10 MB field and a
// record limit of 64 KiB, and checks that the read allocates a small part
// of it: the record is refused when it runs over maxRecordBytes, before
// encoding/csv holds all of it.
func TestTenMegabyteFieldMemory(t *testing.T) {
	const size = 10 << 20
	for name, field := range map[string]string{
		"quoted field": "\"" + strings.Repeat("y", size) + "\"",
		"line":         strings.Repeat("y", size),
	} {
		t.Run(name, func(t *testing.T) {
			data := []byte(head4 + "\n1,p1@example.com,A,B\n2,p2@example.com," + field + ",B\n3,p3@example.com,C,D\n")
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			var got sourcestest.Result
			_, err := read(context.Background(), "big.csv", bytes.NewReader(data), smallRecords(), testNow(), got.Handler())
			runtime.ReadMemStats(&after)
			var re *sources.RecordError
			if !errors.As(err, &re) || re.Line != 3 {
				t.Fatalf("err = %v, want a record over its bytes on line 3", err)
			}
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("reading a file of %d bytes allocated %d bytes", len(data), alloc)
			if alloc > 3<<20 {
				t.Errorf("reading a 10 MB field allocated %d bytes, want under 3 MiB", alloc)
			}
		})
	}
}

// TestTenMegabyteValueRejectsItsRow: with the default limits, a 10 MB value
// (quoted or not, in a mapped column or not) rejects its row only, by its
// line and column, over maxValueLength; the rows around it are read, and
// the read holds about the record a few times over (encoding/csv's
// buffers grow by doubling), not once per batch or worker.
func TestTenMegabyteValueRejectsItsRow(t *testing.T) {
	const size = 10 << 20
	long := strings.Repeat("y", size)
	for name, c := range map[string]struct {
		row, column string
	}{
		"quoted, mapped":   {"2,p2@example.com,\"" + long + "\",B,x", "First Name"},
		"unquoted, mapped": {"2,p2@example.com," + long + ",B,x", "First Name"},
		"unmapped":         {"2,p2@example.com,A,B," + long, ""},
		"email":            {"2," + long + "@example.com,A,B,x", "Work Email"},
	} {
		t.Run(name, func(t *testing.T) {
			data := []byte(head4 + ",Notes\n1,p1@example.com,A,B,x\n" + c.row + "\n3,p3@example.com,C,D,x\n")
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			var got sourcestest.Result
			st, err := read(context.Background(), "big.csv", bytes.NewReader(data), four(), testNow(), got.Handler())
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			if c.column == "" {
				if st.Accepted != 3 || len(got.Rejections) != 0 {
					t.Fatalf("stats %+v, rejections %s: want all three rows (the long value is in no mapped column)", st, rejDump(got.Rejections))
				}
			} else {
				want := sources.Stats{Rows: 3, Accepted: 2, Rejected: 1}
				if st != want || len(got.Rejections) != 1 {
					t.Fatalf("stats %+v, want %+v; rejections %s", st, want, rejDump(got.Rejections))
				}
				r := got.Rejections[0]
				if r.Line != 3 || r.Field != c.column || r.Reason != "value is longer than 1000 characters (maxValueLength)" {
					t.Errorf("rejection %+v", r)
				}
			}
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("reading a file of %d bytes allocated %d bytes", len(data), alloc)
			if alloc > 8*size {
				t.Errorf("reading a 10 MB value allocated %d bytes, want under %d", alloc, 8*size)
			}
		})
	}
}

// TestRecordOverTheDefaultLimit: a record over the default maxRecordBytes
// (64 MiB) still refuses the file, naming its line, before encoding/csv
// holds it.
func TestRecordOverTheDefaultLimit(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(head4 + "\n1,p1@example.com,A,B\n2,p2@example.com,\"")
	b.Write(bytes.Repeat([]byte("z"), sources.DefaultMaxRecordBytes))
	b.WriteString("\",B\n3,p3@example.com,C,D\n")
	var got sourcestest.Result
	_, err := read(context.Background(), "huge.csv", bytes.NewReader(b.Bytes()), four(), testNow(), got.Handler())
	var re *sources.RecordError
	if !errors.As(err, &re) || re.Problem != sources.RecordTooLong || re.Line != 3 {
		t.Fatalf("err = %v, want a record over its bytes on line 3", err)
	}
	if want := "huge.csv:3: a quoted field opened on line 3 runs over 67108864 bytes (csv.maxRecordBytes)"; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q, want it to start %q", err, want)
	}
	if len(got.People) != 0 {
		t.Errorf("%d people handed over from a refused file", len(got.People))
	}
}
