package testenv

import (
	"encoding/base64"
	"testing"
)

// TestNewClusterIDNeverAnOption draws enough ids that one starting with '-'
// (one in 64 before the redraw) would appear with probability 1-(63/64)^20000.
// Each must decode to the 16 bytes kafka-storage wants.
func TestNewClusterIDNeverAnOption(t *testing.T) {
	for range 20000 {
		id := newClusterID()
		if id[0] == '-' {
			t.Fatalf("cluster id %q starts with '-': kafka-storage reads it as an option", id)
		}
		if b, err := base64.RawURLEncoding.DecodeString(id); err != nil || len(b) != 16 {
			t.Fatalf("cluster id %q: %d bytes, %v; want 16", id, len(b), err)
		}
	}
}
