package stepse2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/rankstream/rankstream/internal/e2e"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/topics"
)

// TestStepsRiseLimitEndToEnd: `rankstream process --max-steps-rate 250` on yesterday's
// readings (UTC) of 30 walkers (100 steps a minute from 06:00, a reading every 10 minutes),
// 3 of whom report one spike of 5,000 steps more in the middle, and one who reports 20,000
// steps ten minutes after midnight: exactly the 4 inhuman readings are in steps.quarantine,
// none in the dead-letter topic, and every day's value and board equal the truth without them.
func TestStepsRiseLimitEndToEnd(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		t.Parallel()
		e := newE2E(t, brokers)
		day := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -1)
		want := truth{}
		var records []e2e.Record
		quarantined := 0
		for i := range 30 {
			u := &testUser{id: fmt.Sprintf("walker-%02d", i), zone: time.UTC, region: testRegions[i%len(testRegions)]}
			for k := range 20 {
				ts := day.Add(6*time.Hour + time.Duration(k)*10*time.Minute)
				steps := int64(k) * 10 * 100
				if i < 3 && k == 10 {
					steps += 5_000
					quarantined++
				} else {
					want[e2e.DayOf(ts, time.UTC)+"/"+u.id] = &dayValue{steps, ts.UnixMilli(), u.region}
				}
				records = append(records, makeReport(u, fmt.Sprintf("r%d", k), steps, ts).record)
			}
		}
		night := &testUser{id: "night-owl", zone: time.UTC, region: "north"}
		records = append(records, makeReport(night, "r0", 20_000, day.Add(10*time.Minute)).record)
		quarantined++
		e.Start("processor", "--max-steps-rate", "250")
		e.produce(records, 0)
		e.waitExact(want, 2*time.Minute)
		testenv.WaitFor(t, 30*time.Second, fmt.Sprintf("%d quarantined", quarantined), func() bool {
			n := e.records(topics.StepsQuarantine)
			if n > int64(quarantined) {
				t.Fatalf("%d records in steps.quarantine, want %d", n, quarantined)
			}
			return n == int64(quarantined)
		})
		if n := e.dlqEnd(); n != 0 {
			t.Fatalf("%d dead letters", n)
		}
	})
}
