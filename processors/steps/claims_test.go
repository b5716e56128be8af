package steps

import "testing"

func TestClaimEndsAtARebalance(t *testing.T) {
	var c claims
	first := c.of(3)
	if first == 0 || c.of(3) != first {
		t.Fatalf("a claim's id must be non-zero and last until a rebalance: %d, then %d", first, c.of(3))
	}
	if c.of(4) == first {
		t.Fatal("two partitions share a claim")
	}
	c.rebalanced()
	if c.of(3) == first {
		t.Fatal("after a rebalance the partition must be claimed anew")
	}
	var other claims
	if other.of(3) == first {
		t.Fatal("another processor's claim of the partition has the same id")
	}
}
