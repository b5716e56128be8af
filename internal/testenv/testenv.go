package testenv

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Environment variables read by this package.
const (
	EnvRequireServers = "RANKSTREAM_REQUIRE_SERVERS"
	EnvKafka          = "RANKSTREAM_TEST_KAFKA"
	EnvRedis          = "RANKSTREAM_TEST_REDIS"
	EnvRedisCluster   = "RANKSTREAM_TEST_REDIS_CLUSTER" // comma-separated seeds of a 3-master cluster
	EnvClickHouse     = "RANKSTREAM_TEST_CLICKHOUSE"
)

// RequireServers reports whether tests must fail, rather than skip, when a
// real server is not announced (RANKSTREAM_REQUIRE_SERVERS=1, set by make test).
func RequireServers() bool {
	return os.Getenv(EnvRequireServers) == "1"
}

// serverAddr returns the address announced in envVar, or skips the test (or
// fails it when RequireServers) if there is none.
func serverAddr(t testing.TB, envVar, what string) string {
	t.Helper()
	if addr := os.Getenv(envVar); addr != "" {
		return addr
	}
	noServer(t, fmt.Sprintf("testenv: no real %s: %s is not set "+
		"(run `make test`, or `deploy/local/servers.sh start && . /tmp/rankstream-servers/env`)", what, envVar))
	return ""
}

// noServer skips the test for want of a server, saying msg, or fails it when RequireServers.
func noServer(t testing.TB, msg string) {
	t.Helper()
	if RequireServers() {
		t.Fatalf("%s; %s=1 forbids skipping", msg, EnvRequireServers)
	}
	t.Skip(msg)
}

// maxNameTestPart bounds the part of a UniqueName taken from the test name.
const maxNameTestPart = 48

// UniqueName returns prefix_<test name>_<random hex>, made of [a-z0-9_] plus
// whatever of [a-zA-Z0-9._-] the prefix holds. It is a valid Kafka topic or
// group name and Redis key; with a prefix of [a-z0-9_] only, it is also a
// valid ClickHouse identifier.
func UniqueName(t testing.TB, prefix string) string {
	t.Helper()
	var b strings.Builder
	for _, r := range prefix {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() > 0 {
		b.WriteByte('_')
	}
	b.WriteString(sanitize(t.Name(), maxNameTestPart))
	fmt.Fprintf(&b, "_%016x", rand.Uint64())
	return b.String()
}

// sanitize lower-cases s, maps every character outside [a-z0-9] to '_',
// collapses runs of '_' and keeps at most max bytes.
func sanitize(s string, max int) string {
	var b strings.Builder
	lastUnderscore := false
	for _, r := range strings.ToLower(s) {
		if b.Len() >= max {
			break
		}
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			lastUnderscore = false
			continue
		}
		if !lastUnderscore {
			b.WriteByte('_')
			lastUnderscore = true
		}
	}
	return strings.Trim(b.String(), "_")
}

// Tool returns the path of the program name (a server or a checker installed by
// deploy/local/servers.sh, e.g. prometheus, promtool), or skips the test (fails it when
// RequireServers) if it is not on PATH.
func Tool(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		noServer(t, fmt.Sprintf("testenv: %s not found (deploy/local/servers.sh install installs it): %v", name, err))
	}
	return path
}
