package sources

import (
	"fmt"
	"testing"
)

func TestKeyIndex(t *testing.T) {
	for _, n := range []int{0, 1, keyChunk - 1, keyChunk + 1, 3*keyChunk + 5} {
		t.Run(fmt.Sprintf("%d rows, duplicates across chunks", n), func(t *testing.T) {
			var k keyIndex
			// Every key is unique but for key 7, on the first line, a
			// middle one and the last one.
			dupLines := map[int]bool{}
			for line := 2; line < n+2; line++ {
				h := uint64(line) * 0x9e3779b97f4a7c15
				if line == 2 || line == n/2+2 || line == n+1 {
					h = 7
					dupLines[line] = true
				}
				k.observe(h, line)
			}
			k.finish()
			if k.seen != nil || k.n != 0 {
				t.Fatal("finish kept the first pass's keys")
			}
			if len(dupLines) < 2 {
				if len(k.dups) != 0 {
					t.Fatalf("%d duplicates reported for unique keys", len(k.dups))
				}
				return
			}
			if len(k.dups) != 1 {
				t.Fatalf("%d duplicate keys, want 1", len(k.dups))
			}
			for line := 2; line < n+2; line++ {
				h := uint64(line) * 0x9e3779b97f4a7c15
				if dupLines[line] {
					h = 7
				}
				got := k.reason(h, line, "externalId")
				switch {
				case !dupLines[line] && got != "":
					t.Fatalf("line %d: unique key reported: %s", line, got)
				case dupLines[line] && line == 2:
					more := ""
					if len(dupLines) > 2 {
						more = " and 1 more line(s)"
					}
					want := fmt.Sprintf("duplicate externalId: also on line %d%s; every occurrence is rejected", n/2+2, more)
					if got != want {
						t.Fatalf("line 2: %q, want %q", got, want)
					}
				case dupLines[line] && got != "duplicate externalId: first on line 2; every occurrence is rejected":
					t.Fatalf("line %d: %q", line, got)
				}
			}
		})
	}

	t.Run("reason before finish finishes the first pass", func(t *testing.T) {
		var k keyIndex
		k.observe(1, 2)
		k.observe(1, 3)
		if got := k.reason(1, 3, "e-mail"); got != "duplicate e-mail: first on line 2; every occurrence is rejected" {
			t.Fatalf("reason = %q", got)
		}
	})
}
