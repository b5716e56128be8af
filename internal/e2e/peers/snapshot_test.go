//go:build peers

package peers

import (
	"strings"
	"testing"
)

// TestSnapshotDiffFindsEveryKindOfDifference: the comparison that fails the benchmark sees a
// missing key, another value, a missing board member, another score and another expiry.
func TestSnapshotDiffFindsEveryKindOfDifference(t *testing.T) {
	base := func() snapshot {
		return snapshot{
			strings: map[string]string{"step:20261130:u1": "100"},
			boards:  map[string]map[string]float64{"rank:steps:global:20261130": {"u1": 12345}},
			expiry:  map[string]int64{"step:20261130:u1": 1796083200, "rank:steps:global:20261130": 1796083200},
		}
	}
	if d := base().diff(base()); d != "" {
		t.Fatalf("identical snapshots differ: %s", d)
	}
	for name, change := range map[string]func(s *snapshot){
		"missing key":    func(s *snapshot) { delete(s.strings, "step:20261130:u1") },
		"other value":    func(s *snapshot) { s.strings["step:20261130:u1"] = "99" },
		"extra key":      func(s *snapshot) { s.strings["step:20261130:u2"] = "1" },
		"missing member": func(s *snapshot) { delete(s.boards["rank:steps:global:20261130"], "u1") },
		"other score":    func(s *snapshot) { s.boards["rank:steps:global:20261130"]["u1"] = 12346 },
		"extra board":    func(s *snapshot) { s.boards["rank:steps:region:eu:20261130"] = map[string]float64{"u1": 1} },
		"other expiry":   func(s *snapshot) { s.expiry["step:20261130:u1"] = -1 },
	} {
		other := base()
		change(&other)
		if d := base().diff(other); d == "" {
			t.Errorf("%s: not seen", name)
		}
		if d := other.diff(base()); d == "" {
			t.Errorf("%s (the other way round): not seen", name)
		}
	}
}

func TestDiffDeadLetters(t *testing.T) {
	a := []deadLetter{{0, 5, "invalid event: ts: missing"}, {3, 7, "invalid event: steps: missing"}}
	if d := diffDeadLetters(a, []deadLetter{a[1], a[0]}); d != "" {
		t.Fatalf("same letters in another order differ: %s", d)
	}
	if d := diffDeadLetters(a, a[:1]); !strings.Contains(d, "3/7") {
		t.Fatalf("a missing letter: %q", d)
	}
	if d := diffDeadLetters(a, []deadLetter{a[0], {3, 7, "other"}}); !strings.Contains(d, "other") {
		t.Fatalf("another reason: %q", d)
	}
	j := []deadLetter{{1, 1, "invalid event: json: invalid character 'o' in literal null"}}
	if d := diffDeadLetters(j, []deadLetter{{1, 1, "invalid event: json: Unrecognized token 'not'"}}); d != "" {
		t.Fatalf("two JSON decoders' words for one record: %s", d)
	}
	if d := diffDeadLetters(j, []deadLetter{{1, 1, "invalid event: steps: missing"}}); d == "" {
		t.Fatal("a JSON reason against another reason: not seen")
	}
}
