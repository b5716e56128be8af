package sketch

import (
	"testing"
	"unsafe"
)

// TestSizeConstants keeps SizeBytes honest: the constants it uses match the
// types' sizes on this platform (64-bit).
func TestSizeConstants(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("sizes are for 64-bit platforms")
	}
	for _, c := range []struct {
		name       string
		got, limit uintptr
	}{
		{"candidate", unsafe.Sizeof(candidate{}), candidateBytes},
		{"heapEntry", unsafe.Sizeof(heapEntry{}), heapEntryBytes},
		{"tableEntry", unsafe.Sizeof(tableEntry{}), tableEntryBytes},
		{"Window", unsafe.Sizeof(Window{}), windowStructBytes},
	} {
		if c.got > c.limit || (c.name != "Window" && c.got != c.limit) {
			t.Errorf("%s is %d bytes, SizeBytes counts %d", c.name, c.got, c.limit)
		}
	}
}
