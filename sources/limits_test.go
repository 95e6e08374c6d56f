package sources

import (
	"strings"
	"testing"

	"hrsync/model"
)

// checkOne checks one row of m's columns with text set by set.
func checkOne(t *testing.T, m Mapping, set func(r *Row)) (model.Person, []model.Rejection) {
	t.Helper()
	v, err := NewValidator("src", m, testNow)
	if err != nil {
		t.Fatal(err)
	}
	r := row(2, "E1", "e1@example.com")
	set(&r)
	return v.Check(&r)
}

func reasons(rs []model.Rejection) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Field+": "+r.Reason)
	}
	return strings.Join(out, "; ")
}

func TestIdentifiers(t *testing.T) {
	tests := []struct {
		name, id, email string
		nonLatin        bool
		wantID, want    string // the normalized id when accepted; a part of the reason when rejected
	}{
		{name: "ascii", id: " 00123 ", wantID: "00123"},
		{name: "NFC", id: "Jose\u0301", wantID: "Jos\u00e9"},
		{name: "zero-width space", id: "E\u200b1", want: "ID: externalId holds an invisible, format or control character (U+200B) at character 2"},
		{name: "BOM", id: "\ufeffE1", want: "(U+FEFF) at character 1"},
		{name: "soft hyphen", id: "E\u00ad1", want: "(U+00AD)"},
		{name: "no-break space", id: "E\u00a01", want: "(U+00A0)"},
		{name: "control", id: "E\x071", want: "(U+0007)"},
		{name: "cyrillic look-alike", id: "M\u0430ria", want: "ID: externalId holds a letter of the Cyrillic script (U+0430)"},
		{name: "full-width", id: "\uff25\uff11", want: "compatibility character"},
		{name: "cyrillic allowed", id: "\u0418\u0432\u0430\u043d-7", nonLatin: true, wantID: "\u0418\u0432\u0430\u043d-7"},
		{name: "japanese allowed", id: "\u5c71\u7530\u305f\u308d\u3046", nonLatin: true, wantID: "\u5c71\u7530\u305f\u308d\u3046"},
		{name: "mixed refused even when allowed", id: "M\u0430ria", nonLatin: true, want: "mixes the Latin and Cyrillic scripts (U+0430)"},
		{name: "e-mail zero-width", id: "E1", email: "jane\u200b@example.com", want: "Mail: e-mail holds an invisible, format or control character (U+200B)"},
		{name: "e-mail look-alike", id: "E1", email: "j\u0430ne@example.com", want: "Mail: e-mail holds a letter of the Cyrillic script"},
		{name: "e-mail accented", id: "E1", email: "zoe@m\u00fcller.de", wantID: "E1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := baseMapping()
			m.Identifiers.AllowNonLatin = tt.nonLatin
			p, rejs := checkOne(t, m, func(r *Row) {
				r.Text[ExternalID] = tt.id
				if tt.email != "" {
					r.Text[Email] = tt.email
				}
			})
			got := reasons(rejs)
			if tt.want == "" {
				if got != "" || p.ExternalID != tt.wantID {
					t.Fatalf("id %q: got %q, rejections %q; want %q accepted", tt.id, p.ExternalID, got, tt.wantID)
				}
				return
			}
			if !strings.Contains(got, tt.want) {
				t.Fatalf("rejections %q, want %q", got, tt.want)
			}
			if strings.Contains(got, "example.com") {
				t.Errorf("a reason quotes the e-mail: %q", got)
			}
		})
	}
}

func TestValueLimits(t *testing.T) {
	m := baseMapping()
	m.Columns["department"] = "Dept"
	t.Run("value over the maximum length", func(t *testing.T) {
		_, rejs := checkOne(t, m, func(r *Row) { r.Text[Department] = strings.Repeat("é", 1001) })
		if got := reasons(rejs); got != "Dept: value is longer than 1000 characters (maxValueLength)" {
			t.Fatalf("rejections %q", got)
		}
		if _, rejs := checkOne(t, m, func(r *Row) { r.Text[Department] = strings.Repeat("é", 1000) }); len(rejs) > 0 {
			t.Fatalf("1000 characters rejected: %q", reasons(rejs))
		}
	})
	t.Run("configured length", func(t *testing.T) {
		m := baseMapping()
		m.MaxValueLength = 5
		if _, rejs := checkOne(t, m, func(r *Row) { r.Text[FirstName] = "Abcdef" }); !strings.Contains(reasons(rejs), "longer than 5") {
			t.Fatalf("rejections %q", reasons(rejs))
		}
	})
	for in, want := range map[string]string{
		"100000":                 "",
		"100000.01":              `Balance: amount "100000.01" is above the maximum balance of 100000 (maxBalance)`,
		"10000000000000":         "above the maximum balance",
		"-5":                     "is negative",
		"NaN":                    "not a plain number",
		"Inf":                    "not a plain number",
		"1e400":                  "not a plain number",
		strings.Repeat("9", 400): "out of range",
	} {
		t.Run("balance "+in[:min(len(in), 20)], func(t *testing.T) {
			p, rejs := checkOne(t, m, func(r *Row) { r.Text[AddBalance] = in })
			got := reasons(rejs)
			if want == "" {
				if got != "" || p.AddBalance == nil || *p.AddBalance != 100000 {
					t.Fatalf("rejections %q, balance %v", got, p.AddBalance)
				}
				return
			}
			if !strings.Contains(got, want) {
				t.Fatalf("rejections %q, want %q", got, want)
			}
		})
	}
	t.Run("configured balance", func(t *testing.T) {
		m := baseMapping()
		m.MaxBalance = 50
		if _, rejs := checkOne(t, m, func(r *Row) { r.Text[AddBalance] = "51" }); !strings.Contains(reasons(rejs), "maximum balance of 50 ") {
			t.Fatalf("rejections %q", reasons(rejs))
		}
	})
}

func TestDatesAreMaskedInReasons(t *testing.T) {
	m := baseMapping()
	for name, set := range map[string]func(r *Row){
		"bad layout":      func(r *Row) { r.Text[BirthDate] = "31/12/1987" },
		"before 1900":     func(r *Row) { r.Text[BirthDate] = "1812-05-06" },
		"future birth":    func(r *Row) { r.Text[BirthDate] = "2031-05-06" },
		"too young":       func(r *Row) { r.Text[BirthDate] = "2015-05-06"; r.Text[StartDate] = "2024-03-04" },
		"start far ahead": func(r *Row) { r.Text[StartDate] = "2031-05-06" },
		"start before":    func(r *Row) { r.Text[BirthDate] = "1990-05-06"; r.Text[StartDate] = "1980-03-04" },
	} {
		t.Run(name, func(t *testing.T) {
			r := row(2, "E1", "e1@example.com")
			set(&r)
			_, rejs := checkOne(t, m, set)
			got := reasons(rejs)
			if got == "" {
				t.Fatal("accepted")
			}
			for _, d := range []string{r.Text[BirthDate], r.Text[StartDate]} {
				if d != "" && (strings.Contains(got, d) || strings.Contains(got, d[2:])) {
					t.Errorf("reason %q holds the date %q", got, d)
				}
			}
			if !strings.Contains(got, "**") {
				t.Errorf("reason %q shows no masked date", got)
			}
		})
	}
}

func TestFoundColumnsAreFitForAMessage(t *testing.T) {
	// A file without a header: its first person is taken as the header.
	head := []string{"1", "jane.doe@example.com", "Jane", "Doe", "1987-06-05", strings.Repeat("x", 500)}
	for i := range 40 {
		head = append(head, "c"+strings.Repeat("0", i%3))
	}
	e := &ColumnsError{Source: "f.csv", Missing: []string{"Employee ID"}, Found: head}
	msg := e.Error()
	for _, leak := range []string{"jane.doe", "example.com", "1987-06-05", strings.Repeat("x", 41)} {
		if strings.Contains(msg, leak) {
			t.Errorf("message %q holds %q", msg, leak)
		}
	}
	for _, want := range []string{`"j***@e***.com"`, `"19**-**-**"`, `"… 16 more"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
}
