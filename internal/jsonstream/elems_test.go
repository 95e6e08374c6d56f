package jsonstream

import (
	"bytes"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
)

// elemValue is the i-th value of the lists of the Elems tests: plain
// values, strings encoding/json escapes, structs it encodes, Streamers.
func elemValue(i int) any {
	switch i % 5 {
	case 0:
		return i
	case 1:
		return fmt.Sprintf("e%d <&> \"q\"", i)
	case 2:
		return map[string]any{"n": i, "list": []int{i, i + 1}, "empty": []int{}}
	case 3:
		return record{Name: fmt.Sprintf("r%d", i), Numbers: count{n: i % 4}, Counts: map[string]int{"a": i}}
	}
	return []string{"x", fmt.Sprint(i)}
}

// TestElemsAsElemAndValue checks that Elems writes the bytes of Elem and
// Value called for each element, and json.MarshalIndent's for the whole
// list, at one and at several processors, for lists shorter than a job,
// of a job and one more, and of many windows, nested in an object.
func TestElemsAsElemAndValue(t *testing.T) {
	for _, procs := range []int{1, 3} {
		old := runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, elemsPerJob, elemsPerJob + 1, 7*elemsPerJob + 5} {
			for _, ind := range [][2]string{{"", "  "}, {"> ", "\t"}} {
				list := make([]any, n)
				for i := range list {
					list[i] = elemValue(i)
				}
				got, want := listAsMarshalIndent(t, list, ind, func(s *Writer) { s.Elems(n, elemValue) })
				if !bytes.Equal(got, want) {
					t.Errorf("GOMAXPROCS %d, %d elements, indent %q %q: the bytes differ from json.MarshalIndent's\n got %.300s\nwant %.300s",
						procs, n, ind[0], ind[1], got, want)
				}
			}
		}
		runtime.GOMAXPROCS(old)
	}
}

// TestElemsStopsAtAnError fails the writer when a value cannot be encoded,
// and writes no element after it.
func TestElemsStopsAtAnError(t *testing.T) {
	old := runtime.GOMAXPROCS(3)
	defer runtime.GOMAXPROCS(old)
	const bad = 5*elemsPerJob + 2
	var got bytes.Buffer
	s := New(&got, "", "  ")
	s.Begin('[')
	s.Elems(8*elemsPerJob, func(i int) any {
		if i == bad {
			return math.Inf(1)
		}
		return i
	})
	s.End(']')
	err := s.Flush()
	if err == nil || !strings.Contains(err.Error(), "encode float64") {
		t.Fatalf("Flush = %v; want the error of encoding +Inf", err)
	}
	if strings.Contains(got.String(), fmt.Sprint(bad+1)) {
		t.Errorf("elements after the failed one were written: %.200s", got.String())
	}
}
