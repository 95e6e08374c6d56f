package baseline_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"hrsync/internal/bench/baseline"
	"hrsync/internal/bench/gen"
)

func TestCompare(t *testing.T) {
	ctx := context.Background()
	t.Run("hand-made files", func(t *testing.T) {
		prev := "id,name\n1,Aldo\n2,Brisa\n3,Cato\n4,Delphine\n"
		next := "id,name\n1,Aldo\n2,Brisa Castellan\n4,Delphine\n5,Emeka\n6,\"Fenna, Jr\"\n"
		got, err := baseline.Compare(ctx, strings.NewReader(prev), strings.NewReader(next))
		if err != nil {
			t.Fatalf("compare: %v", err)
		}
		want := baseline.Result{Previous: 4, Rows: 5, New: 2, Changed: 1, Unchanged: 2, Departed: 1}
		if got != want {
			t.Errorf("got %+v, want %+v", got, want)
		}
	})
	t.Run("generated exports agree with the generator", func(t *testing.T) {
		const n = 5000
		d := gen.DefaultDelta(n)
		var prev, next bytes.Buffer
		if _, err := gen.WriteCSV(&prev, gen.Previous(n)); err != nil {
			t.Fatal(err)
		}
		if _, err := gen.WriteCSV(&next, d.Next(n)); err != nil {
			t.Fatal(err)
		}
		got, err := baseline.Compare(ctx, &prev, &next)
		if err != nil {
			t.Fatalf("compare: %v", err)
		}
		c := d.Expect(n)
		want := baseline.Result{Previous: n, Rows: c.Rows, New: c.New, Changed: c.Changed, Unchanged: c.Unchanged, Departed: c.Departed}
		if got != want {
			t.Errorf("got %+v, want %+v", got, want)
		}
	})
	t.Run("empty file", func(t *testing.T) {
		_, err := baseline.Compare(ctx, strings.NewReader(""), strings.NewReader("id\n"))
		if err == nil || !strings.Contains(err.Error(), "read previous") {
			t.Errorf("err = %v, want a read previous error", err)
		}
	})
	t.Run("malformed csv", func(t *testing.T) {
		_, err := baseline.Compare(ctx, strings.NewReader("id\n1\n"), strings.NewReader("id\n\"unclosed\n"))
		if err == nil || !strings.Contains(err.Error(), "read next") {
			t.Errorf("err = %v, want a read next error", err)
		}
	})
	t.Run("cancelled context", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, err := baseline.Compare(cctx, strings.NewReader("id\n1\n"), strings.NewReader("id\n1\n"))
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	})
}

func BenchmarkCompare(b *testing.B) {
	const n = 20000
	var prev, next bytes.Buffer
	if _, err := gen.WriteCSV(&prev, gen.Previous(n)); err != nil {
		b.Fatal(err)
	}
	if _, err := gen.WriteCSV(&next, gen.DefaultDelta(n).Next(n)); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(prev.Len() + next.Len()))
	for b.Loop() {
		if _, err := baseline.Compare(context.Background(), bytes.NewReader(prev.Bytes()), bytes.NewReader(next.Bytes())); err != nil {
			b.Fatal(err)
		}
	}
}
