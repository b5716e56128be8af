// Package arch holds the test that keeps the import direction of STYLE.md true: one package
// per concern, imports pointing one way.
package arch

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/rankstream/rankstream/"

// forbidden lists, per package prefix (relative to the module), import prefixes its non-test
// files must not use.
var forbidden = map[string][]string{
	"sketch": {module, "github.com/lovoo/goka", "github.com/IBM/sarama", "github.com/twmb/franz-go",
		"github.com/redis/go-redis", "github.com/ClickHouse/"},
	"internal/board": {module, "github.com/"},
	"topics":         {module + "processors", module + "sinks", module + "internal/query", "github.com/redis/go-redis", "github.com/ClickHouse/"},
	"processors":     {module + "sinks", module + "cmd", "github.com/redis/go-redis", "github.com/ClickHouse/"},
	"sinks":          {module + "processors", module + "cmd", "github.com/lovoo/goka", "github.com/IBM/sarama", "github.com/twmb/franz-go"},
	"internal/query": {module + "processors", module + "sinks", "github.com/lovoo/goka", "github.com/IBM/sarama",
		"github.com/twmb/franz-go", "github.com/ClickHouse/"},
	"internal/obs":     {module},
	"internal/backoff": {module},
}

// only lists, per package, the only non-standard-library imports its non-test files may use.
var only = map[string][]string{
	"sketch":           {},
	"internal/board":   {},
	"internal/backoff": {},
	"sinks/clickhouse": {"github.com/ClickHouse/clickhouse-go/v2", module + "internal/obs"},
	"internal/testenv": {"github.com/twmb/franz-go", "github.com/redis/go-redis", "github.com/ClickHouse/clickhouse-go/v2"},
}

func TestImportDirection(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		for prefix, bans := range forbidden {
			if pkg != prefix && !strings.HasPrefix(pkg, prefix+"/") {
				continue
			}
			checked++
			for _, imp := range fields[1:] {
				if allow, ok := only[pkg]; ok && !stdlib(imp) && !hasAnyPrefix(imp, allow) {
					t.Errorf("%s imports %s; it may import only the standard library and %v", pkg, imp, allow)
				}
				for _, ban := range bans {
					if strings.HasPrefix(imp, ban) {
						t.Errorf("%s imports %s", pkg, imp)
					}
				}
			}
		}
	}
	if checked < 6 {
		t.Fatalf("only %d packages checked: is the module path right?", checked)
	}
}

func stdlib(imp string) bool {
	first, _, _ := strings.Cut(imp, "/")
	return !strings.Contains(first, ".")
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
