package loadgen

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/rankstream/rankstream/topics"
)

func TestStepsReportsAreValidAndShaped(t *testing.T) {
	g, err := NewSteps(StepsConfig{Users: 500, Seed: 3, DupRatio: 0.1, StaleRatio: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	seen := map[string]int{}
	dups := 0
	const n = 20_000
	for i := range n {
		at := now.Add(time.Duration(i) * 100 * time.Millisecond)
		for _, r := range g.Next(at) {
			rep, _, err := topics.DecodeStepReport(r.Key, r.Value, r.Time, topics.DefaultStepRules)
			if err != nil {
				t.Fatalf("generated an invalid report: %v: %s", err, r.Value)
			}
			if seen[rep.RequestID]++; seen[rep.RequestID] > 1 {
				dups++
			}
		}
	}
	if share := float64(dups) / n; share < 0.07 || share > 0.13 {
		t.Fatalf("%.3f of reports are duplicates, want about 0.1", share)
	}
}

func TestStepsSameSeedSameStream(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	a, _ := NewSteps(StepsConfig{Users: 100, Seed: 9})
	b, _ := NewSteps(StepsConfig{Users: 100, Seed: 9})
	for i := range 1000 {
		ra, rb := a.Next(now.Add(time.Duration(i)*time.Second)), b.Next(now.Add(time.Duration(i)*time.Second))
		if len(ra) != len(rb) || string(ra[0].Value) != string(rb[0].Value) {
			t.Fatalf("record %d differs", i)
		}
	}
}

func TestMidnightSurge(t *testing.T) {
	g, err := NewSteps(StepsConfig{Users: 1000, Zones: []string{"Asia/Shanghai"}, MidnightSurge: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	// 15:59:59 UTC is 23:59:59 in Shanghai; one second later it is midnight.
	before := time.Date(2026, 11, 30, 15, 59, 59, 0, time.UTC)
	if n := len(g.Next(before)); n != 1 {
		t.Fatalf("%d reports before midnight, want 1", n)
	}
	burst := g.Next(before.Add(time.Second))
	if len(burst) != 2*1000+1 {
		t.Fatalf("%d reports at midnight, want a final and a first report per user plus one", len(burst))
	}
	var last, first topics.StepReport
	if err := json.Unmarshal(burst[0].Value, &last); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(burst[1].Value, &first); err != nil {
		t.Fatal(err)
	}
	loc, _ := time.LoadLocation("Asia/Shanghai")
	if d1, d2 := last.TS.In(loc).Format("0102"), first.TS.In(loc).Format("0102"); d1 != "1130" || d2 != "1201" {
		t.Fatalf("surge days %s and %s, want the day that ended and the new one", d1, d2)
	}
}

func TestStepsRejectsBadRatios(t *testing.T) {
	if _, err := NewSteps(StepsConfig{DupRatio: 0.7, StaleRatio: 0.5}); err == nil {
		t.Fatal("ratios summing above 1 accepted")
	}
	if _, err := NewSteps(StepsConfig{Zones: []string{"Nowhere/Town"}}); err == nil {
		t.Fatal("unknown zone accepted")
	}
}
