package gatewaye2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/processors/steps"
	"github.com/rankstream/rankstream/topics"
)

// pacer is vegeta's constant pacer stopped after n requests: a client that falls behind sends
// every request still, as fast as it can, instead of dropping those not sent within the
// duration.
type pacer struct {
	vegeta.ConstantPacer
	n uint64
}

func (p pacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	if hits >= p.n {
		return 0, true
	}
	return p.ConstantPacer.Pace(elapsed, hits)
}

// attack sends n requests to the gateway at a constant rate with vegeta's open-model
// attacker (each request leaves at its time whatever the answers of the earlier ones, so a
// slow server shows in the latencies instead of slowing the load, as long as the client keeps
// up) and returns every result and vegeta's metrics. body(i) is the body of the i-th request,
// and id(i) its request id, sent as its Idempotency-Key: as every client of the gateway
// should, since a request counts once per request id, so that Go's HTTP client sends a
// request again on a new connection when the keep-alive connection it chose was closed by the
// server before the request was read (an overloaded server closes connections whose read
// deadline passed).
func (p *pipeline) attack(path string, rate, n int, body, id func(i int) string) ([]*vegeta.Result, *vegeta.Metrics) {
	p.T.Helper()
	var next atomic.Int64
	targeter := func(tgt *vegeta.Target) error {
		i := int(next.Add(1) - 1)
		header := http.Header{"Authorization": {"Bearer secret-1"}, "Content-Type": {"application/json"}, "Idempotency-Key": {id(i)}}
		*tgt = vegeta.Target{Method: http.MethodPost, URL: p.base + path, Body: []byte(body(i)), Header: header}
		return nil
	}
	atk := vegeta.NewAttacker(vegeta.Timeout(time.Minute))
	var results []*vegeta.Result
	var m vegeta.Metrics
	for r := range atk.Attack(targeter, pacer{vegeta.ConstantPacer{Freq: rate, Per: time.Second}, uint64(n)}, 0, "gateway") {
		results = append(results, r)
		m.Add(r)
	}
	m.Close()
	return results, &m
}

// surgeReport is the step report of user i of a surge: its request id is its user id.
func surgeReport(prefix string, i int, at time.Time) string {
	u := prefix + strconv.Itoa(i)
	return fmt.Sprintf(`{"request_id":%q,"user_id":%q,"steps":%d,"ts":%d,"tz":"UTC"}`, u, u, 1000+i, at.UnixMilli())
}

// surgeResult is what a surge did.
type surgeResult struct {
	codes    map[uint16]int
	metrics  *vegeta.Metrics
	sent     time.Duration // from the first request sent to the last
	accepted int
	capped   int // 503s of the server's concurrency cap (the others: the gateway's shedding)
}

// surge: n distinct users each POST one step report, at rate requests a second (open model),
// through `rankstream gateway` in front of `rankstream process`. It fails the test unless every
// answer is 202, 429 or 503 (no connection error or other status), and, once the steps group
// committed every record the input topic holds, unless every accepted report is in the topic
// once, no report is there twice, and the board holds exactly the topic's users (a 503 after
// the deadline may have landed: it counts as sent), each accepted one with its steps.
func (p *pipeline) surge(n, rate int) surgeResult {
	t := p.T
	t.Helper()
	at := time.Now()
	results, m := p.attack("/v1/steps", rate, n, func(i int) string { return surgeReport("s", i, at) },
		func(i int) string { return "s" + strconv.Itoa(i) })
	res := surgeResult{codes: map[uint16]int{}, metrics: m, sent: m.Latest.Sub(m.Earliest)}
	if len(results) != n {
		t.Fatalf("vegeta sent %d requests, want %d", len(results), n)
	}
	accepted := map[string]bool{}
	other := 0
	for _, r := range results {
		res.codes[r.Code]++
		switch r.Code {
		case http.StatusAccepted:
			var v struct {
				RequestID string `json:"request_id"`
			}
			if err := json.Unmarshal(r.Body, &v); err != nil || v.RequestID == "" || accepted[v.RequestID] {
				t.Fatalf("202 with body %q: want a request id not answered before", r.Body)
			}
			accepted[v.RequestID] = true
		case http.StatusServiceUnavailable:
			if strings.Contains(string(r.Body), "too many concurrent requests") {
				res.capped++
			}
		case http.StatusTooManyRequests:
		default:
			if other == 0 {
				t.Errorf("answer %d %q (error %q) after %s, sent %s after the first: want 202, 429 or 503", r.Code, r.Body, r.Error, r.Latency, r.Timestamp.Sub(m.Earliest))
			}
			other++
		}
	}
	if other > 0 {
		t.Fatalf("%d of %d answers neither 202, 429 nor 503: %v (latency p50 %s, p99 %s, max %s)", other, n, res.codes, m.Latencies.P50, m.Latencies.P99, m.Latencies.Max)
	}
	res.accepted = len(accepted)

	// Every record of the input, once committed (Redis acknowledged it).
	input := string(p.Kafka.Names.Stream(topics.StepsReported))
	total := p.records(topics.StepsReported)
	testenv.WaitCommitted(t, p.Admin.Admin(), string(p.Kafka.Names.Group(steps.Group)), input, total, 2*time.Minute)
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.Kafka.Brokers...), kgo.ConsumeTopics(input), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	inTopic := map[string]int{} // user -> steps
	for read := int64(0); read < total; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of the %d records of %s", read, total, input)
		}
		fs.EachRecord(func(r *kgo.Record) {
			read++
			var v struct {
				UserID string `json:"user_id"`
				Steps  int    `json:"steps"`
			}
			if err := json.Unmarshal(r.Value, &v); err != nil {
				t.Fatalf("record %s: %v", r.Value, err)
			}
			if _, twice := inTopic[v.UserID]; twice {
				t.Fatalf("the report of %s is in %s twice", v.UserID, input)
			}
			inTopic[v.UserID] = v.Steps
		})
	}
	for u := range accepted {
		if _, ok := inTopic[u]; !ok {
			t.Fatalf("the accepted report of %s is not in %s", u, input)
		}
	}
	day := at.UTC().Format("20060102")
	if card := p.Redis.ZCard(ctx, "rank:steps:global:"+day).Val(); card != int64(len(inTopic)) {
		t.Fatalf("the board holds %d users, the input %d (%d accepted)", card, len(inTopic), len(accepted))
	}
	users := make([]string, 0, len(inTopic))
	for u := range inTopic {
		users = append(users, u)
	}
	for i := 0; i < len(users); i += 1000 {
		chunk := users[i:min(i+1000, len(users))]
		keys := make([]string, len(chunk))
		for j, u := range chunk {
			keys[j] = "step:" + day + ":" + u
		}
		vals, err := p.Redis.MGet(ctx, keys...).Result()
		if err != nil {
			t.Fatal(err)
		}
		for j, v := range vals {
			if s, _ := v.(string); s != strconv.Itoa(inTopic[chunk[j]]) {
				t.Fatalf("%s = %v, want %d", keys[j], v, inTopic[chunk[j]])
			}
		}
	}
	t.Logf("%d reports at %d/s (sent in %s: %.0f/s): answers %v (%d of the 503s by the concurrency cap), %d accepted, %d in the input and on the board; latency p50 %s, p99 %s, max %s",
		n, rate, res.sent, float64(n)/max(res.sent.Seconds(), 1e-9), res.codes, res.capped, len(accepted), len(inTopic), m.Latencies.P50, m.Latencies.P99, m.Latencies.Max)
	return res
}

// TestTenThousandReports: the midnight case through the binaries with every default: 10,000
// distinct users each POST one step report within one second (vegeta's open model at 10,000
// requests a second; how close the machine came is logged). Every answer is 202, 429 or 503,
// every accepted report is on the steps board with its steps, and none is in the input twice
// (see surge).
func TestTenThousandReports(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		startPipeline(t, brokers, "", true).surge(10_000, 10_000)
	})
}
