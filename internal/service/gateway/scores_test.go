package gateway_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/platform/boardsfile"
	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/internal/service/gateway"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/topics"
)

// testBoards: arena (2 days of retention) and cup, whose only period is a season of 2020.
func testBoards(t testing.TB) []*board.Board {
	t.Helper()
	bs, err := boardsfile.Parse("test-boards.yaml", []byte(`boards:
  - name: arena
    periods: [d, total]
    tz: UTC
    retention: 2d
  - name: cup
    periods: [season]
    tz: UTC
    seasons: [{name: s1, start: 2020-01-01, end: 2020-02-01}]
`))
	if err != nil {
		t.Fatal(err)
	}
	return bs
}

// update is an UpdateRank body; ops are `{"member":...,"op":...,"score":...}` objects.
func update(request, boardName, extra string, ops ...string) string {
	return fmt.Sprintf(`{"request_id":%q,"board":%q%s,"operations":[%s]}`, request, boardName, extra, strings.Join(ops, ","))
}

func op(member, kind string, score int) string {
	return fmt.Sprintf(`{"member":%q,"op":%q,"score":%d}`, member, kind, score)
}

// TestScoreAnswers: POST /v1/scores with every default. Each refusal is answered as the
// contract says (401, 400 with the reason the scores processor would dead-letter with, 413,
// 429) and nothing of a refused request reaches Kafka; an accepted request answers its request
// id and becomes one scores.updated record per operation, keyed by member in the partition the
// processor reads, with the derived request id, the request's board, scope and ts (the
// validation time when it gives none), and passes the processor's checks.
func TestScoreAnswers(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		g := newGateway(t, brokers, gateway.Config{Boards: testBoards(t)})
		auth := "Bearer " + secret
		now := time.Now()
		if r := g.post("/v1/scores", "Bearer nope", update("r0", "arena", "", op("m0", "set", 1))); r.code != 401 {
			t.Errorf("a wrong key: %v, want 401", r)
		}
		long := strings.Repeat("x", topics.MaxIDBytes-2)
		bad := []struct{ body, reason string }{
			{update("r0", "nope", "", op("m0", "set", 1)), `operations[0]: board: "nope" is not declared in the boards file`},
			{update("r0", "arena", "", op("m0", "set", 1), op("m1", "double", 2)), `operations[1]: op: unknown "double"`},
			{update("r0", "arena", "", op("m0", "release", 0)), `operations[0]: op: "release" is an operator's op (rankstream ban), not a client's`},
			{update("r0", "arena", "", `{"member":"m0","op":"set","score":1.5}`), "operations[0]: score: 1.5 is not an integer"},
			{update("r0", "arena", "", `{"member":"m0","op":"set"}`), "operations[0]: score: missing"},
			{update("r0", "arena", "", op("m0", "set", 1<<48)), "operations[0]: score: 281474976710656 is outside"},
			{update("r0", "arena", "", op("m 0", "set", 1)), "operations[0]: member: contains U+0020"},
			{update("r0", "arena", `,"scope":"global"`, op("m0", "set", 1)), `scope: "global" names the global board`},
			{update("r0", "arena", fmt.Sprintf(`,"ts":%d`, now.Add(-3*24*time.Hour).UnixMilli()), op("m0", "set", 1)), "older than the board's retention"},
			{update("r0", "arena", fmt.Sprintf(`,"ts":%d`, now.Add(time.Hour).UnixMilli()), op("m0", "set", 1)), "after the record time"},
			{update("r0", "cup", "", op("m0", "set", 1)), `is in no season of board "cup"`},
			{update("", "arena", "", op("m0", "set", 1)), "request_id: missing"},
			{update(long, "arena", "", op("m0", "set", 1)), "request_id: 126 bytes, longer than 125"},
			{update("r0", "arena", ""), "operations: missing or empty"},
			{`{"request_id":"r0","board":"arena","operations":{}}`, "json: "},
		}
		for _, b := range bad {
			r := g.post("/v1/scores", auth, b.body)
			if msg, _ := r.body["error"].(string); r.code != 400 || !strings.Contains(msg, b.reason) {
				t.Errorf("%.100s: %v, want 400 saying %q", b.body, r, b.reason)
			}
		}
		ops := make([]string, gateway.MaxElements+1)
		for i := range ops {
			ops[i] = op("m"+strconv.Itoa(i), "incr", 1)
		}
		if r := g.post("/v1/scores", auth, update("r0", "arena", "", ops...)); r.code != 413 {
			t.Errorf("%d operations: %v, want 413", len(ops), r)
		}
		if r := g.post("/v1/scores", auth, "["+update("r0", "arena", "", ops[:60]...)+","+update("r1", "arena", "", ops[60:]...)+"]"); r.code != 413 {
			t.Errorf("two requests of %d operations in all: %v, want 413", len(ops), r)
		}

		// Accepted: a request of two members with a scope and a ts, one without ts, an array.
		before, ts := time.Now(), now.Add(-time.Hour).UnixMilli()
		want := map[string]topics.ScoreOp{} // derived request id -> the op
		accept := func(body, answer string) {
			t.Helper()
			r := g.post("/v1/scores", auth, body)
			got := fmt.Sprint(r.body["request_id"])
			if strings.HasPrefix(body, "[") {
				got = fmt.Sprint(r.body["request_ids"])
			}
			if r.code != 202 || got != answer {
				t.Fatalf("%.100s: %v, want 202 answering %s", body, r, answer)
			}
		}
		accept(update("a", "arena", fmt.Sprintf(`,"scope":"eu","ts":%d`, ts), op("m1", "set", 10), op("m2", "incr", -3)), "a")
		want["a/0"] = topics.ScoreOp{RequestID: "a/0", Board: "arena", Member: "m1", Op: "set", Score: 10, Scope: "eu"}
		want["a/1"] = topics.ScoreOp{RequestID: "a/1", Board: "arena", Member: "m2", Op: "incr", Score: -3, Scope: "eu"}
		accept("["+update("b", "arena", "", `{"member":"m3","op":"delete"}`)+","+update("c", "arena", "", op("m3", "set", 7))+"]", "[b c]")
		want["b/0"] = topics.ScoreOp{RequestID: "b/0", Board: "arena", Member: "m3", Op: "delete"}
		want["c/0"] = topics.ScoreOp{RequestID: "c/0", Board: "arena", Member: "m3", Op: "set", Score: 7}
		// A member's bucket is per board: m4 writes until refused.
		start := time.Now()
		for i := 0; ; i++ {
			id := "burst" + strconv.Itoa(i)
			r := g.post("/v1/scores", auth, update(id, "arena", "", op("m4", "incr", 1)))
			if r.code == http.StatusTooManyRequests {
				if ra, _ := strconv.Atoi(r.retryAfter); ra < 1 {
					t.Fatalf("429 without Retry-After: %v", r)
				}
				if most := gateway.DefaultUserBurst + int(time.Since(start).Seconds()*gateway.DefaultUserRate) + 1; i < gateway.DefaultUserBurst || i > most {
					t.Fatalf("refused after %d requests in %s, want from the burst %d to %d", i, time.Since(start), gateway.DefaultUserBurst, most)
				}
				break
			}
			if r.code != http.StatusAccepted {
				t.Fatalf("request %d of one member: %v", i, r)
			}
			want[id+"/0"] = topics.ScoreOp{RequestID: id + "/0", Board: "arena", Member: "m4", Op: "incr", Score: 1}
		}
		after := time.Now()

		boards := map[string]*board.Board{}
		for _, b := range testBoards(t) {
			boards[b.Name] = b
		}
		for _, rec := range g.records(topics.ScoresUpdated, len(want)) {
			o, err := topics.DecodeScoreOp(string(rec.Key), rec.Value, rec.Timestamp, topics.DefaultScoreRules)
			if err == nil {
				_, err = topics.ScoreOpBoard(o, boards, rec.Timestamp)
			}
			if err != nil {
				t.Errorf("record %s: the processor would refuse it: %v", rec.Value, err)
				continue
			}
			w, ok := want[o.RequestID]
			wantTS := ts
			if o.RequestID[0] != 'a' { // no ts given: the time it was validated at
				wantTS = o.TS.Millis()
				if o.TS.Time.Before(before.Truncate(time.Millisecond)) || o.TS.Time.After(after) || o.TS.Millis() != rec.Timestamp.UnixMilli() {
					t.Errorf("record %s: ts %s, record time %s, want the validation time in [%s, %s]", o.RequestID, o.TS.Time, rec.Timestamp, before, after)
				}
			}
			w.TS = o.TS
			if !ok || *o != w || o.TS.Millis() != wantTS || rec.Partition != kafka.PartitionOf(o.Member, 8) {
				t.Errorf("record %s in partition %d: %+v, want %+v at ts %d in partition %d", rec.Value, rec.Partition, *o, w, wantTS, kafka.PartitionOf(o.Member, 8))
			}
			delete(want, o.RequestID)
		}
		if len(want) > 0 {
			t.Errorf("records missing: %v", want)
		}
	})
}

// TestScoresShedWhileKafkaHolds: Kafka (kfake) holds every produce request. A score update
// is answered 503 with a jittered Retry-After at the request deadline; then, of 8 concurrent
// ones, those beyond the few that probe Kafka are shed at once; all are counted shed.
func TestScoresShedWhileKafkaHolds(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(testenv.DefaultPartitions))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	g := newGateway(t, cluster.ListenAddrs(), gateway.Config{Boards: testBoards(t)})
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	cluster.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		cluster.KeepControl()
		cluster.SleepControl(func() { <-release })
		return nil, nil, false
	})
	shed := func() float64 {
		return value(obs.GatewayShed.WithLabelValues("kafka")) + value(obs.GatewayShed.WithLabelValues("kafka_down"))
	}
	before := shed()
	r := g.post("/v1/scores", "Bearer "+secret, update("r1", "arena", "", op("m1", "set", 1)))
	checkShed(t, r)
	if r.took < gateway.DefaultRequestTimeout || r.took > gateway.DefaultRequestTimeout+3*time.Second {
		t.Errorf("answered after %s, want at the request deadline %s", r.took, gateway.DefaultRequestTimeout)
	}
	// Once Kafka failed, a few requests at a time probe it; the others are shed at once.
	const n = 8
	bodies := make([]string, n)
	for i := range bodies {
		bodies[i] = update("p"+strconv.Itoa(i), "arena", "", op("p"+strconv.Itoa(i), "set", 1))
	}
	fast := 0
	for _, r := range g.postMany("/v1/scores", bodies) {
		checkShed(t, r)
		if r.took < 2*time.Second {
			fast++
		}
	}
	if fast == 0 {
		t.Errorf("none of %d requests shed at once while Kafka fails", n)
	}
	if got := shed() - before; got != 1+n {
		t.Errorf("%v requests counted shed, want %d", got, 1+n)
	}
}
