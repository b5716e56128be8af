package gateway

import (
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/rankstream/rankstream/internal/platform/obs"
)

// MetricValue reads a counter or a gauge (for the tests of package gateway_test too).
func MetricValue(c prometheus.Metric) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		panic(err)
	}
	if m.Counter != nil {
		return m.Counter.GetValue()
	}
	return m.Gauge.GetValue()
}

func TestTokenBuckets(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	type step struct {
		at    time.Duration
		users []string
		ok    bool
		wait  time.Duration // when !ok
	}
	for _, c := range []struct {
		name        string
		rate        float64
		burst, max  int
		steps       []step
		wantEvicted float64
	}{
		{"burst then refused until a token is back", 1, 3, 100, []step{
			{0, []string{"a"}, true, 0}, {0, []string{"a"}, true, 0}, {0, []string{"a"}, true, 0},
			{0, []string{"a"}, false, time.Second},
			{400 * time.Millisecond, []string{"a"}, false, 600 * time.Millisecond},
			{time.Second, []string{"a"}, true, 0},
			{time.Second, []string{"b"}, true, 0}, // another user has a bucket of its own
		}, 0},
		{"all or nothing across users", 2, 1, 100, []step{
			{0, []string{"a"}, true, 0},
			{0, []string{"b", "a"}, false, 500 * time.Millisecond},
			{0, []string{"b"}, true, 0}, // b's token was not taken by the refused request
		}, 0},
		{"full buckets are dropped for room without loss", 1, 2, 2, []step{
			{0, []string{"a"}, true, 0}, {0, []string{"b"}, true, 0},
			{2 * time.Second, []string{"c"}, true, 0}, // a, idle 2 s, is full again: dropped
			{2 * time.Second, []string{"b"}, true, 0},
		}, 0},
		{"a bucket dropped before it refilled is counted", 1, 2, 2, []step{
			{0, []string{"a"}, true, 0}, {0, []string{"a"}, true, 0}, {0, []string{"b"}, true, 0},
			{0, []string{"c"}, true, 0},           // a, empty, is dropped: a gets a full burst back early
			{time.Second, []string{"a"}, true, 0}, // b, full again, makes room: not counted
		}, 1},
		{"rate 0 limits nothing", 0, 1, 100, []step{
			{0, []string{"a"}, true, 0}, {0, []string{"a"}, true, 0}, {0, []string{"a"}, true, 0},
		}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := MetricValue(obs.GatewayRateBucketsEvicted)
			l := newLimiter(c.rate, c.burst, c.max)
			for i, s := range c.steps {
				wait, ok := l.take(s.users, t0.Add(s.at))
				if ok != s.ok || (!ok && (wait < s.wait-time.Millisecond || wait > s.wait+time.Millisecond)) {
					t.Fatalf("step %d (%v at %s): ok %v wait %s, want ok %v wait %s", i, s.users, s.at, ok, wait, s.ok, s.wait)
				}
				if n := l.lru.Len(); n > c.max {
					t.Fatalf("step %d: %d buckets, bound %d", i, n, c.max)
				}
			}
			if got := MetricValue(obs.GatewayRateBucketsEvicted) - before; got != c.wantEvicted {
				t.Errorf("evicted before refilled: %v, want %v", got, c.wantEvicted)
			}
		})
	}
}

func TestBudget(t *testing.T) {
	b := budget{max: 100}
	if !b.acquire(60) || !b.acquire(40) {
		t.Fatal("could not reserve up to the bound")
	}
	if b.acquire(1) {
		t.Fatal("reserved past the bound")
	}
	b.release(40)
	if b.acquire(41) || !b.acquire(40) {
		t.Fatal("a release did not give back exactly its bytes")
	}
	b.release(100) // the gauge of in-flight bytes is the process's: leave it as found
}

func TestParseKeys(t *testing.T) {
	hexOf := func(secret string) string {
		k := KeyOf("x", secret)
		return strings.ToUpper(hex.EncodeToString(k.Hash[:]))
	}
	for _, c := range []struct {
		name, file, err string
		names           []string
	}{
		{"two keys, comments, blank lines, upper-case hex", "# keys\n\napp-1 " + hexOf("s1") + "\n  web.2\t" + strings.ToLower(hexOf("s2")) + "  \n", "", []string{"app-1", "web.2"}},
		{"no key", "# nothing\n", "no key", nil},
		{"three fields", "app " + hexOf("s") + " extra\n", "line 1: want `name sha256-hex`, got 3 fields", nil},
		{"the key itself instead of its hash", "app s3cr3t\n", "line 1 (app): want the SHA-256", nil},
		{"short hash", "app " + hexOf("s")[:62] + "\n", "line 1 (app): want the SHA-256", nil},
		{"name twice", "a " + hexOf("1") + "\na " + hexOf("2") + "\n", `line 2: name "a" given twice`, nil},
		{"name not fit for a label", "a/b " + hexOf("1") + "\n", `name "a/b"`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			keys, err := ParseKeys(strings.NewReader(c.file))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want one saying %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, k := range keys {
				names = append(names, k.Name)
			}
			if strings.Join(names, ",") != strings.Join(c.names, ",") {
				t.Fatalf("names %v, want %v", names, c.names)
			}
			set := NewKeys(keys)
			for i, secret := range []string{"s1", "s2"} {
				if name, ok := set.check(secret); !ok || name != c.names[i] {
					t.Errorf("check(%q) = %q, %v; want %q", secret, name, ok, c.names[i])
				}
			}
			for _, secret := range []string{"", "s3", "S1", hexOf("s1")} {
				if name, ok := set.check(secret); ok {
					t.Errorf("check(%q) accepted as %q", secret, name)
				}
			}
		})
	}
}
