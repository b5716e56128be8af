package clickhouse

import (
	"go/build"
	"strings"
	"testing"
)

// TestImportsStayOneWay keeps the package's promise: besides the standard library, its
// non-test files import only clickhouse-go and internal/obs (no goka, Kafka or processors).
func TestImportsStayOneWay(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		first, _, _ := strings.Cut(imp, "/")
		switch {
		case !strings.Contains(first, "."), // standard library
			strings.HasPrefix(imp, "github.com/ClickHouse/clickhouse-go/v2"),
			imp == "github.com/rankstream/rankstream/internal/obs":
		default:
			t.Errorf("sinks/clickhouse imports %s; it may import only clickhouse-go and internal/obs", imp)
		}
	}
}
