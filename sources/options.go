package sources

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// Field names a field of model.Person that an export can fill. Its string
// form ("externalId", "startDate"...) is the key used in Mapping.
type Field int

// The fields of model.Person an export can fill.
const (
	ExternalID Field = iota
	Email
	FirstName
	LastName
	Department
	Location
	StartDate
	BirthDate
	AddBalance
	// NumFields is the number of fields; it sizes arrays indexed by Field.
	NumFields
)

// String returns the field's name as used in configuration keys.
func (f Field) String() string {
	switch f {
	case ExternalID:
		return "externalId"
	case Email:
		return "email"
	case FirstName:
		return "firstName"
	case LastName:
		return "lastName"
	case Department:
		return "department"
	case Location:
		return "location"
	case StartDate:
		return "startDate"
	case BirthDate:
		return "birthDate"
	case AddBalance:
		return "addBalance"
	}
	return fmt.Sprintf("Field(%d)", int(f))
}

// IsDate reports whether the field holds a calendar date.
func (f Field) IsDate() bool { return f == StartDate || f == BirthDate }

// ParseField returns the field with the given configuration name.
func ParseField(name string) (Field, bool) {
	for f := range NumFields {
		if f.String() == name {
			return f, true
		}
	}
	return 0, false
}

// FieldNames lists the configuration names of all fields, in Field order.
func FieldNames() []string {
	names := make([]string, 0, NumFields)
	for f := range NumFields {
		names = append(names, f.String())
	}
	return names
}

// DefaultDateLayout is the layout of a date column that has no entry in
// Mapping.DateLayouts: ISO 8601, the only layout that cannot be misread.
const DefaultDateLayout = "2006-01-02"

// DefaultRequired lists the fields required when Mapping.Required is empty.
func DefaultRequired() []Field { return []Field{ExternalID, Email, FirstName, LastName} }

// Mapping says where each field of model.Person is found in an export and
// how its dates are written. Field names of model.Person: externalId, email,
// firstName, lastName, department, location, startDate, birthDate,
// addBalance.
type Mapping struct {
	// Columns maps a field name to the column's header in the export (CSV)
	// or the column name of the result set (SQL), e.g. "Employee ID".
	// Headers are matched without regard to case and surrounding spaces.
	Columns map[string]string `yaml:"columns"`
	// DateLayouts maps a date field (startDate, birthDate) to a Go time
	// layout, e.g. "01/02/2006" for 12/31/2024. A date column without a
	// layout must be ISO 8601 (2006-01-02). Dates are never guessed.
	DateLayouts map[string]string `yaml:"dateLayouts"`
	// Required lists the fields that must have a non-empty value. Default:
	// externalId, email, firstName, lastName. It must include externalId
	// and email, and each required field needs a column.
	Required []string `yaml:"required"`
	// MaxValueLength is the most characters a value may have; a longer
	// one rejects its row. 0 means DefaultMaxValueLength.
	MaxValueLength int `yaml:"maxValueLength"`
	// MaxBalance is the largest addBalance a row may ask for; a larger
	// one rejects its row. 0 means DefaultMaxBalance.
	MaxBalance float64 `yaml:"maxBalance"`
	// Identifiers says which characters externalIds and e-mails may hold.
	Identifiers Identifiers `yaml:"identifiers"`
}

// Identifiers says which characters the keys of a person (externalId,
// e-mail) may hold. Invisible, format and control characters (Unicode
// Cc and Cf) and compatibility forms (full-width letters...) are always
// refused.
type Identifiers struct {
	// AllowNonLatin accepts keys written in one script other than Latin
	// (Cyrillic, Greek, Han...). By default a key's letters must all be
	// Latin, so that a look-alike letter of another script (a Cyrillic
	// "а" among Latin ones) cannot make a second person. Mixing two
	// scripts in one key is refused either way (Han with Hiragana and
	// Katakana counts as one, Japanese).
	AllowNonLatin bool `yaml:"allowNonLatin"`
}

// Defaults of the value limits of Mapping.
const (
	DefaultMaxValueLength = 1000
	DefaultMaxBalance     = 100000
)

// WithDefaults returns the mapping with a column of its own name for every
// field when it names none, the default required fields when it names
// none (DefaultRequired), the default limits, and empty rather than nil
// collections (so that a loaded configuration equals the one its dump
// loads into).
func (m Mapping) WithDefaults() Mapping {
	if len(m.Columns) == 0 {
		m.Columns = make(map[string]string, NumFields)
		for _, name := range FieldNames() {
			m.Columns[name] = name
		}
	}
	if m.DateLayouts == nil {
		m.DateLayouts = map[string]string{}
	}
	if len(m.Required) == 0 { // the effective default, so that config show shows it
		for _, f := range DefaultRequired() {
			m.Required = append(m.Required, f.String())
		}
	}
	if m.MaxValueLength == 0 {
		m.MaxValueLength = DefaultMaxValueLength
	}
	if m.MaxBalance == 0 {
		m.MaxBalance = DefaultMaxBalance
	}
	return m
}

// ValueMax returns MaxValueLength, or its default.
func (m Mapping) ValueMax() int {
	return positiveOr(m.MaxValueLength, DefaultMaxValueLength)
}

// BalanceMax returns MaxBalance, or its default.
func (m Mapping) BalanceMax() float64 {
	return positiveOr(m.MaxBalance, DefaultMaxBalance)
}

// RequiredFields returns the required fields: Required parsed, or the
// default set when Required is empty. Unknown names are skipped (Validate
// reports them).
func (m Mapping) RequiredFields() []Field {
	if len(m.Required) == 0 {
		return DefaultRequired()
	}
	var out []Field
	for _, name := range m.Required {
		if f, ok := ParseField(name); ok && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// Layout returns the date layout of a date field: the configured one, or
// DefaultDateLayout.
func (m Mapping) Layout(f Field) string {
	if l := strings.TrimSpace(m.DateLayouts[f.String()]); l != "" {
		return l
	}
	return DefaultDateLayout
}

// Validate checks the mapping; each error is a *FieldError naming the path
// of the problem relative to the mapping ("columns.email").
func (m Mapping) Validate() []error {
	var errs []error
	add := func(path, format string, args ...any) {
		errs = append(errs, &FieldError{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	headers := map[string]string{} // normalized header -> field that uses it
	for _, name := range sortedKeys(m.Columns) {
		path := "columns." + name
		if _, ok := ParseField(name); !ok {
			add(path, "unknown field %q (known: %s)", name, strings.Join(FieldNames(), ", "))
			continue
		}
		header := NormalizeHeader(m.Columns[name])
		if header == "" {
			add(path, "header name is empty")
			continue
		}
		if other, dup := headers[header]; dup {
			add(path, "header %q is already mapped to %s", m.Columns[name], other)
			continue
		}
		headers[header] = name
	}
	for _, name := range sortedKeys(m.DateLayouts) {
		path := "dateLayouts." + name
		f, ok := ParseField(name)
		if !ok || !f.IsDate() {
			add(path, "not a date field (date fields: %s, %s)", StartDate, BirthDate)
			continue
		}
		if err := checkLayout(m.DateLayouts[name]); err != nil {
			add(path, "%v", err)
		}
	}
	for i, name := range m.Required {
		if _, ok := ParseField(name); !ok {
			add(fmt.Sprintf("required[%d]", i), "unknown field %q", name)
		}
	}
	if m.MaxValueLength < 0 {
		add("maxValueLength", "must not be negative (0 means %d)", DefaultMaxValueLength)
	}
	if m.MaxBalance < 0 || math.IsNaN(m.MaxBalance) || math.IsInf(m.MaxBalance, 0) {
		add("maxBalance", "must be a finite number, not negative (0 means %d)", DefaultMaxBalance)
	}
	req := m.RequiredFields()
	for _, f := range []Field{ExternalID, Email} {
		if !slices.Contains(req, f) {
			add("required", "must include %s", f)
		}
	}
	for _, f := range req {
		if strings.TrimSpace(m.Columns[f.String()]) == "" {
			add("columns."+f.String(), "required field has no column")
		}
	}
	return errs
}

// checkLayout makes sure a layout holds a full date: formatting a known
// day with it and parsing the text back must give that day again.
func checkLayout(layout string) error {
	layout = strings.TrimSpace(layout)
	if layout == "" {
		return errors.New("layout is empty")
	}
	day := time.Date(2031, time.December, 28, 0, 0, 0, 0, time.UTC)
	back, err := time.Parse(layout, day.Format(layout))
	if err != nil || back.Year() != day.Year() || back.Month() != day.Month() || back.Day() != day.Day() {
		return fmt.Errorf("layout %q does not hold a full date: use Go's reference date, e.g. 01/02/2006 for MM/DD/YYYY", layout)
	}
	return nil
}

// NormalizeHeader folds a header name for matching: surrounding spaces
// (including no-break spaces and a stray byte order mark) are dropped and
// the case is folded.
func NormalizeHeader(h string) string {
	h = strings.TrimSpace(strings.Trim(h, "\ufeff"))
	return strings.ToLower(strings.TrimSpace(h))
}

// CSVOptions configures how a CSV export is read.
type CSVOptions struct {
	Mapping Mapping `yaml:",inline"`
	// Delimiter is "", ",", ";", "\t" or "tab"; "" detects it from the
	// header line (the most frequent of tab, semicolon and comma outside
	// quotes).
	Delimiter string `yaml:"delimiter"`
	// Encoding is "auto" (or ""): a byte order mark selects UTF-8,
	// UTF-16LE or UTF-16BE; without one, UTF-8 if the whole file is valid
	// UTF-8, else Windows-1252. Or one of "utf-8", "utf-16le", "utf-16be",
	// "windows-1252".
	Encoding string `yaml:"encoding"`
	// MaxRecordLines is the most lines one record may span (a quoted
	// field may hold line breaks). A record that runs over it is a file
	// error naming the line where its open quote started: most often a
	// stray quote that would swallow the rows after it. 0 means
	// DefaultMaxRecordLines.
	MaxRecordLines int `yaml:"maxRecordLines"`
	// MaxRecordBytes is the most bytes one record may have (after
	// decoding to UTF-8); a longer one is a file error, as for
	// MaxRecordLines. It bounds the memory a read takes: a record under
	// it whose value runs over Mapping.MaxValueLength only rejects its
	// row, and the read keeps no more of that value than the rejection
	// needs. 0 means DefaultMaxRecordBytes.
	MaxRecordBytes int `yaml:"maxRecordBytes"`
}

// Defaults of the record limits of CSVOptions.
const (
	DefaultMaxRecordLines = 20
	DefaultMaxRecordBytes = 64 << 20
)

// positiveOr returns v when it is set (above zero), else its default d.
func positiveOr[T int | float64](v, d T) T {
	if v > 0 {
		return v
	}
	return d
}

// WithDefaults returns the options with their defaults set where they are
// empty, the mapping's included.
func (o CSVOptions) WithDefaults() CSVOptions {
	if o.Encoding == "" {
		o.Encoding = EncodingAuto
	}
	if o.MaxRecordLines == 0 {
		o.MaxRecordLines = DefaultMaxRecordLines
	}
	if o.MaxRecordBytes == 0 {
		o.MaxRecordBytes = DefaultMaxRecordBytes
	}
	o.Mapping = o.Mapping.WithDefaults()
	return o
}

// RecordLines returns MaxRecordLines, or its default.
func (o CSVOptions) RecordLines() int {
	return positiveOr(o.MaxRecordLines, DefaultMaxRecordLines)
}

// RecordBytes returns MaxRecordBytes, or its default.
func (o CSVOptions) RecordBytes() int {
	return positiveOr(o.MaxRecordBytes, DefaultMaxRecordBytes)
}

// The encodings CSVOptions.Encoding accepts.
const (
	EncodingAuto        = "auto"
	EncodingUTF8        = "utf-8"
	EncodingUTF16LE     = "utf-16le"
	EncodingUTF16BE     = "utf-16be"
	EncodingWindows1252 = "windows-1252"
)

// DelimiterRune returns the configured delimiter, or 0 when it is to be
// detected. ok is false for a value Validate rejects.
func (o CSVOptions) DelimiterRune() (r rune, ok bool) {
	switch o.Delimiter {
	case "":
		return 0, true
	case ",":
		return ',', true
	case ";":
		return ';', true
	case "\t", "tab", "TAB", "Tab", `\t`:
		return '\t', true
	}
	return 0, false
}

// EncodingName returns the configured encoding in canonical form ("" and
// any case of "auto" give EncodingAuto). ok is false for an unknown name.
func (o CSVOptions) EncodingName() (name string, ok bool) {
	switch e := strings.ToLower(strings.TrimSpace(o.Encoding)); e {
	case "", EncodingAuto:
		return EncodingAuto, true
	case EncodingUTF8, EncodingUTF16LE, EncodingUTF16BE, EncodingWindows1252:
		return e, true
	}
	return "", false
}

// Validate checks the options; each error is a *FieldError with the path
// relative to the options.
func (o CSVOptions) Validate() []error {
	errs := o.Mapping.Validate()
	if _, ok := o.DelimiterRune(); !ok {
		errs = append(errs, &FieldError{Path: "delimiter", Msg: fmt.Sprintf(`%q is not one of "", ",", ";", "tab"`, o.Delimiter)})
	}
	if _, ok := o.EncodingName(); !ok {
		errs = append(errs, &FieldError{Path: "encoding", Msg: fmt.Sprintf("%q is not one of auto, utf-8, utf-16le, utf-16be, windows-1252", o.Encoding)})
	}
	if o.MaxRecordLines < 0 {
		errs = append(errs, &FieldError{Path: "maxRecordLines", Msg: fmt.Sprintf("must not be negative (0 means %d)", DefaultMaxRecordLines)})
	}
	if o.MaxRecordBytes < 0 || (o.MaxRecordBytes > 0 && o.MaxRecordBytes < 1024) {
		errs = append(errs, &FieldError{Path: "maxRecordBytes", Msg: fmt.Sprintf("must be at least 1024 (0 means %d)", DefaultMaxRecordBytes)})
	}
	return errs
}

// Defaults of DropFolderOptions.
const (
	DefaultPattern   = "*.csv"
	DefaultStableFor = 10 * time.Second
)

// DropFolderOptions configure the protocol of the folder HR admins drop
// exports in, whatever backend holds it (each backend's own options, where
// the folder is, belong to its kind). The files are read with the
// CSVOptions configured beside it.
type DropFolderOptions struct {
	// Dir is the folder on this machine, for the local kind, which reads
	// it from the csv section's dir: key (the other kinds refuse that key).
	// processed/ and failed/ are created in it.
	Dir string `yaml:"dir,omitempty"`
	// Pattern is a glob (path/filepath.Match) matched against file names
	// without regard to case. Default "*.csv".
	Pattern string `yaml:"pattern"`
	// StableFor is how long a file's size and modification time must stay
	// unchanged before it is taken as complete. Default 10s. Unused when
	// DoneMarker is set.
	StableFor time.Duration `yaml:"stableFor"`
	// DoneMarker makes a file ready only once "<file>.done" exists beside it.
	DoneMarker bool `yaml:"doneMarker"`
	// ReportMode is the mode of the reports written beside an archived
	// export (on a local folder and over SFTP; S3 objects have no mode)
	// and, with the search bits added where the group or others may read,
	// of a local folder's processed/ and failed/. Zero means 0600. It is
	// set from the configuration's reports.mode, not per folder.
	ReportMode os.FileMode `yaml:"-"`
}

// ReportFileMode is the mode of the reports written beside an archived
// export: ReportMode's permission bits, or 0600 when it is zero.
func (o DropFolderOptions) ReportFileMode() os.FileMode {
	if o.ReportMode == 0 {
		return 0o600
	}
	return o.ReportMode.Perm()
}

// WithDefaults returns the options with empty values set to their defaults.
func (o DropFolderOptions) WithDefaults() DropFolderOptions {
	if strings.TrimSpace(o.Pattern) == "" {
		o.Pattern = DefaultPattern
	}
	if o.StableFor == 0 {
		o.StableFor = DefaultStableFor
	}
	return o
}

// Validate checks the options (defaults applied); each error is a
// *FieldError with the path relative to the options.
func (o DropFolderOptions) Validate() []error {
	o = o.WithDefaults()
	var errs []error
	if _, err := filepath.Match(o.Pattern, "x"); err != nil {
		errs = append(errs, &FieldError{Path: "pattern", Msg: fmt.Sprintf("bad glob %q: %v", o.Pattern, err)})
	}
	if strings.ContainsRune(o.Pattern, filepath.Separator) {
		errs = append(errs, &FieldError{Path: "pattern", Msg: "must match file names, not paths"})
	}
	if o.StableFor < 0 {
		errs = append(errs, &FieldError{Path: "stableFor", Msg: "must not be negative"})
	}
	return errs
}

// The drivers SQLOptions.Driver accepts.
const (
	DriverPostgres = "postgres"
	DriverMySQL    = "mysql"
)

// SQLOptions configures a query against the HR database.
type SQLOptions struct {
	// Driver is "postgres" (lib/pq) or "mysql" (go-sql-driver/mysql, also
	// MariaDB; add parseTime=true to the DSN to get DATE columns as dates).
	Driver string `yaml:"driver"`
	// DSN is the connection string. It is a secret: the config package
	// fills it from the environment or a mounted file; it is never logged
	// (String and GoString leave it out) and never put in an error.
	DSN string `yaml:"dsn"`
	// Query is the SELECT whose result set holds one person per row.
	Query   string  `yaml:"query"`
	Mapping Mapping `yaml:",inline"`
}

// String renders the options without the DSN.
func (o SQLOptions) String() string {
	dsn := ""
	if o.DSN != "" {
		dsn = "[redacted]"
	}
	return fmt.Sprintf("{Driver:%s DSN:%s Query:%q Mapping:%v}", o.Driver, dsn, o.Query, o.Mapping)
}

// GoString renders the options without the DSN, for %#v.
func (o SQLOptions) GoString() string { return "sources.SQLOptions" + o.String() }

// Validate checks the options; each error is a *FieldError with the path
// relative to the options.
func (o SQLOptions) Validate() []error {
	errs := o.Mapping.Validate()
	switch o.Driver {
	case DriverPostgres, DriverMySQL:
	default:
		errs = append(errs, &FieldError{Path: "driver", Msg: fmt.Sprintf("%q is not one of postgres, mysql", o.Driver)})
	}
	if strings.TrimSpace(o.DSN) == "" {
		errs = append(errs, &FieldError{Path: "dsn", Msg: "is empty"})
	}
	if strings.TrimSpace(o.Query) == "" {
		errs = append(errs, &FieldError{Path: "query", Msg: "is empty"})
	}
	return errs
}

// FieldError is one problem in options, at a path relative to the options
// ("columns.email"); an enclosing configuration prefixes its own path.
type FieldError struct {
	Path string
	Msg  string
}

// Error renders "path: message".
func (e *FieldError) Error() string { return e.Path + ": " + e.Msg }

// Field is the path of the problem, relative to the options.
func (e *FieldError) Field() string { return e.Path }

// Reason says what is wrong.
func (e *FieldError) Reason() string { return e.Msg }

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
