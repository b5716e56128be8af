package redis

import (
	"fmt"
	"testing"
)

func TestSetMaxGroups(t *testing.T) {
	keys := make([]string, 1000)
	days := make([]int, len(keys))
	for i := range keys {
		days[i] = i % 3 / 2 // two days, one of 667 keys and one of 333, interleaved
		keys[i] = fmt.Sprintf("step:2026113%d:u%d", days[i], i)
	}
	var r stepsRoom // reused across the cases, as a writer's flushes reuse it
	for _, cluster := range []bool{false, true, false} {
		groupOf := func(i int) int { return days[i] }
		if cluster {
			groupOf = func(i int) int { return KeySlot(keys[i])*2 + days[i] }
		}
		seen := map[int]bool{}
		groups := r.setMaxGroups(len(keys), groupOf)
		for _, g := range groups {
			if len(g) == 0 || len(g) > maxScriptKeys {
				t.Fatalf("cluster %v: a group of %d keys", cluster, len(g))
			}
			for j, i := range g {
				if seen[i] {
					t.Fatalf("cluster %v: key %d in two groups", cluster, i)
				}
				seen[i] = true
				if groupOf(i) != groupOf(g[0]) {
					t.Fatalf("cluster %v: a group crosses days or slots: %s and %s", cluster, keys[i], keys[g[0]])
				}
				if j > 0 && i <= g[j-1] {
					t.Fatalf("cluster %v: a group out of the keys' order: %v", cluster, g)
				}
			}
		}
		if len(seen) != len(keys) {
			t.Fatalf("cluster %v: %d of %d keys grouped", cluster, len(seen), len(keys))
		}
		// One server: 667 keys of the first day in 3 calls (256 a call), then 333 in 2.
		if !cluster && (len(groups) != 5 || len(groups[0]) != maxScriptKeys || days[groups[0][0]] != 0 || len(groups[3]) != maxScriptKeys || days[groups[3][0]] != 1) {
			t.Fatalf("single server: groups of %d, %d, %d, %d, %d keys", len(groups[0]), len(groups[1]), len(groups[2]), len(groups[3]), len(groups[4]))
		}
	}
}

func TestKeySlotCheckValue(t *testing.T) {
	if got := KeySlot("123456789"); got != 0x31c3 {
		t.Fatalf("KeySlot(123456789) = %#x, want CRC-16/XMODEM's check value 0x31c3", got)
	}
}
