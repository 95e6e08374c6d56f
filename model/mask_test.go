package model

import "testing"

func TestMaskEmail(t *testing.T) {
	for in, want := range map[string]string{
		"jane.doe@example.com":  "j***@e***.com",
		" J@x.co.uk ":           "J***@x***.uk",
		"émile@société.fr":      "é***@s***.fr",
		"no-at-sign":            "***",
		"@example.com":          "***",
		"a@localhost":           "a***@l***",
		"a@b.averyveryverylong": "a***@b***",
	} {
		if got := MaskEmail(in); got != want {
			t.Errorf("MaskEmail(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMaskDate(t *testing.T) {
	for in, want := range map[string]string{
		"1987-06-05":     "19**-**-**",
		"05/06/1987":     "05/**/****",
		" 1987-06-05 ":   "19**-**-**",
		"June 5th, 1987": "Ju** ***, ****",
		"":               "",
		"12345678901234567890123456789012345678901234567890": "12**************************************…",
	} {
		if got := MaskDate(in); got != want {
			t.Errorf("MaskDate(%q) = %q, want %q", in, got, want)
		}
	}
}
