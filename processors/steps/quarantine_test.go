package steps_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/rankstream/rankstream/processors/steps"
	"github.com/rankstream/rankstream/topics"
)

// TestTooFastReportsAreQuarantined: with --max-steps-rate 250, a report rising faster goes to
// steps.quarantine with its original bytes and the reason, hands nothing to the sink and
// leaves the day as it was; the next human report is merged.
func TestTooFastReportsAreQuarantined(t *testing.T) {
	h := newHarnessWithin(t, steps.Limits{MaxRisePerMinute: 250})
	q := h.tt.NewQueueTracker(string(h.names.Stream(topics.StepsQuarantine)))
	report := func(req string, steps int, clock string) string {
		return `{"request_id":"` + req + `","user_id":"u1","steps":` + strconv.Itoa(steps) + `,"ts":"2026-11-30T` + clock + `Z","tz":"UTC"}`
	}
	h.consume("u1", report("a", 10_000, "10:00:00"))
	spike := report("b", 10_000+2_501, "10:10:00")
	h.consume("u1", spike)
	hdr, _, value, ok := q.NextRawWithHeaders()
	if !ok || string(value) != spike || !strings.HasPrefix(string(hdr[topics.HeaderReason]), "max_rise: 2501 steps more in 10m0s") {
		t.Fatalf("quarantine: %v %q %q", ok, value, hdr[topics.HeaderReason])
	}
	if u := h.sink.last(); u != nil {
		t.Fatalf("a quarantined report handed %+v", u)
	}
	h.consume("u1", report("c", 10_000+2_500, "10:10:00"))
	if u := h.sink.last(); u == nil || u.Steps != 12_500 {
		t.Fatalf("the human report: %+v", u)
	}
	if _, _, ok := h.dlq.Next(); ok {
		t.Fatal("a dead letter")
	}
}
