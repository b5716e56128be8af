// Package arch holds the test of the layout rule of rankstream (CONTRIBUTING.md, "Layout").
//
// The module is in layers, and a package imports only from its own layer and the layers below
// it (a processor or sink family from none of the others):
//
//  1. ground, at the top level: sketch (the heavy-hitters library) and board (the leaderboard
//     vocabulary) on the standard library alone, and topics (the Kafka contract: every wire
//     format) on them;
//  2. platform, internal/platform/: the plumbing the families share (kafka, obs, backoff, the
//     boards file reader);
//  3. families: processors/<family> (one goka group family each: its pure rules, a thin goka
//     adapter and the interface of the store it feeds) and sinks/<store> (one per store, owning
//     every key, table and script it writes and reads), never one another;
//  4. services, internal/service/: what the commands run (the wiring in app, the operator jobs
//     reconcile, replay and archive, the read API, the write gateway, the pages, the load
//     generator, the topk tool);
//  5. cmd, the commands.
//
// Within those, some packages may import less (the table rules: the read API no Kafka, the
// gateway no sink, a sink no Kafka, ...). The test lab (internal/e2e, internal/testenv,
// internal/arch) is beside the layers: it may import anything but cmd, and no package of it is
// a dependency of the command (go list -deps ./cmd/rankstream); testenv imports no rankstream
// package, so that every package's tests can use it. Test files may import anything.
//
// The test enforces exactly that on the non-test files of every package of the module, and
// fails for a package that no rule covers.
package arch

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/rankstream/rankstream/"

// Third-party modules that only some packages may use.
var (
	kafkaLibs  = []string{"github.com/lovoo/goka", "github.com/IBM/sarama", "github.com/twmb/franz-go"}
	redisLib   = "github.com/redis/go-redis"
	clickhouse = "github.com/ClickHouse/"
	drivers    = []string{redisLib, clickhouse}
)

// The layers, bottom up; lab is the test lab, beside them.
const (
	ground = iota + 1
	platform
	families
	services
	commands
	lab
)

var layerNames = map[int]string{ground: "ground", platform: "platform", families: "families", services: "services", commands: "cmd", lab: "test lab"}

// plumbing is what of the platform a family may use.
var plumbing = []string{"internal/platform/kafka", "internal/platform/obs", "internal/platform/backoff"}

// rule says what the non-test files of the packages it covers may import.
type rule struct {
	layer int
	// stdOnly: nothing but the standard library.
	stdOnly bool
	// may, when not nil, lists the only module packages (prefixes, relative to the module) of
	// lower layers they may import; none is allowed when noModule.
	may      []string
	noModule bool
	// mayNot lists module packages of lower layers they must not import.
	mayNot []string
	// thirdPartyNot lists third-party import prefixes they must not use.
	thirdPartyNot []string
}

func join(lists ...[]string) []string { return slices.Concat(lists...) }

// rules, by package prefix relative to the module ("x" covers x and x/...). The longest prefix
// that matches a package is its rule.
var rules = map[string]rule{
	"sketch": {layer: ground, stdOnly: true},
	"board":  {layer: ground, stdOnly: true},
	"topics": {layer: ground, may: []string{"sketch", "board"}, thirdPartyNot: join([]string{"github.com/IBM/sarama", "github.com/twmb/franz-go"}, drivers)},

	"internal/platform":            {layer: platform, noModule: true, thirdPartyNot: join(kafkaLibs, drivers)},
	"internal/platform/backoff":    {layer: platform, stdOnly: true},
	"internal/platform/kafka":      {layer: platform, may: []string{"topics", "internal/platform/obs", "internal/platform/backoff"}, thirdPartyNot: drivers},
	"internal/platform/boardsfile": {layer: platform, may: []string{"board"}, thirdPartyNot: join(kafkaLibs, drivers)},

	"processors":       {layer: families, may: join([]string{"topics", "sketch", "board"}, plumbing), thirdPartyNot: drivers},
	"sinks/redis":      {layer: families, may: []string{"topics", "board", "internal/platform/obs", "internal/platform/backoff"}, thirdPartyNot: join(kafkaLibs, []string{clickhouse})},
	"sinks/clickhouse": {layer: families, may: []string{"topics", "board", "internal/platform/obs", "internal/platform/backoff"}, thirdPartyNot: join(kafkaLibs, []string{redisLib})},

	"internal/service":         {layer: services},
	"internal/service/api":     {layer: services, may: []string{"sinks/redis", "topics", "board", "internal/platform/obs"}, thirdPartyNot: join(kafkaLibs, drivers)},
	"internal/service/web":     {layer: services, may: []string{"topics", "board", "internal/platform/obs"}, thirdPartyNot: join(kafkaLibs, drivers)},
	"internal/service/gateway": {layer: services, may: []string{"topics", "board", "internal/platform/kafka", "internal/platform/obs"}, thirdPartyNot: drivers},
	"internal/service/loadgen": {layer: services, may: []string{"topics", "sketch", "board", "internal/platform/obs"}, thirdPartyNot: drivers},
	"internal/service/topkcli": {layer: services, may: []string{"topics", "sketch", "internal/platform/obs"}, thirdPartyNot: join(kafkaLibs, drivers)},
	// The operator jobs: each reads the families it works on, and no other service.
	"internal/service/reconcile": {layer: services, may: join([]string{"topics", "board", "processors/steps", "processors/scores", "sinks/redis"}, plumbing), thirdPartyNot: []string{clickhouse}},
	"internal/service/replay":    {layer: services, may: join([]string{"topics", "processors"}, plumbing), thirdPartyNot: drivers},
	"internal/service/archive":   {layer: services, may: join([]string{"topics", "board", "sinks"}, plumbing)},

	"cmd": {layer: commands},

	"internal/arch":    {layer: lab, stdOnly: true},
	"internal/testenv": {layer: lab, noModule: true},
	"internal/e2e":     {layer: lab, mayNot: []string{"cmd"}},
}

// ruleOf returns the rule covering pkg.
func ruleOf(pkg string) (rule, bool) {
	best := ""
	for prefix := range rules {
		if within(pkg, prefix) && len(prefix) > len(best) {
			best = prefix
		}
	}
	r, ok := rules[best]
	return r, ok
}

// family is the subtree a package may import freely: processors/hot for processors/hot/merge,
// internal/service/app, internal/e2e for internal/e2e/hot, sketch for sketch/exact, ...
func family(pkg string) string {
	parts := strings.Split(pkg, "/")
	n := 1
	switch {
	case parts[0] == "internal" && len(parts) > 2 && (parts[1] == "platform" || parts[1] == "service"):
		n = 3
	case parts[0] == "processors" || parts[0] == "sinks" || parts[0] == "internal":
		n = 2
	}
	return strings.Join(parts[:min(n, len(parts))], "/")
}

func within(pkg, prefix string) bool { return pkg == prefix || strings.HasPrefix(pkg, prefix+"/") }

func withinAny(pkg string, prefixes []string) bool {
	return slices.ContainsFunc(prefixes, func(p string) bool { return within(pkg, p) })
}

// violations returns what is wrong with pkg importing imps (non-test files).
func violations(pkg string, imps []string) []string {
	r, ok := ruleOf(pkg)
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
		case isModule:
			out = append(out, moduleViolations(pkg, r, own)...)
		case slices.ContainsFunc(r.thirdPartyNot, func(p string) bool { return strings.HasPrefix(imp, p) }):
			out = append(out, pkg+" imports "+imp+": it must not use that library")
		}
	}
	return out
}

// moduleViolations judges pkg (of rule r) importing own, a module package outside its family.
func moduleViolations(pkg string, r rule, own string) []string {
	dep, ok := ruleOf(own)
	switch {
	case !ok:
		return []string{pkg + " imports " + own + ": no layout rule covers it"}
	case r.noModule:
		return []string{pkg + " imports " + own + ": it may import no package of the module"}
	case r.layer != lab && dep.layer > r.layer:
		return []string{pkg + " (" + layerNames[r.layer] + ") imports " + own + " (" + layerNames[dep.layer] + "): a package imports only from its layer and the layers below"}
	case r.layer == families && dep.layer == families:
		return []string{pkg + " imports " + own + ": a family never imports another family"}
	case r.may != nil && !withinAny(own, r.may):
		return []string{pkg + " imports " + own + ": it may import only " + strings.Join(r.may, ", ") + " of the module"}
	case withinAny(own, r.mayNot):
		return []string{pkg + " imports " + own + ": it must not"}
	}
	return nil
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

// TestLabOutsideTheCommand: no package of the test lab is among the command's dependencies, so
// nothing of it ships in the binary.
func TestLabOutsideTheCommand(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", module+"cmd/rankstream").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, module+"internal/service/app") {
		t.Fatalf("go list -deps ./cmd/rankstream lists %d packages, without internal/service/app: is the module path right?", len(deps))
	}
	for _, dep := range deps {
		if own, ok := strings.CutPrefix(dep, module); ok && layerOf(own) == lab {
			t.Errorf("cmd/rankstream depends on %s, of the test lab", own)
		}
	}
}

func layerOf(pkg string) int {
	r, _ := ruleOf(pkg)
	return r.layer
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
		{"board", "go.yaml.in/yaml/v3", true},
		{"topics", module + "processors/steps", true},
		{"topics", module + "sketch", false},
		{"topics", redisLib + "/v9", true},
		{"internal/platform/kafka", module + "processors/steps", true},
		{"internal/platform/kafka", module + "internal/platform/obs", false},
		{"internal/platform/obs", module + "internal/service/app", true},
		{"internal/platform/boardsfile", module + "board", false},
		{"internal/platform/boardsfile", "go.yaml.in/yaml/v3", false},
		{"internal/platform/boardsfile", module + "topics", true},
		{"internal/platform/boardsfile", redisLib + "/v9", true},
		{"processors/steps", module + "sinks/redis", true},
		{"processors/hot/merge", module + "processors/hot", false},
		{"processors/hot/merge", module + "processors/steps", true},
		{"processors/hot", module + "internal/platform/kafka", false},
		{"processors/hot", module + "internal/service/app", true},
		{"processors/steps", redisLib + "/v9", true},
		{"sinks/redis", module + "processors/steps", true},
		{"sinks/redis", "github.com/twmb/franz-go/pkg/kgo", true},
		{"sinks/redis", module + "internal/platform/kafka", true},
		{"sinks/clickhouse", redisLib + "/v9", true},
		{"internal/service/api", module + "sinks/redis", false},
		{"internal/service/api", redisLib + "/v9", true},
		{"internal/service/api", module + "processors/hot", true},
		{"internal/service/api", module + "sinks/clickhouse", true},
		{"internal/service/api", clickhouse + "clickhouse-go/v2", true},
		{"internal/service/gateway", module + "internal/platform/kafka", false},
		{"internal/service/gateway", module + "sinks/redis", true},
		{"internal/service/gateway", module + "processors/steps", true},
		{"internal/service/gateway", redisLib + "/v9", true},
		{"internal/service/app", module + "cmd/rankstream", true},
		{"internal/service/app", module + "internal/testenv", true},
		{"internal/service/app", module + "internal/e2e", true},
		{"internal/service/app", module + "processors/hot", false},
		{"internal/service/app", module + "internal/service/api", false},
		{"internal/service/reconcile", module + "processors/scores", false},
		{"internal/service/reconcile", module + "sinks/redis", false},
		{"internal/service/reconcile", module + "sinks/clickhouse", true},
		{"internal/service/reconcile", module + "internal/service/app", true},
		{"internal/service/replay", module + "processors/hot", false},
		{"internal/service/replay", module + "sinks/redis", true},
		{"internal/service/replay", redisLib + "/v9", true},
		{"internal/service/archive", module + "sinks/clickhouse", false},
		{"internal/service/archive", module + "processors/scores", true},
		{"internal/service/archive", module + "internal/service/api", true},
		{"cmd/rankstream", module + "internal/e2e", true},
		{"cmd/rankstream", module + "internal/service/app", false},
		{"internal/e2e", module + "internal/testenv", false},
		{"internal/e2e/hot", module + "internal/service/app", false},
		{"internal/e2e/hot", module + "cmd/rankstream", true},
		{"internal/testenv", module + "topics", true},
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
