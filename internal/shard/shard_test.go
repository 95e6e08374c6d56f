package shard

import (
	"fmt"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Shard
	}{
		{"", Shard{}},
		{"1/1", Shard{1, 1}},
		{"2/3", Shard{2, 3}},
		{"3/3", Shard{3, 3}},
		{" 4 / 10", Shard{4, 10}},
	} {
		got, err := Parse(c.in)
		if err != nil || got != c.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	for in, want := range map[string]string{
		"3/2":    "the shard must be 1 to 2",
		"0/3":    "the shard must be 1 to 3 (shards are numbered from 1)",
		"1/0":    "the number of shards must be 1 to 1000",
		"1/1001": "the number of shards must be 1 to 1000",
		"-1/3":   "the shard must be 1 to 3",
		"2":      "want i/n",
		"a/3":    "whole numbers",
		"1/3/4":  "whole numbers",
	} {
		_, err := Parse(in)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), fmt.Sprintf("%q", in)) {
			t.Errorf("Parse(%q): error %v, want one naming the value and saying %q", in, err, want)
		}
	}
}

func tenants(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("tenant-%04d", i)
	}
	return out
}

// TestEachTenantInOneShard checks that the shards of n partition the
// tenants: each is owned by exactly one.
func TestEachTenantInOneShard(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7} {
		for _, name := range tenants(500) {
			owners := 0
			for i := 1; i <= n; i++ {
				if (Shard{Index: i, Count: n}).Owns(name) {
					owners++
				}
			}
			if owners != 1 {
				t.Fatalf("%s is owned by %d of %d shards", name, owners, n)
			}
		}
	}
	if !(Shard{}).Owns("anything") {
		t.Error("no sharding must own every tenant")
	}
}

// TestBalanced checks that 3000 tenants spread over 3 and 10 shards within
// 15% of an even share (a binomial spread of that many names stays within
// about 4 standard deviations of it).
func TestBalanced(t *testing.T) {
	names := tenants(3000)
	for _, n := range []int{3, 10} {
		counts := make([]int, n+1)
		for _, name := range names {
			i, err := Of(name, n)
			if err != nil {
				t.Fatal(err)
			}
			counts[i]++
		}
		even := len(names) / n
		for i := 1; i <= n; i++ {
			if counts[i] < even*85/100 || counts[i] > even*115/100 {
				t.Errorf("%d shards: shard %d holds %d tenants, want %d ± 15%%", n, i, counts[i], even)
			}
		}
	}
}

// TestStable checks that a tenant's shard depends only on its name and the
// number of shards (not on the other tenants), and that going from 3 to 4
// shards moves only tenants into the new shard, about a quarter of them.
func TestStable(t *testing.T) {
	names := tenants(2000)
	before := map[string]int{}
	for _, name := range names {
		before[name], _ = Of(name, 3)
	}
	// Pinned: the assignment must not change between versions (a change
	// would move tenants between running CronJobs).
	for _, c := range []struct {
		name     string
		of3, of5 int
	}{{"acme", 3, 3}, {"globex", 3, 5}, {"initech", 3, 3}, {"umbrella", 3, 5}} {
		if got3, got5 := mustOf(t, c.name, 3), mustOf(t, c.name, 5); got3 != c.of3 || got5 != c.of5 {
			t.Errorf("%s: shards %d of 3 and %d of 5, pinned %d and %d", c.name, got3, got5, c.of3, c.of5)
		}
	}
	moved := 0
	for _, name := range names {
		after := mustOf(t, name, 4)
		if after != before[name] {
			if after != 4 {
				t.Fatalf("%s moved from shard %d to %d: only moves into the new shard are allowed", name, before[name], after)
			}
			moved++
		}
	}
	if moved < len(names)*20/100 || moved > len(names)*30/100 {
		t.Errorf("%d of %d tenants moved to the new shard, want about a quarter", moved, len(names))
	}
}

func mustOf(t *testing.T, name string, n int) int {
	t.Helper()
	i, err := Of(name, n)
	if err != nil {
		t.Fatal(err)
	}
	return i
}
