package sketch_test

import (
	"os"
	"testing"
	"time"
)

// fullScenarios are the streams of the accuracy report: two hours each, so
// that the checkpoints see a full window sliding, over a universe of 1M
// items.
func fullScenarios() []scenario {
	const items, perHour, length = 1_000_000, 4_000_000, 2 * time.Hour
	return []scenario{
		{name: "zipf 0.8", skew: 0.8, items: items, perHour: perHour, length: length, seed: 1},
		{name: "zipf 1.0", skew: 1.0, items: items, perHour: perHour, length: length, seed: 2},
		{name: "zipf 1.2", skew: 1.2, items: items, perHour: perHour, length: length, seed: 3},
		{name: "zipf 1.0 + 200 trends", skew: 1.0, items: items, perHour: perHour, length: length, trends: 200, seed: 4},
		{name: "zipf 1.0 + 200 bursts", skew: 1.0, items: items, perHour: perHour, length: length, bursts: 200, seed: 5},
		{name: "zipf 0.8 + trends + bursts", skew: 0.8, items: items, perHour: perHour, length: length, trends: 100, bursts: 100, seed: 6},
	}
}

// TestAccuracy is the accuracy report (make accuracy). It is skipped unless
// RANKSTREAM_ACCURACY is set, because it takes about a minute.
func TestAccuracy(t *testing.T) {
	if os.Getenv("RANKSTREAM_ACCURACY") == "" {
		t.Skip("set RANKSTREAM_ACCURACY=1 to run the accuracy report (make accuracy)")
	}
	var rs []accuracy
	for _, sc := range fullScenarios() {
		r := measure(t, sc, 100, time.Minute)
		t.Logf("%s: p@100 %.4f (min %.2f) r@100 %.4f (min %.2f) rel %.5f viol %d under %d size %d in %v",
			r.name, r.precMean, r.precMin, r.recMean, r.recMin, r.relErr, r.violations, r.underCounts, r.sizeBytes, r.elapsed)
		rs = append(rs, r)
		checkTargets(t, r)
	}
	t.Logf("defaults: %v\n%s", mustNew(t), table(rs))
}
