package csvsrc

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"

	"hrsync/sources"
)

// Format is how a file is written: its text encoding and delimiter, as
// configured or detected.
type Format struct {
	Encoding  string // one of the sources.Encoding* names, never "auto"
	Delimiter rune   // ',', ';' or '\t'
}

// peekSize bounds how much of the decoded text the delimiter detection
// looks at for the end of the header line.
const peekSize = 64 << 10

// Detect works out the format of r from opts: a configured encoding or
// delimiter is taken as is, "auto" and "" are detected; a file that starts
// with a UTF-8 byte order mark is UTF-8 whatever the configured encoding.
// r is left at an unspecified offset.
func Detect(r io.ReadSeeker, opts sources.CSVOptions) (Format, error) {
	enc, ok := opts.EncodingName()
	if !ok {
		return Format{}, fmt.Errorf("unknown encoding %q", opts.Encoding)
	}
	delim, ok := opts.DelimiterRune()
	if !ok {
		return Format{}, fmt.Errorf("unknown delimiter %q", opts.Delimiter)
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return Format{}, fmt.Errorf("rewind: %w", err)
	}
	switch {
	case enc == sources.EncodingAuto:
		var err error
		if enc, err = detectEncoding(r); err != nil {
			return Format{}, err
		}
	case enc != sources.EncodingUTF8 && hasUTF8BOM(r):
		// A configured encoding yields to a UTF-8 byte order mark: such a
		// file is Excel's "CSV UTF-8" (a rejects report fixed and saved
		// again), never Windows-1252 text starting with "ï»¿" nor UTF-16.
		enc = sources.EncodingUTF8
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return Format{}, fmt.Errorf("rewind: %w", err)
	}
	f := Format{Encoding: enc, Delimiter: delim}
	if delim == 0 {
		br := bufio.NewReaderSize(f.decode(r), peekSize)
		head, err := br.Peek(peekSize)
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
			return Format{}, fmt.Errorf("read header line: %w", err)
		}
		f.Delimiter = detectDelimiter(head)
	}
	return f, nil
}

// decode wraps r in the decoder of the format's encoding; the output is
// UTF-8 without a byte order mark.
func (f Format) decode(r io.Reader) io.Reader {
	var t transform.Transformer
	switch f.Encoding {
	case sources.EncodingUTF16LE:
		t = unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewDecoder()
	case sources.EncodingUTF16BE:
		t = unicode.UTF16(unicode.BigEndian, unicode.UseBOM).NewDecoder()
	case sources.EncodingWindows1252:
		t = charmap.Windows1252.NewDecoder()
	default:
		// UTF8BOM drops a leading byte order mark and replaces invalid
		// bytes with U+FFFD, which validation then rejects.
		t = unicode.UTF8BOM.NewDecoder()
	}
	return transform.NewReader(r, t)
}

// utf8BOM is the byte order mark of UTF-8.
const utf8BOM = "\xEF\xBB\xBF"

// text returns the file's text as UTF-8 for the CSV reader. A UTF-8 file is
// read as it is on disk, less a leading byte order mark, through a
// utf8Watch: once it has seen a byte that is not valid UTF-8, the values
// read from then on must go through validUTF8String, which does to each
// what the decoder would have done to the whole text. Most files are valid
// throughout, and their values need nothing. Other encodings are decoded,
// and watch is nil.
func (f Format) text(r io.Reader) (text io.Reader, watch *utf8Watch, err error) {
	if f.Encoding != sources.EncodingUTF8 {
		return f.decode(r), nil, nil
	}
	watch = &utf8Watch{r: r}
	br := bufio.NewReaderSize(watch, peekSize)
	head, err := br.Peek(len(utf8BOM))
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, fmt.Errorf("read start: %w", err)
	}
	if string(head) == utf8BOM {
		_, _ = br.Discard(len(utf8BOM))
	}
	return br, watch, nil
}

// utf8Watch passes a text through and notes whether any of it so far was
// not valid UTF-8. A rune cut between two reads is checked whole.
type utf8Watch struct {
	r    io.Reader
	tail []byte // the start of a rune the last read cut
	bad  bool
}

func (w *utf8Watch) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	if !w.bad {
		w.check(p[:n], err != nil)
	}
	return n, err
}

// check looks at the next chunk of the text; last is set at its end.
func (w *utf8Watch) check(chunk []byte, last bool) {
	if len(w.tail) > 0 && len(chunk) > 0 {
		// Complete the cut rune with the chunk's first bytes.
		joined := append(w.tail, chunk[:min(len(chunk), utf8.UTFMax-len(w.tail))]...)
		if !utf8.FullRune(joined) { // still cut: the chunk was all of it
			w.tail = joined
			w.bad = last
			return
		}
		r, size := utf8.DecodeRune(joined)
		if (r == utf8.RuneError && size <= 1) || size <= len(w.tail) {
			w.bad = true
			return
		}
		chunk = chunk[size-len(w.tail):]
		w.tail = w.tail[:0]
	}
	keep := 0
	if !last {
		keep = incompleteTail(chunk)
	}
	if !utf8.Valid(chunk[:len(chunk)-keep]) {
		w.bad = true
		return
	}
	w.tail = append(w.tail, chunk[len(chunk)-keep:]...)
	if last && len(w.tail) > 0 {
		w.bad = true
	}
}

// validUTF8String replaces each byte of s that is not part of valid UTF-8
// with U+FFFD, as the UTF-8 decoder of the other path does.
func validUTF8String(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	out, err := unicode.UTF8.NewDecoder().String(s)
	if err != nil { // the decoder replaces, it does not fail
		return strings.ToValidUTF8(s, "\uFFFD")
	}
	return out
}

// detectEncoding looks for a byte order mark; without one the file is
// UTF-8 if all of it is valid UTF-8, else Windows-1252. A file that r can
// read at any offset (an *os.File) is checked in sections of
// utf8Section bytes by parallel jobs (validUTF8At), any other r in order.
func detectEncoding(r io.ReadSeeker) (string, error) {
	return detectEncodingIn(r, utf8Section)
}

// utf8Section is how many bytes of a file detectEncoding gives a job to
// check: 13 jobs for a million-row export (107 MB). On the 2-vCPU VM of
// docs/benchmarks.md a job checks it in about 2 ms.
const utf8Section = 8 << 20

// detectEncodingIn is detectEncoding with jobs of section bytes.
func detectEncodingIn(r io.ReadSeeker, section int64) (string, error) {
	var start [3]byte
	n, err := io.ReadFull(r, start[:])
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return "", fmt.Errorf("read start: %w", err)
	}
	head := start[:n]
	switch {
	case bytes.HasPrefix(head, []byte{0xEF, 0xBB, 0xBF}):
		return sources.EncodingUTF8, nil
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}):
		return sources.EncodingUTF16LE, nil
	case bytes.HasPrefix(head, []byte{0xFE, 0xFF}):
		return sources.EncodingUTF16BE, nil
	}
	var ok bool
	if at, isAt := r.(io.ReaderAt); isAt {
		size, err := r.Seek(0, io.SeekEnd)
		if err != nil {
			return "", fmt.Errorf("find size: %w", err)
		}
		ok, err = validUTF8At(at, size, section)
		if err != nil {
			return "", err
		}
	} else if ok, err = validUTF8(io.MultiReader(bytes.NewReader(head), r)); err != nil {
		return "", err
	}
	if ok {
		return sources.EncodingUTF8, nil
	}
	return sources.EncodingWindows1252, nil
}

// validUTF8 reports whether all of r is valid UTF-8, reading it in chunks
// so that memory does not grow with the file.
func validUTF8(r io.Reader) (bool, error) {
	const chunk = 64 << 10
	buf := make([]byte, chunk+utf8.UTFMax)
	carry := 0
	for {
		n, err := r.Read(buf[carry : carry+chunk])
		data := buf[:carry+n]
		eof := errors.Is(err, io.EOF)
		if err != nil && !eof {
			return false, fmt.Errorf("read: %w", err)
		}
		keep := 0
		if !eof {
			keep = incompleteTail(data)
		}
		if !utf8.Valid(data[:len(data)-keep]) {
			return false, nil
		}
		if eof {
			return true, nil
		}
		copy(buf, data[len(data)-keep:])
		carry = keep
	}
}

// validUTF8At reports whether the size bytes of r are valid UTF-8, checked
// with validUTF8 in sections of about section bytes (at least
// utf8.UTFMax), by up to GOMAXPROCS jobs at once.
//
// Each section starts where utf8Start moves its nominal start, and ends
// where the next one starts: the sections cover the text once, in order.
// In valid UTF-8 a byte that is not a continuation byte starts a rune, so
// each section of a valid text is valid. In an invalid text, the section
// holding the first byte where an in-order check fails starts on a rune
// of that check (its start is an earlier byte that is not a continuation
// byte) or on that byte, and so fails as well; a run of more than three
// continuation bytes, which utf8Start does not look past, is invalid
// wherever it is cut. The starts are found once, before the jobs; once a
// section is found invalid, the jobs not yet started are skipped.
func validUTF8At(r io.ReaderAt, size, section int64) (bool, error) {
	section = max(section, utf8.UTFMax)
	n := max(1, size/section)
	if n == 1 {
		return validUTF8(io.NewSectionReader(r, 0, size))
	}
	// bounds[k] and bounds[k+1] are where section k starts and ends.
	bounds := make([]int64, n+1)
	for k := range n {
		var err error
		if bounds[k], err = utf8Start(r, size, k*section); err != nil {
			return false, err
		}
	}
	bounds[n] = size
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	var bad atomic.Bool
	for k := range n {
		g.Go(func() error {
			if bad.Load() {
				return nil
			}
			ok, err := validUTF8(io.NewSectionReader(r, bounds[k], bounds[k+1]-bounds[k]))
			if !ok {
				bad.Store(true)
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return false, err
	}
	return !bad.Load(), nil
}

// utf8Start returns the first offset from at on (of the size bytes of r)
// whose byte is not a UTF-8 continuation byte, looking at most
// utf8.UTFMax bytes ahead (at+4 when they all are: no valid text has such
// a run), or size.
func utf8Start(r io.ReaderAt, size, at int64) (int64, error) {
	if at <= 0 {
		return 0, nil
	}
	var buf [utf8.UTFMax]byte
	want := min(int64(len(buf)), size-at)
	n, err := r.ReadAt(buf[:want], at)
	if int64(n) < want {
		return 0, fmt.Errorf("read: %w", cmp.Or(err, io.ErrUnexpectedEOF))
	}
	for i, c := range buf[:n] {
		if c&0xC0 != 0x80 {
			return at + int64(i), nil
		}
	}
	return at + int64(n), nil
}

// incompleteTail returns how many bytes at the end of b start a rune that
// the next read may complete.
func incompleteTail(b []byte) int {
	for i := 1; i <= utf8.UTFMax-1 && i <= len(b); i++ {
		c := b[len(b)-i]
		if c&0xC0 == 0x80 { // continuation byte: look further back
			continue
		}
		if c >= 0xC0 && !utf8.FullRune(b[len(b)-i:]) {
			return i
		}
		return 0
	}
	return 0
}

// detectDelimiter counts tabs, semicolons and commas outside quotes on the
// first line of head and picks the most frequent; ties go to tab, then
// semicolon, then comma, and a line with none is comma-separated.
func detectDelimiter(head []byte) rune {
	var tabs, semis, commas int
	inQuotes := false
scan:
	for _, c := range head {
		switch c {
		case '"':
			inQuotes = !inQuotes
		case '\n':
			if !inQuotes {
				break scan
			}
		case '\t':
			if !inQuotes {
				tabs++
			}
		case ';':
			if !inQuotes {
				semis++
			}
		case ',':
			if !inQuotes {
				commas++
			}
		}
	}
	switch {
	case tabs > 0 && tabs >= semis && tabs >= commas:
		return '\t'
	case semis > 0 && semis >= commas:
		return ';'
	}
	return ','
}

// hasUTF8BOM tells whether r starts with the UTF-8 byte order mark.
func hasUTF8BOM(r io.ReadSeeker) bool {
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return false
	}
	head := make([]byte, len(utf8BOM))
	n, _ := io.ReadFull(r, head)
	return string(head[:n]) == utf8BOM
}
