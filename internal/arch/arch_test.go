// Package arch holds the test of the layout rule of rankstream (CONTRIBUTING.md, "Layout"):
//
// The top level holds what a user of rankstream as a library would import: topics (the Kafka
// contract: every wire format), sketch (the heavy-hitters library), processors/<family> (one
// goka group each: its pure rules, a thin goka adapter, and the interface of the store it
// feeds, defined there) and sinks/<store> (one per store, owning every key, table and script it
// writes and reads). internal/ holds plumbing nobody outside should import: the Kafka wiring,
// observability, retry, the pure board rules, the HTTP services, the wiring of the commands,
// tools and test harnesses. Imports point one way: sketch, board and internal/backoff
// import only the standard library; topics imports sketch and board; a processor
// family imports topics, sketch and internal plumbing, never a sink or another family; a sink
// imports topics and internal plumbing, never a processor, Kafka or another store's driver; the
// read API imports sinks/redis and never a processor, Kafka or a store's driver; the write
// gateway imports topics, board, internal/kafka and internal/obs, never a processor,
// a sink or a store's driver; the pages (internal/web) import topics, board and
// internal/obs only; the boards file reader (internal/boardsfile) imports board and a
// YAML library only; internal/app may import everything but cmd and the test harnesses;
// nothing imports cmd; only tests import internal/testenv and internal/e2e. Test files may
// import anything.
//
// The test enforces exactly that rule on the non-test files of every package of the module, and
// fails for a package that no rule covers.
package arch

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/rankstream/rankstream/"

// Third-party modules that only some layers may use.
var (
	kafkaLibs  = []string{"github.com/lovoo/goka", "github.com/IBM/sarama", "github.com/twmb/franz-go"}
	redisLib   = "github.com/redis/go-redis"
	clickhouse = "github.com/ClickHouse/"
	drivers    = []string{redisLib, clickhouse}
)

// plumbing is the internal/ a processor or a sink may use.
var plumbing = []string{"board", "internal/obs", "internal/backoff"}

// rule says what the non-test files of the packages it covers may import.
type rule struct {
	// stdOnly: nothing but the standard library.
	stdOnly bool
	// may lists the module's packages (prefixes, relative to the module) they may import
	// besides their own subtree; nil with anyModule false means none.
	may []string
	// anyModule allows every module package except those in mayNot.
	anyModule bool
	mayNot    []string
	// thirdPartyNot lists third-party import prefixes they must not use.
	thirdPartyNot []string
}

func join(lists ...[]string) []string { return slices.Concat(lists...) }

// rules, by package prefix relative to the module ("x" covers x and x/...). The longest prefix
// that matches a package is its rule.
var rules = map[string]rule{
	"sketch":              {stdOnly: true},
	"board":               {stdOnly: true},
	"internal/backoff":    {stdOnly: true},
	"internal/arch":       {stdOnly: true},
	"internal/obs":        {thirdPartyNot: join(kafkaLibs, drivers)},
	"topics":              {may: []string{"sketch", "board"}, thirdPartyNot: join([]string{"github.com/IBM/sarama", "github.com/twmb/franz-go"}, drivers)},
	"processors":          {may: join([]string{"topics", "sketch", "internal/kafka"}, plumbing), thirdPartyNot: drivers},
	"sinks/redis":         {may: join([]string{"topics"}, plumbing), thirdPartyNot: join(kafkaLibs, []string{clickhouse})},
	"sinks/clickhouse":    {may: join([]string{"topics"}, plumbing), thirdPartyNot: join(kafkaLibs, []string{redisLib})},
	"internal/kafka":      {may: []string{"topics", "internal/obs", "internal/backoff"}, thirdPartyNot: drivers},
	"internal/api":        {may: []string{"sinks/redis", "topics", "board", "internal/obs"}, thirdPartyNot: join(kafkaLibs, drivers)},
	"internal/web":        {may: []string{"topics", "board", "internal/obs"}, thirdPartyNot: join(kafkaLibs, drivers)},
	"internal/gateway":    {may: []string{"topics", "board", "internal/kafka", "internal/obs"}, thirdPartyNot: drivers},
	"internal/boardsfile": {may: []string{"board"}, thirdPartyNot: join(kafkaLibs, drivers)},
	"internal/loadgen":    {may: []string{"topics", "sketch", "board", "internal/obs"}, thirdPartyNot: drivers},
	"internal/topkcli":    {may: []string{"topics", "sketch", "internal/obs"}, thirdPartyNot: join(kafkaLibs, drivers)},
	"internal/app":        {anyModule: true, mayNot: []string{"cmd", "internal/e2e", "internal/testenv", "internal/arch"}},
	"cmd":                 {anyModule: true, mayNot: []string{"internal/e2e", "internal/testenv", "internal/arch"}},
	"internal/testenv":    {},
	"internal/e2e":        {anyModule: true, mayNot: []string{"cmd"}},
}

// ruleOf returns the rule covering pkg and its prefix.
func ruleOf(pkg string) (rule, string, bool) {
	best := ""
	for prefix := range rules {
		if within(pkg, prefix) && len(prefix) > len(best) {
			best = prefix
		}
	}
	r, ok := rules[best]
	return r, best, ok
}

// family is the subtree a package may import freely: its own top two levels
// (processors/steps, sinks/redis, internal/e2e, sketch/exact's sketch, ...).
func family(pkg string) string {
	parts := strings.SplitN(pkg, "/", 3)
	if len(parts) >= 2 && (parts[0] == "processors" || parts[0] == "sinks" || parts[0] == "internal") {
		return parts[0] + "/" + parts[1]
	}
	return parts[0]
}

func within(pkg, prefix string) bool { return pkg == prefix || strings.HasPrefix(pkg, prefix+"/") }

func withinAny(pkg string, prefixes []string) bool {
	return slices.ContainsFunc(prefixes, func(p string) bool { return within(pkg, p) })
}

// violations returns what is wrong with pkg importing imps (non-test files).
func violations(pkg string, imps []string) []string {
	r, _, ok := ruleOf(pkg)
	if !ok {
		return []string{pkg + ": no layout rule covers it (add one to internal/arch)"}
	}
	var out []string
	for _, imp := range imps {
		own, isModule := strings.CutPrefix(imp, module)
		switch {
		case stdlib(imp):
		case isModule && within(own, family(pkg)):
		case r.stdOnly:
			out = append(out, pkg+" imports "+imp+": it may import only the standard library (and its own subtree)")
		case isModule && r.anyModule:
			if withinAny(own, r.mayNot) {
				out = append(out, pkg+" imports "+own+": it must not")
			}
		case isModule:
			if !withinAny(own, r.may) {
				out = append(out, pkg+" imports "+own+": it may import only "+strings.Join(r.may, ", ")+" of the module")
			}
		case withinAny(imp, r.thirdPartyNot) || slices.ContainsFunc(r.thirdPartyNot, func(p string) bool { return strings.HasPrefix(imp, p) }):
			out = append(out, pkg+" imports "+imp+": it must not use that library")
		}
	}
	return out
}

func TestImportDirection(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, ok := strings.CutPrefix(fields[0], module)
		if !ok {
			continue
		}
		checked++
		for _, v := range violations(pkg, fields[1:]) {
			t.Error(v)
		}
	}
	if checked < 20 {
		t.Fatalf("only %d packages checked: is the module path right?", checked)
	}
}

// TestRuleCatchesViolations: each kind of import the rule forbids is reported.
func TestRuleCatchesViolations(t *testing.T) {
	for _, c := range []struct {
		pkg, imp string
		bad      bool
	}{
		{"sketch", "github.com/cespare/xxhash/v2", true},
		{"sketch/exact", module + "sketch", false},
		{"sketch/exact", module + "topics", true},
		{"board", "time", false},
		{"topics", module + "processors/steps", true},
		{"topics", module + "sketch", false},
		{"topics", redisLib + "/v9", true},
		{"processors/steps", module + "sinks/redis", true},
		{"processors/hot/merge", module + "processors/steps", true},
		{"processors/hot", module + "internal/kafka", false},
		{"processors/steps", redisLib + "/v9", true},
		{"sinks/redis", module + "processors/steps", true},
		{"sinks/redis", "github.com/twmb/franz-go/pkg/kgo", true},
		{"sinks/redis", module + "internal/kafka", true},
		{"sinks/clickhouse", redisLib + "/v9", true},
		{"internal/api", module + "sinks/redis", false},
		{"internal/api", redisLib + "/v9", true},
		{"internal/api", module + "processors/hot", true},
		{"internal/gateway", module + "internal/kafka", false},
		{"internal/gateway", module + "sinks/redis", true},
		{"internal/gateway", module + "processors/steps", true},
		{"internal/gateway", redisLib + "/v9", true},
		{"internal/app", module + "cmd/rankstream", true},
		{"internal/app", module + "internal/testenv", true},
		{"internal/app", module + "processors/hot", false},
		{"cmd/rankstream", module + "internal/e2e", true},
		{"internal/kafka", module + "processors/steps", true},
		{"internal/boardsfile", module + "board", false},
		{"internal/boardsfile", "go.yaml.in/yaml/v3", false},
		{"internal/boardsfile", module + "topics", true},
		{"internal/boardsfile", redisLib + "/v9", true},
		{"board", "go.yaml.in/yaml/v3", true},
		{"internal/e2e/hot", module + "cmd/rankstream", true},
		{"nowhere/new", "fmt", true}, // no rule covers it
	} {
		if got := len(violations(c.pkg, []string{c.imp})) > 0; got != c.bad {
			t.Errorf("%s importing %s: reported %v, want %v", c.pkg, c.imp, got, c.bad)
		}
	}
}

func stdlib(imp string) bool {
	first, _, _ := strings.Cut(imp, "/")
	return !strings.Contains(first, ".")
}
