package jsonstream

import (
	"bytes"
	"runtime"

	"golang.org/x/sync/errgroup"
)

// elemsPerJob is how many consecutive elements Elems gives a goroutine to
// encode in its first window; after it, each job gets as many as make
// about jobBytes of JSON at the size of the elements so far (at least
// one). A job must be long enough that starting and waiting for it costs
// little next to it, and a window of GOMAXPROCS jobs short enough to hold
// little.
const (
	elemsPerJob = 64
	jobBytes    = 128 << 10
)

// Elems writes n elements of the array being written, the i-th being
// value(i): the bytes of n calls of Elem and Value. With more than one
// processor (GOMAXPROCS), the values are encoded by as many goroutines at
// once, each a run of consecutive ones (elemsPerJob says how many) into a
// buffer of its own, and written out in order, window after window: a
// list of a million values is never held whole. value is then called from
// several goroutines: it must only read what it shares.
func (s *Writer) Elems(n int, value func(i int) any) {
	procs := runtime.GOMAXPROCS(0)
	if procs == 1 || n <= elemsPerJob {
		for i := range n {
			s.Elem()
			s.Value(value(i))
		}
		return
	}
	// The first element is started here, as Elem starts it (a comma if
	// the array has elements already); each job writes the comma and line
	// break before each of its other values, and each value as a Writer
	// nested at the array's depth writes it (as Nested gives one).
	s.Elem()
	prefix := s.prefixAt(len(s.first))
	jobs := make([]elemsJob, procs)
	for i := range jobs {
		jobs[i].w = New(&jobs[i].buf, prefix, s.indent)
		jobs[i].sep = ",\n" + prefix
	}
	per := elemsPerJob
	for start := 0; start < n && s.err == nil; {
		var g errgroup.Group
		used, end := 0, min(n, start+procs*per)
		for from := start; from < end; from += per {
			j := &jobs[used]
			used++
			g.Go(func() error { return j.encode(from, min(from+per, end), value) })
		}
		if err := g.Wait(); err != nil {
			s.fail(err)
			return
		}
		size := 0
		for i := range used {
			size += jobs[i].buf.Len()
			s.writeBytes(jobs[i].buf.Bytes())
		}
		per = max(1, jobBytes*(end-start)/max(size, 1))
		start = end
	}
}

// elemsJob is one goroutine's share of a window of Elems.
type elemsJob struct {
	w   *Writer
	buf bytes.Buffer
	sep string // what comes between two elements
}

// encode encodes the values from to to (not included) into j.buf, each
// but the list's first after a separator.
func (j *elemsJob) encode(from, to int, value func(i int) any) error {
	j.buf.Reset()
	for i := from; i < to; i++ {
		if i > 0 {
			j.w.write(j.sep)
		}
		j.w.Value(value(i))
	}
	return j.w.Flush()
}
