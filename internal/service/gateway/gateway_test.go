package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lovoo/goka"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/e2e"
	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/internal/service/gateway"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/topics"
)

const secret = "test-secret"

// testGateway is a gateway on its own topics (a prefix) of a broker, served with the binary's
// server limits.
type testGateway struct {
	t   testing.TB
	kc  kafka.Config
	gw  *gateway.Gateway
	url string
}

func newGateway(t testing.TB, brokers []string, cfg gateway.Config) *testGateway {
	t.Helper()
	kc := kafka.Config{Brokers: brokers, Partitions: 8, Names: topics.Names{Prefix: testenv.UniqueName(t, "gw") + "."}}
	e2e.KafkaClient(t, kc) // creates the topics
	cfg.Kafka = kc
	cfg.Keys = gateway.NewKeys([]gateway.APIKey{gateway.KeyOf("test", secret)})
	cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	gw, err := gateway.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gw.Close)
	mux := obs.Mux(gw.Ready)
	gw.Register(mux)
	srv := httptest.NewUnstartedServer(mux)
	srv.Config = obs.NewServer(mux, obs.DefaultServerLimits)
	srv.Start()
	t.Cleanup(srv.Close)
	return &testGateway{t: t, kc: kc, gw: gw, url: srv.URL}
}

// reply is an answer of the gateway.
type reply struct {
	code       int
	retryAfter string
	body       map[string]any
	took       time.Duration
}

func (r reply) String() string {
	return fmt.Sprintf("%d %v (Retry-After %q)", r.code, r.body, r.retryAfter)
}

// post sends body to path with the Authorization header auth ("" for none).
func (g *testGateway) post(path, auth, body string) reply {
	g.t.Helper()
	req, err := http.NewRequest(http.MethodPost, g.url+path, strings.NewReader(body))
	if err != nil {
		g.t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatal(err)
	}
	defer resp.Body.Close()
	r := reply{code: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), took: time.Since(start)}
	if err := json.NewDecoder(resp.Body).Decode(&r.body); err != nil {
		g.t.Fatalf("POST %s: %d with a body that is not JSON: %v", path, resp.StatusCode, err)
	}
	return r
}

// records reads every record of stream, checking that there are exactly n.
func (g *testGateway) records(stream goka.Stream, n int) []*kgo.Record {
	g.t.Helper()
	topic := string(g.kc.Names.Stream(stream))
	cl, err := g.kc.KgoClient(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		g.t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		g.t.Fatal(err)
	}
	var end int64
	ends.Each(func(o kadm.ListedOffset) { end += o.Offset })
	if end != int64(n) {
		g.t.Fatalf("%s holds %d records, want %d", topic, end, n)
	}
	var out []*kgo.Record
	for len(out) < n && ctx.Err() == nil {
		out = append(out, cl.PollFetches(ctx).Records()...)
	}
	if len(out) != n {
		g.t.Fatalf("read %d records of %s, want %d", len(out), topic, n)
	}
	return out
}

func stepReport(user, request string, steps int, ts time.Time) string {
	return fmt.Sprintf(`{"request_id":%q,"user_id":%q,"device_id":"d1","steps":%d,"ts":%q,"tz":"Asia/Shanghai","region":"east"}`,
		request, user, steps, ts.Format(time.RFC3339))
}

// TestWriteAnswers: with every default, each refusal is answered as the contract says and
// nothing of a refused request reaches Kafka; accepted reports land keyed by user, in the
// partition the processors expect, stamped with the time they were validated at, byte for
// byte as sent, and pass the processors' decoders.
func TestWriteAnswers(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		g := newGateway(t, brokers, gateway.Config{})
		auth := "Bearer " + secret
		now := time.Now()
		before := now.Add(-time.Millisecond)

		for _, a := range []string{"", "Bearer", "Bearer wrong", "Basic " + secret, "Bearer " + secret + "x"} {
			if r := g.post("/v1/steps", a, stepReport("u0", "r0", 1, now)); r.code != 401 || !strings.Contains(r.body["error"].(string), "API key") {
				t.Errorf("Authorization %q: %v, want 401", a, r)
			}
		}
		bad := []struct{ path, body, reason string }{
			{"/v1/steps", stepReport("u0", "r0", -5, now), "steps: negative"},
			{"/v1/steps", stepReport("u0", "r0", 200_001, now), "over the plausible maximum"},
			{"/v1/steps", stepReport("u0", "r0", 5, now.Add(-8*24*time.Hour)), "older than the retention"},
			{"/v1/steps", stepReport("u 0", "r0", 5, now), "user_id: contains U+0020"},
			{"/v1/steps", `{"request_id":"r0","user_id":"u0","steps":5,"ts":1,"tz":"UTC"}`, "ts: 1970-01-01T00:00:00Z is older"},
			{"/v1/steps", `{"request_id":"r0","user_id":"u0","steps":5,"ts":"2026-11-30 08:00"}`, "json: "},
			{"/v1/steps", `not json`, "json: "},
			{"/v1/steps", " \n", "body: empty"},
			{"/v1/search", fmt.Sprintf(`{"query":"a\u200bb","ts":%d}`, now.UnixMilli()), "query: contains the control or format character U+200B"},
			{"/v1/search", fmt.Sprintf(`{"query":"  ","ts":%d}`, now.UnixMilli()), "query: empty after normalisation"},
			{"/v1/steps", "[" + stepReport("u0", "r0", 5, now) + "," + stepReport("u0", "r1", -1, now) + "]", "element 1: steps: negative (-1) (1 of 2 elements invalid; none accepted)"},
			{"/v1/steps", `{"user_id":"u0","x":` + strings.Repeat("[", 60_000) + `}`, "value: JSON nested deeper than 32"},
			{"/v1/search", `{"x":` + strings.Repeat("[", 60_000) + `}`, "value: JSON nested deeper than 32"},
			{"/v1/steps", "[" + strings.Repeat("[", 100_000), "exceeded max depth"},
			{"/v1/steps", "[]", "body: an empty array"},
			{"/v1/steps", "[" + stepReport("u0", "r0", 5, now) + "] x", "body: data after the array"},
			{"/v1/steps", "[" + stepReport("u0", "r0", 5, now), "body: "},
		}
		for _, b := range bad {
			r := g.post(b.path, auth, b.body)
			if msg, _ := r.body["error"].(string); r.code != 400 || !strings.Contains(msg, b.reason) {
				t.Errorf("POST %s %.80s: %v, want 400 saying %q", b.path, b.body, r, b.reason)
			}
		}
		if r := g.post("/v1/steps", auth, "["+stepReport("u0", "r0", 5, now)+",1]"); r.code != 400 || len(r.body["errors"].([]any)) != 1 {
			t.Errorf("an array with a bad element: %v, want 400 listing it", r)
		}
		big := stepReport("u0", "r0", 5, now)
		big = big[:len(big)-1] + `,"pad":"` + strings.Repeat("x", gateway.DefaultMaxBody) + `"}`
		if r := g.post("/v1/steps", auth, big); r.code != 413 {
			t.Errorf("a body over the default cap: %v, want 413", r)
		}
		many := make([]string, gateway.MaxElements+1)
		for i := range many {
			many[i] = stepReport("u"+strconv.Itoa(i), "r", 1, now)
		}
		if r := g.post("/v1/steps", auth, "["+strings.Join(many, ",")+"]"); r.code != 413 {
			t.Errorf("%d elements: %v, want 413", len(many), r)
		}

		// Accepted: one report, an array of two, the burst of one user then its refusal.
		sent := map[string]string{} // request id -> value
		accept := func(body, want string) {
			t.Helper()
			r := g.post("/v1/steps", auth, body)
			got := fmt.Sprint(r.body["request_id"])
			if strings.HasPrefix(body, "[") {
				got = fmt.Sprint(r.body["request_ids"])
			}
			if r.code != 202 || got != want {
				t.Fatalf("%.100s: %v, want 202 answering %s", body, r, want)
			}
		}
		v := stepReport("u1", "r1", 100, now)
		sent["r1"] = v
		accept(v, "r1")
		v2, v3 := stepReport("u2", "r2", 200, now), stepReport("u3", "r3", 300, now)
		sent["r2"], sent["r3"] = v2, v3
		accept("[ "+v2+",\n"+v3+" ]", "[r2 r3]")
		// One user writes until refused: its burst, and what its rate added meanwhile (a slow
		// machine may take more than a second for the burst), is accepted, then 429.
		start := time.Now()
		for i := 0; ; i++ {
			id := "b" + strconv.Itoa(i)
			body := stepReport("u4", id, 10+i, now)
			r := g.post("/v1/steps", auth, body)
			if r.code == http.StatusTooManyRequests {
				if ra, _ := strconv.Atoi(r.retryAfter); ra < 1 {
					t.Fatalf("429 without Retry-After: %v", r)
				}
				if most := gateway.DefaultUserBurst + int(time.Since(start).Seconds()*gateway.DefaultUserRate) + 1; i < gateway.DefaultUserBurst || i > most {
					t.Fatalf("refused after %d requests in %s, want from the burst %d to %d", i, time.Since(start), gateway.DefaultUserBurst, most)
				}
				break
			}
			if r.code != http.StatusAccepted || r.body["request_id"] != id {
				t.Fatalf("request %d of one user: %v", i, r)
			}
			sent[id] = body
		}
		// The search route has buckets of its own.
		q := fmt.Sprintf(`{"query":"Snow Storm","ts":%d,"user_id":"u4"}`, now.UnixMilli())
		anon := fmt.Sprintf(`{"query":"weather","ts":%q}`, now.Format(time.RFC3339))
		places := map[string]string{}
		for _, body := range []string{q, anon} {
			r := g.post("/v1/search", auth, body)
			if r.code != 202 {
				t.Fatalf("search %s: %v", body, r)
			}
			places[r.body["request_id"].(string)] = body
		}
		after := time.Now()

		for _, rec := range g.records(topics.StepsReported, len(sent)) {
			var id struct {
				RequestID string `json:"request_id"`
			}
			_ = json.Unmarshal(rec.Value, &id)
			if string(rec.Value) != sent[id.RequestID] {
				t.Errorf("record %s = %s, sent %s", id.RequestID, rec.Value, sent[id.RequestID])
			}
			if rec.Partition != kafka.PartitionOf(string(rec.Key), 8) || rec.Timestamp.Before(before) || rec.Timestamp.After(after) {
				t.Errorf("record %s: key %s in partition %d at %s; want partition %d, time in [%s, %s]", id.RequestID, rec.Key, rec.Partition, rec.Timestamp, kafka.PartitionOf(string(rec.Key), 8), before, after)
			}
			if _, _, err := topics.DecodeStepReport(string(rec.Key), rec.Value, rec.Timestamp, topics.DefaultStepRules); err != nil {
				t.Errorf("record %s: the processor would refuse it: %v", id.RequestID, err)
			}
		}
		for _, rec := range g.records(topics.SearchQueries, 2) {
			place := fmt.Sprintf("%s/%d/%d", rec.Topic, rec.Partition, rec.Offset)
			if places[place] != string(rec.Value) {
				t.Errorf("record at %s = %s; the answers named %v", place, rec.Value, places)
			}
			if _, _, err := topics.DecodeSearchQuery(string(rec.Key), rec.Value, rec.Timestamp); err != nil {
				t.Errorf("record at %s: the processor would refuse it: %v", place, err)
			}
			if want := map[bool]string{true: "u4", false: ""}[strings.Contains(string(rec.Value), "u4")]; string(rec.Key) != want {
				t.Errorf("record at %s: key %q, want %q", place, rec.Key, want)
			}
		}
	})
}

// postMany sends bodies concurrently and returns the replies.
func (g *testGateway) postMany(path string, bodies []string) []reply {
	out := make([]reply, len(bodies))
	done := make(chan struct{})
	for i, b := range bodies {
		go func() {
			defer func() { done <- struct{}{} }()
			out[i] = g.post(path, "Bearer "+secret, b)
		}()
	}
	for range bodies {
		<-done
	}
	return out
}

// TestReadyNeedsTheTopics: the gateway is not ready on a cluster without its topics (it does
// not create them), and ready once they exist.
func TestReadyNeedsTheTopics(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		kc := kafka.Config{Brokers: brokers, Partitions: 8, Names: topics.Names{Prefix: testenv.UniqueName(t, "gwready") + "."}}
		gw, err := gateway.New(gateway.Config{Kafka: kc, Keys: gateway.NewKeys([]gateway.APIKey{gateway.KeyOf("test", secret)}),
			Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(gw.Close)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		want := string(kc.Names.Stream(topics.StepsReported))
		if err := gw.Ready(ctx); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("ready without the topics: %v, want an error naming %s", err, want)
		}
		e2e.KafkaClient(t, kc) // creates the topics
		if err := gw.Ready(ctx); err != nil {
			t.Fatalf("not ready with the topics: %v", err)
		}
	})
}
