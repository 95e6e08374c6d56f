package personalization

import (
	"errors"
	"testing"
	"time"

	"hrsync/api"
)

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestOrdinal(t *testing.T) {
	cases := map[int]string{
		0: "0th", 1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 10: "10th", 11: "11th", 12: "12th",
		13: "13th", 14: "14th", 21: "21st", 22: "22nd", 23: "23rd", 101: "101st", 102: "102nd",
		111: "111th", 112: "112th", 113: "113th", 121: "121st",
	}
	for n, want := range cases {
		t.Run(want, func(t *testing.T) {
			if got := Ordinal(n); got != want {
				t.Errorf("Ordinal(%d) = %q, want %q", n, got, want)
			}
		})
	}
}

func TestZodiacBoundaries(t *testing.T) {
	cases := []struct {
		date string
		want api.Zodiac
	}{
		{"2000-12-21", api.Sagittarius}, {"2000-12-22", api.Capricorn}, {"2001-01-01", api.Capricorn},
		{"2001-01-19", api.Capricorn}, {"2001-01-20", api.Aquarius}, {"2001-02-18", api.Aquarius},
		{"2001-02-19", api.Pisces}, {"2000-02-29", api.Pisces}, {"2001-03-20", api.Pisces},
		{"2001-03-21", api.Aries}, {"2001-04-19", api.Aries}, {"2001-04-20", api.Taurus},
		{"2001-05-20", api.Taurus}, {"2001-05-21", api.Gemini}, {"2001-06-20", api.Gemini},
		{"2001-06-21", api.Cancer}, {"2001-07-22", api.Cancer}, {"2001-07-23", api.Leo},
		{"2001-08-22", api.Leo}, {"2001-08-23", api.Virgo}, {"2001-09-22", api.Virgo},
		{"2001-09-23", api.Libra}, {"2001-10-22", api.Libra}, {"2001-10-23", api.Scorpio},
		{"2001-11-21", api.Scorpio}, {"2001-11-22", api.Sagittarius}, {"2001-12-31", api.Capricorn},
	}
	for _, c := range cases {
		t.Run(c.date, func(t *testing.T) {
			d := day(c.date)
			if got := ZodiacOf(d.Month(), d.Day()); got != c.want {
				t.Errorf("ZodiacOf(%s) = %s, want %s", c.date, got, c.want)
			}
		})
	}
}

func TestElapsed(t *testing.T) {
	cases := []struct {
		name, from, to string
		years, months  int
		text           string
	}{
		{"same day", "2020-05-10", "2020-05-10", 0, 0, "0 months"},
		{"day before first month", "2020-05-10", "2020-06-09", 0, 0, "0 months"},
		{"one month", "2020-05-10", "2020-06-10", 0, 1, "1 month"},
		{"day before anniversary", "2015-03-15", "2020-03-14", 4, 11, "4 years 11 months"},
		{"anniversary", "2015-03-15", "2020-03-15", 5, 0, "5 years"},
		{"years and months", "2015-03-15", "2020-07-20", 5, 4, "5 years 4 months"},
		{"one year one month", "2019-01-01", "2020-02-01", 1, 1, "1 year 1 month"},
		{"leap day, common year 28 Feb", "2000-02-29", "2021-02-28", 20, 11, "20 years 11 months"},
		{"leap day, common year 1 Mar", "2000-02-29", "2021-03-01", 21, 0, "21 years"},
		{"leap day, leap year", "2000-02-29", "2024-02-29", 24, 0, "24 years"},
		{"31st into a short month", "2020-01-31", "2020-02-29", 0, 0, "0 months"},
		{"31st, next month done on 1st", "2020-01-31", "2020-03-01", 0, 1, "1 month"},
		{"future date", "2030-01-01", "2020-01-01", 0, 0, "0 months"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			y, m := Elapsed(day(c.from), day(c.to))
			if y != c.years || m != c.months {
				t.Errorf("Elapsed(%s, %s) = %d, %d, want %d, %d", c.from, c.to, y, m, c.years, c.months)
			}
			if got := ElapsedText(y, m); got != c.text {
				t.Errorf("ElapsedText = %q, want %q", got, c.text)
			}
		})
	}
}

func TestInitials(t *testing.T) {
	cases := []struct {
		name    string
		surname bool
		want    string
	}{
		{"Jean-Luc", false, "JL"},
		{"Mary Ann", false, "MA"},
		{"émile", false, "É"},
		{"Zoë", false, "Z"},
		{"Smith", true, "S"},
		{"van der Berg", true, "B"},
		{"Van Dyke", true, "VD"},
		{"de la Cruz-Ortiz", true, "CO"},
		{"Smith-Jones", true, "SJ"},
		{"O'Brien", true, "O"},
		{"D'Angelo", true, "D"},
		{"d'Artagnan", true, "A"},
		{"l’Estrange", true, "E"},
		{"al-Hassan", true, "H"},
		{"van", true, "V"},
		{"Ødegaard", true, "Ø"},
		{"Łukasiewicz", true, "Ł"},
		{"", true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Initials(c.name, c.surname); got != c.want {
				t.Errorf("Initials(%q, %v) = %q, want %q", c.name, c.surname, got, c.want)
			}
		})
	}
}

func TestPossessive(t *testing.T) {
	cases := map[string]string{"Anna": "Anna's", "James": "James'", "CHARLES": "CHARLES'", "Zoë": "Zoë's", "": ""}
	for in, want := range cases {
		t.Run(in, func(t *testing.T) {
			if got := Possessive(in); got != want {
				t.Errorf("Possessive(%q) = %q, want %q", in, got, want)
			}
		})
	}
}

func TestDerive(t *testing.T) {
	now := time.Date(2025, 6, 15, 23, 30, 0, 0, time.UTC)

	t.Run("full", func(t *testing.T) {
		f, err := Derive(Source{
			FirstName: "  Jean-Luc ", LastName: "de la  Fontaine", Department: "R&D", Location: "Lyon",
			StartDate: "2015-06-15T09:00:00Z", BirthDate: "1988-12-22",
		}, now)
		if err != nil {
			t.Fatal(err)
		}
		n := f.Name
		if *n.First != "Jean-Luc" || *n.Last != "de la Fontaine" || *n.FirstNameInitials != "JL" ||
			*n.LastNameInitials != "F" || *n.Initials != "JLF" || *n.FirstPossessive != "Jean-Luc's" {
			t.Errorf("name = %+v", *n)
		}
		a := f.Anniversary
		if *a.Years != 10 || *a.YearsPadded != "10" || *a.Ordinal != "10th" || *a.Month != 6 ||
			*a.MonthPadded != "06" || *a.Year != 2015 || *a.Decade != "2010s" || *a.Hundreds != "2000s" ||
			*a.Zodiac != api.Gemini || *a.Elapsed != "10 years" || *a.ElapsedYears != "10 years" {
			t.Errorf("anniversary = %+v", *a)
		}
		b := f.Birth
		if *b.Years != 36 || *b.Zodiac != api.Capricorn || *b.Decade != "1980s" || *b.Hundreds != "1900s" ||
			*b.Ordinal != "36th" || *b.Elapsed != "36 years 5 months" || *b.ElapsedYears != "36 years" {
			t.Errorf("birth = %+v", *b)
		}
		if *f.Work.Department != "R&D" || *f.Work.Location != "Lyon" {
			t.Errorf("work = %+v", *f.Work)
		}
	})

	t.Run("time of day and offset of now are ignored beyond the UTC date", func(t *testing.T) {
		late := time.Date(2025, 6, 14, 23, 0, 0, 0, time.FixedZone("x", -3*3600)) // 15 June in UTC
		f, err := Derive(Source{LastName: "Smith", StartDate: "2015-06-15"}, late)
		if err != nil {
			t.Fatal(err)
		}
		if *f.Anniversary.Years != 10 {
			t.Errorf("years = %v, want 10", *f.Anniversary.Years)
		}
	})

	t.Run("date as written ignores its offset", func(t *testing.T) {
		f, err := Derive(Source{FirstName: "Ann", BirthDate: "1990-01-20T00:30:00+02:00"}, now)
		if err != nil {
			t.Fatal(err)
		}
		if *f.Birth.Zodiac != api.Aquarius || *f.Birth.Month != 1 {
			t.Errorf("birth = %+v", *f.Birth)
		}
	})

	t.Run("leap-day birthday in a common year", func(t *testing.T) {
		for _, c := range []struct {
			now   time.Time
			years float64
		}{
			{time.Date(2023, 2, 28, 12, 0, 0, 0, time.UTC), 22},
			{time.Date(2023, 3, 1, 12, 0, 0, 0, time.UTC), 23},
		} {
			f, err := Derive(Source{FirstName: "Leap", BirthDate: "2000-02-29"}, c.now)
			if err != nil {
				t.Fatal(err)
			}
			if *f.Birth.Years != c.years || *f.Birth.Zodiac != api.Pisces {
				t.Errorf("on %s: years = %v zodiac = %s, want %v Pisces", c.now.Format(time.DateOnly), *f.Birth.Years, *f.Birth.Zodiac, c.years)
			}
		}
	})

	t.Run("11th 12th 13th anniversaries", func(t *testing.T) {
		for start, want := range map[string]string{"2014-06-15": "11th", "2013-06-15": "12th", "2012-06-15": "13th", "2004-06-15": "21st"} {
			f, err := Derive(Source{FirstName: "A", StartDate: start}, now)
			if err != nil {
				t.Fatal(err)
			}
			if *f.Anniversary.Ordinal != want {
				t.Errorf("start %s: ordinal %q, want %q", start, *f.Anniversary.Ordinal, want)
			}
		}
	})

	t.Run("future start date counts zero years", func(t *testing.T) {
		f, err := Derive(Source{FirstName: "New", StartDate: "2025-09-01"}, now)
		if err != nil {
			t.Fatal(err)
		}
		if *f.Anniversary.Years != 0 || *f.Anniversary.YearsPadded != "00" || *f.Anniversary.Elapsed != "0 months" {
			t.Errorf("anniversary = %+v", *f.Anniversary)
		}
	})

	t.Run("only groups that are given", func(t *testing.T) {
		f, err := Derive(Source{LastName: "Solo"}, now)
		if err != nil {
			t.Fatal(err)
		}
		if f.Anniversary != nil || f.Birth != nil || f.Work != nil {
			t.Errorf("fields = %+v", f)
		}
		if *f.Name.Initials != "S" || *f.Name.FirstPossessive != "" {
			t.Errorf("name = %+v", *f.Name)
		}
	})

	unusable := []struct {
		name string
		src  Source
	}{
		{"no name", Source{FirstName: " ", LastName: "", StartDate: "2020-01-01"}},
		{"impossible date", Source{FirstName: "A", StartDate: "2023-02-30T00:00:00Z"}},
		{"29 February of a common year", Source{FirstName: "A", BirthDate: "2001-02-29"}},
		{"not a date", Source{FirstName: "A", BirthDate: "yesterday"}},
		{"birth after today", Source{FirstName: "A", BirthDate: "2025-06-16"}},
	}
	for _, c := range unusable {
		t.Run("unusable: "+c.name, func(t *testing.T) {
			_, err := Derive(c.src, now)
			if !errors.Is(err, ErrUnusable) {
				t.Errorf("err = %v, want ErrUnusable", err)
			}
		})
	}
}

func TestSha(t *testing.T) {
	base := Source{FirstName: "Zoë", LastName: "van der Berg", StartDate: "2020-01-02T00:00:00Z"}
	ref := Sha("coll", base)

	t.Run("hex sha256", func(t *testing.T) {
		if len(ref) != 64 {
			t.Errorf("sha %q is not 64 hex digits", ref)
		}
	})
	t.Run("same canonical fields, same sha", func(t *testing.T) {
		same := []Source{
			{FirstName: " Zoë ", LastName: "van  der Berg", StartDate: "2020-01-02"},
			{FirstName: "Zoe\u0308", LastName: "van der Berg", StartDate: "2020-01-02T18:00:00+05:00"},
		}
		for _, s := range same {
			if got := Sha("coll", s); got != ref {
				t.Errorf("Sha(%+v) = %s, want %s", s, got, ref)
			}
		}
	})
	t.Run("different collection or fields, different sha", func(t *testing.T) {
		other := base
		other.Department = "Sales"
		for name, got := range map[string]string{"collection": Sha("other", base), "department": Sha("coll", other)} {
			if got == ref {
				t.Errorf("%s change kept the sha", name)
			}
		}
	})
}
