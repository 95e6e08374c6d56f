package config

import (
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

func TestParseDuration(t *testing.T) {
	good := []struct {
		in   string
		want time.Duration
	}{
		{"30s", 30 * time.Second},
		{"15m", 15 * time.Minute},
		{"1h30m", 90 * time.Minute},
		{"0", 0},
		{"0d", 0},
		{"7d", 7 * Day},
		{"30d", 30 * Day},
		{"1d12h", 36 * time.Hour},
		{"2d30m", 2*Day + 30*time.Minute},
		{"-1d", -Day},
		{" 90d ", 90 * Day},
	}
	for _, c := range good {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseDuration(c.in)
			if err != nil || got != c.want {
				t.Errorf("ParseDuration(%q) = %v, %v; want %v", c.in, got, err, c.want)
			}
		})
	}
	for _, in := range []string{"", "d", "1.5d", "xd", "30", "3x", "1d-2h", "1d+2h", "-", "d1", "1dd", "1w", "106752d", "106751d24h"} {
		t.Run("bad "+in, func(t *testing.T) {
			if got, err := ParseDuration(in); err == nil {
				t.Errorf("ParseDuration(%q) = %v, want an error", in, got)
			}
		})
	}
}

func TestDurationString(t *testing.T) {
	cases := []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{Day, "1d"},
		{90 * Day, "90d"},
		{36 * time.Hour, "36h0m0s"},
		{30 * time.Second, "30s"},
		{-Day, "-24h0m0s"},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			if got := D(c.d).String(); got != c.want {
				t.Errorf("String(%v) = %q, want %q", c.d, got, c.want)
			}
		})
	}
}

func TestDurationYAML(t *testing.T) {
	t.Run("decode", func(t *testing.T) {
		var v struct {
			A Duration `yaml:"a"`
			B Duration `yaml:"b"`
		}
		if err := yaml.Unmarshal([]byte("a: 2d\nb: nonsense\n"), &v); err != nil {
			t.Fatalf("Unmarshal: %v", err)
		}
		if v.A.Duration != 2*Day || !v.A.Valid() {
			t.Errorf("a = %v", v.A)
		}
		if v.B.Valid() || v.B.String() != "nonsense" {
			t.Errorf("b = %v, valid %v: an invalid value must be kept for validation", v.B, v.B.Valid())
		}
	})
	t.Run("encode", func(t *testing.T) {
		out, err := yaml.Marshal(map[string]Duration{"w": D(30 * Day)})
		if err != nil || string(out) != "w: 30d\n" {
			t.Errorf("Marshal = %q, %v", out, err)
		}
	})
}

// FuzzParseDuration checks that every duration ParseDuration accepts prints
// back, through Duration.String, to text that parses to the same value.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"30s", "7d", "1d12h", "0", "-3d", "1h2m3s4ms", "99999d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			return
		}
		back, err := ParseDuration(D(d).String())
		if err != nil || back != d {
			t.Errorf("ParseDuration(%q) = %v; its String %q parses to %v, %v", s, d, D(d).String(), back, err)
		}
	})
}
