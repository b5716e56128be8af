package sketch_test

import (
	"go/build"
	"strings"
	"testing"
)

// TestImportsOnlyStandardLibrary keeps the package's promise: its
// non-test files import the standard library only (no Kafka, goka, Redis,
// ClickHouse, nor any other module).
func TestImportsOnlyStandardLibrary(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if first, _, _ := strings.Cut(imp, "/"); strings.Contains(first, ".") {
			t.Errorf("sketch imports %s; it may import the standard library only", imp)
		}
	}
}
