package sources

import (
	"path"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// DisplayName is a file name as hrsync prints it in every output (the last
// line, reports, errors, logs, the run record): the name itself when every
// character is printable and none is a double quote or a backslash; else
// the name quoted and escaped as a Go string ("a\nb.csv"), so that a name
// with a newline, another control character, an invisible or a
// direction-changing character, or bytes that are not UTF-8, can never
// forge or hide a line. A display name starts with a double quote exactly
// when it is quoted; RawName takes it back.
func DisplayName(name string) string {
	if plainName(name) {
		return name
	}
	return strconv.Quote(name)
}

// plainName tells whether name prints as it is: valid UTF-8, every rune
// printable (unicode.IsPrint: letters, marks, numbers, punctuation,
// symbols and the ASCII space), no double quote, no backslash.
func plainName(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= utf8.RuneSelf {
			return plainUnicode(name[i:])
		}
		if c < ' ' || c == 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return name != ""
}

// plainUnicode is plainName past the ASCII fast path.
func plainUnicode(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) || r == '"' || r == '\\' {
			return false
		}
	}
	return true
}

// RawName is the file name a DisplayName stands for: unquoted when it is
// quoted, else itself.
func RawName(display string) string {
	if !strings.HasPrefix(display, `"`) {
		return display
	}
	raw, err := strconv.Unquote(display)
	if err != nil {
		return display
	}
	return raw
}

// Names of the archive subfolders of a drop folder, and the suffixes of
// markers and reports, the same for every backend.
const (
	ProcessedDir = "processed"
	FailedDir    = "failed"
	// ApproveDir is where an HR admin moves an export a safeguard stopped,
	// from failed/, to have the next run take it past the safeguards once.
	ApproveDir   = "approve"
	MarkerSuffix = ".done"
	// ReportSuffix ends the JSON report beside an archived export.
	ReportSuffix = ".report.json"
	// HTMLReportSuffix ends the HTML summary beside an archived export.
	HTMLReportSuffix = ".report.html"
	// RejectsSuffix ends the rejects CSV beside an archived export. A file
	// of that name is an export too when it is dropped again (the HR
	// admin's corrections): only beside its export is it a report.
	RejectsSuffix = ".rejects.csv"
)

// IsReport tells whether name, a file of processed/ or failed/ whose
// neighbours are names, is a report rather than an archived export: a JSON
// or HTML report, or a rejects CSV beside its export (a rejects CSV dropped
// again and archived alone is an export).
func IsReport(name string, names map[string]bool) bool {
	if strings.HasSuffix(name, ReportSuffix) || strings.HasSuffix(name, HTMLReportSuffix) {
		return true
	}
	export, ok := strings.CutSuffix(name, RejectsSuffix)
	return ok && names[export]
}

// CountExports counts the archived exports among the names of the files of
// processed/ or failed/, reports left out (IsReport).
func CountExports(names []string) int {
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	count := 0
	for n := range set {
		if !IsReport(n, set) {
			count++
		}
	}
	return count
}

// Ignored reports whether a name in a drop folder is never an export:
// hidden files, partial uploads (*.tmp, *.part, Office's ~$ lock files),
// markers and the JSON and HTML reports (a rejects CSV dropped again is an
// export).
func Ignored(name string) bool {
	lower := strings.ToLower(name)
	if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "~$") {
		return true
	}
	for _, suffix := range []string{".tmp", ".part", MarkerSuffix, ReportSuffix, HTMLReportSuffix} {
		if strings.HasSuffix(lower, suffix) {
			return true
		}
	}
	return false
}

// ArchiveName is the name an export gets in processed/ or failed/ at the
// given attempt: its own name first, then with the time (UTC) and the
// start of its hash ("export.20250601T120000Z-1a2b3c4d.csv"), then with a
// counter as well, so that nothing archived is ever overwritten.
func ArchiveName(name, sha256 string, now time.Time, attempt int) string {
	if attempt == 0 {
		return name
	}
	ext := path.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	if len(sha256) > 8 {
		sha256 = sha256[:8]
	}
	suffix := now.UTC().Format("20060102T150405Z")
	if sha256 != "" {
		suffix += "-" + sha256
	}
	if attempt > 1 {
		suffix += "-" + strconv.Itoa(attempt)
	}
	return stem + "." + suffix + ext
}

// ArchivedAs tells whether n, a name in processed/ or failed/, is the
// export dropped as name: the same name, or one ArchiveName gave it.
func ArchivedAs(n, name string) bool {
	if n == name {
		return true
	}
	ext := path.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	return strings.HasPrefix(n, stem+".") && strings.HasSuffix(n, ext) && !strings.HasSuffix(n, ReportSuffix) &&
		!strings.HasSuffix(n, HTMLReportSuffix) && !strings.HasSuffix(n, RejectsSuffix)
}
