package loadgen

import (
	"testing"
	"time"

	"github.com/rankstream/rankstream/topics"
)

// TestScoresAreValidOps: every generated record passes the topic's validation, each board
// gets its op, and the duplicates repeat a request id.
func TestScoresAreValidOps(t *testing.T) {
	g, err := NewScores(ScoresConfig{Boards: []ScoreBoardLoad{{"arena", topics.OpIncr}, {"best", topics.OpSet}},
		Members: 50, DupRatio: 0.1, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	ops := map[string]int{}
	ids := map[string]int{}
	negative := 0
	for i := range 5_000 {
		for _, r := range g.Next(now.Add(time.Duration(i) * time.Millisecond)) {
			op, err := topics.DecodeScoreOp(r.Key, r.Value, r.Time, topics.DefaultScoreRules)
			if err != nil {
				t.Fatalf("record %d %s: %v", i, r.Value, err)
			}
			ops[op.Board+"/"+op.Op]++
			ids[op.RequestID]++
			if op.Score < 0 {
				negative++
			}
		}
	}
	if ops["arena/incr"] == 0 || ops["best/set"] == 0 || len(ops) != 2 {
		t.Fatalf("ops by board: %v", ops)
	}
	dups := 5_000 - len(ids)
	if dups < 300 || dups > 700 || negative == 0 {
		t.Fatalf("%d duplicates (want about 500), %d negative increments", dups, negative)
	}
	if _, err := NewScores(ScoresConfig{Boards: []ScoreBoardLoad{{"arena", "delete"}}}); err == nil {
		t.Fatal("a delete board accepted")
	}
}
