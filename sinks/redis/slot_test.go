package redis

import (
	"fmt"
	"testing"
)

func TestSetMaxGroups(t *testing.T) {
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = fmt.Sprintf("step:20261130:u%d", i)
	}
	for _, cluster := range []bool{false, true} {
		seen := map[int]bool{}
		groups := setMaxGroups(keys, cluster)
		for _, g := range groups {
			if len(g) == 0 || len(g) > maxScriptKeys {
				t.Fatalf("cluster %v: a group of %d keys", cluster, len(g))
			}
			for _, i := range g {
				if seen[i] {
					t.Fatalf("cluster %v: key %d in two groups", cluster, i)
				}
				seen[i] = true
				if cluster && KeySlot(keys[i]) != KeySlot(keys[g[0]]) {
					t.Fatalf("a group crosses slots: %s and %s", keys[i], keys[g[0]])
				}
			}
		}
		if len(seen) != len(keys) {
			t.Fatalf("cluster %v: %d of %d keys grouped", cluster, len(seen), len(keys))
		}
		if !cluster && len(groups) != 4 {
			t.Fatalf("single server: %d groups of 1000 keys, want 4 (256 a call)", len(groups))
		}
	}
}

func TestKeySlotCheckValue(t *testing.T) {
	if got := KeySlot("123456789"); got != 0x31c3 {
		t.Fatalf("KeySlot(123456789) = %#x, want CRC-16/XMODEM's check value 0x31c3", got)
	}
}
