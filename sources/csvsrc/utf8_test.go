package csvsrc

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"hrsync/sources"
)

// utf8Pieces are what randomText builds texts of: ASCII, runes of every
// length, and the ways UTF-8 goes wrong (a lone continuation byte, a cut
// rune, bytes that never occur, an overlong form, a surrogate, a run of
// continuation bytes too long for any rune).
var utf8Pieces = [][]byte{
	[]byte("a"), []byte("abc,def\n"), []byte("é"), []byte("€"), []byte("𝄞"),
	{0x80}, {0xBF}, {0xC3}, {0xE2, 0x82}, {0xF0, 0x9D, 0x84}, {0xFF}, {0xC0, 0xAF},
	{0xED, 0xA0, 0x80}, {0x80, 0x80, 0x80, 0x80, 0x80}, {0xE9},
}

// randomText returns a text of n pieces; with valid set, only the valid ones.
func randomText(rng *rand.Rand, n int, valid bool) []byte {
	var b []byte
	for range n {
		p := utf8Pieces[rng.IntN(len(utf8Pieces))]
		for valid && !utf8.Valid(p) {
			p = utf8Pieces[rng.IntN(len(utf8Pieces))]
		}
		b = append(b, p...)
	}
	return b
}

// TestValidUTF8AtMatchesInOrder checks the sections of validUTF8At against
// utf8.Valid of the whole text, for texts valid and not, cut in sections
// of every small size (so that sections start inside runes, on runs of
// continuation bytes, and on invalid bytes) and in one.
func TestValidUTF8AtMatchesInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	invalid := 0
	const texts = 1000
	for i := range texts {
		data := randomText(rng, 1+rng.IntN(40), i%3 == 0)
		want := utf8.Valid(data)
		if !want {
			invalid++
		}
		for _, section := range []int64{1, 4, 5, 6, 7, 9, 13, 1 << 20} {
			got, err := validUTF8At(bytes.NewReader(data), int64(len(data)), section)
			if err != nil || got != want {
				t.Fatalf("validUTF8At(%q, section %d) = %v, %v; utf8.Valid says %v", data, section, got, err, want)
			}
		}
	}
	if invalid < texts/3 || invalid > texts*29/30 {
		t.Fatalf("%d of %d texts invalid: the generator no longer mixes both kinds", invalid, texts)
	}
}

// TestDetectEncodingInSections detects the encoding of files cut in many
// sections, read from disk as Detect reads them: a UTF-8 file whose runes
// straddle the sections' nominal starts, and the same file with one
// Windows-1252 byte in its first, middle or last section, or a UTF-8 rune
// cut by its end. A reader that cannot read at an offset is read in order,
// with the same answers.
func TestDetectEncodingInSections(t *testing.T) {
	const section = 4096
	var utf8Text []byte
	for len(utf8Text) < 10*section {
		utf8Text = append(utf8Text, "E1,€€€€€€€€,𝄞𝄞𝄞𝄞,Zürich\n"...) // 53 bytes: most section starts fall inside a rune
	}
	inRune := 0 // nominal section starts that fall inside a rune
	for at := section; at < len(utf8Text); at += section {
		if utf8Text[at]&0xC0 == 0x80 {
			inRune++
		}
	}
	if inRune < 3 {
		t.Fatalf("only %d section starts fall inside a rune: the text no longer tests the cut", inRune)
	}
	withByte := func(at int, b ...byte) []byte {
		out := bytes.Clone(utf8Text)
		return append(out[:at:at], append(b, out[at:]...)...)
	}
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"utf-8 across sections", utf8Text, sources.EncodingUTF8},
		{"windows-1252 byte in the first section", withByte(10, 0xE9), sources.EncodingWindows1252},
		{"windows-1252 byte in a middle section", withByte(5*section+1, 0xE9), sources.EncodingWindows1252},
		{"windows-1252 byte in the last section", withByte(len(utf8Text)-2, 0xE9), sources.EncodingWindows1252},
		{"lone continuation byte on a section start", withByte(3*section, 0x80), sources.EncodingWindows1252},
		{"rune cut by the end", append(bytes.Clone(utf8Text), 0xE2, 0x82), sources.EncodingWindows1252},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "export.csv")
			if err := os.WriteFile(path, tt.data, 0o600); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got, err := detectEncodingIn(f, section)
			if err != nil || got != tt.want {
				t.Errorf("file in sections of %d bytes: detectEncoding = %q, %v; want %q", section, got, err, tt.want)
			}
			got, err = detectEncodingIn(readSeekerOnly{bytes.NewReader(tt.data)}, section)
			if err != nil || got != tt.want {
				t.Errorf("in order: detectEncoding = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// readSeekerOnly hides every method of its reader but Read and Seek.
type readSeekerOnly struct{ r io.ReadSeeker }

func (r readSeekerOnly) Read(p []byte) (int, error)         { return r.r.Read(p) }
func (r readSeekerOnly) Seek(o int64, w int) (int64, error) { return r.r.Seek(o, w) }

// failingAt reads data but fails every read at or past bad.
type failingAt struct {
	data []byte
	bad  int64
}

var errDisk = errors.New("disk read failed")

func (f failingAt) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > f.bad {
		return 0, errDisk
	}
	return copy(p, f.data[off:]), nil
}

// TestValidUTF8AtReadError fails the detection when a section cannot be
// read, rather than calling the file Windows-1252 or UTF-8.
func TestValidUTF8AtReadError(t *testing.T) {
	data := bytes.Repeat([]byte("abc,é\n"), 1000)
	for _, bad := range []int64{0, 100, 3000, int64(len(data)) - 1} {
		ok, err := validUTF8At(failingAt{data: data, bad: bad}, int64(len(data)), 512)
		if !errors.Is(err, errDisk) {
			t.Errorf("reads failing from byte %d: validUTF8At = %v, %v; want the read's error", bad, ok, err)
		}
	}
}
