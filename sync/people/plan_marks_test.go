package people

import (
	"math/rand/v2"
	"testing"
)

// TestPlanMarksAsMaps checks the packed marks of a plan against maps: each
// person's marks and lines are its own, whatever its neighbours'.
func TestPlanMarksAsMaps(t *testing.T) {
	const n = 1000
	m := newPlanMarks(n)
	ids, mails, seen := map[int]int{}, map[int]int{}, map[int]bool{}
	rng := rand.New(rand.NewPCG(22, 1))
	for line := 2; line < 5000; line++ {
		i := rng.IntN(n)
		switch rng.IntN(4) {
		case 0:
			want, ok := ids[i]
			if !ok {
				ids[i] = line
			}
			if got := m.firstID(i, line); got != want {
				t.Fatalf("firstID(%d, %d) = %d, want %d", i, line, got, want)
			}
		case 1:
			want, ok := mails[i]
			if !ok {
				mails[i] = line
			}
			if got := m.firstMail(i, line); got != want {
				t.Fatalf("firstMail(%d, %d) = %d, want %d", i, line, got, want)
			}
		case 2:
			m.set(i, markSeen)
			seen[i] = true
		default:
			m.clear(i, markSeen)
			delete(seen, i)
		}
	}
	for i := range n {
		if m.seen(i) != seen[i] || m.idLine(i) != ids[i] {
			t.Fatalf("person %d: seen %v, idLine %d; want %v, %d", i, m.seen(i), m.idLine(i), seen[i], ids[i])
		}
	}
	var none planMarks
	if none.seen(5) || none.idLine(5) != 0 {
		t.Fatal("marks not set up have a mark")
	}
}
