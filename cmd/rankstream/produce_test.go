package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/topics"
)

// consume reads n records of topic from its start.
func consume(t *testing.T, brokers []string, topic string, n int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("%d of %d records of %s within a minute", len(out), n, topic)
		}
		out = append(out, fs.Records()...)
	}
	return out
}

// TestProduceSearch runs `rankstream produce search` in-process, generating and replaying a
// file from standard input, and `produce steps` beside it, and reads the topics back.
func TestProduceSearch(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		prefix := testenv.UniqueName(t, "ps") + "."
		run := func(stdin string, args ...string) (int, string) {
			t.Helper()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var stdout, stderr bytes.Buffer
			common := []string{"--brokers", strings.Join(brokers, ","), "--topic-prefix", prefix}
			code := dispatch(ctx, append(args, common...), strings.NewReader(stdin), &stdout, &stderr)
			return code, stdout.String() + stderr.String()
		}
		if code, out := run("", "topics"); code != 0 {
			t.Fatalf("topics: exit %d\n%s", code, out)
		}

		code, out := run("", "produce", "search", "--count", "3000", "--terms", "200", "--skew", "0.8",
			"--trending", "black friday, snow storm", "--trend-peak", "0s", "--trend-share", "0.2",
			"--start", "2026-11-27T09:00:00Z", "--speed", "60", "--log-level", "warn")
		if code != 0 || !strings.Contains(out, "sent 3000 records") {
			t.Fatalf("produce search: exit %d\n%s", code, out)
		}
		file := "2026-11-30T08:00:00+08:00\tWeather  Today\n1796040000123\tsnow storm\n\n1796040000124\tSNOW STORM\n"
		code, out = run(file, "produce", "search", "--file", "-", "--log-level", "warn")
		if code != 0 || !strings.Contains(out, "sent 3 records") {
			t.Fatalf("produce search --file -: exit %d\n%s", code, out)
		}

		code, out = run("", "produce", "steps", "--count", "500", "--users", "50", "--log-level", "warn")
		if code != 0 || !strings.Contains(out, "sent 500 records") {
			t.Fatalf("produce steps: exit %d\n%s", code, out)
		}
		for _, r := range consume(t, brokers, prefix+string(topics.StepsReported), 500) {
			if _, _, err := topics.DecodeStepReport(string(r.Key), r.Value, r.Timestamp, topics.DefaultStepRules); err != nil {
				t.Fatalf("produce steps sent an invalid report: %v", err)
			}
		}

		code, out = run("", "produce", "scores", "--count", "400", "--members", "30", "--board-ops", "arena:incr,highscore:set",
			"--scopes", "eu,us", "--log-level", "warn")
		if code != 0 || !strings.Contains(out, "sent 400 records") {
			t.Fatalf("produce scores: exit %d\n%s", code, out)
		}
		ops := map[string]int{}
		for _, r := range consume(t, brokers, prefix+string(topics.ScoresUpdated), 400) {
			op, err := topics.DecodeScoreOp(string(r.Key), r.Value, r.Timestamp, topics.DefaultScoreRules)
			if err != nil {
				t.Fatalf("produce scores sent an invalid op: %v", err)
			}
			if op.Scope != "eu" && op.Scope != "us" {
				t.Fatalf("produce scores: scope %q, want eu or us", op.Scope)
			}
			ops[op.Board+":"+op.Op]++
		}
		if len(ops) != 2 || ops["arena:incr"] == 0 || ops["highscore:set"] == 0 {
			t.Errorf("produce scores: ops %v, want arena:incr and highscore:set", ops)
		}

		recs := consume(t, brokers, prefix+string(topics.SearchQueries), 3003)
		terms := map[string]int{}
		replayed := map[string]int64{} // key -> ts
		for _, r := range recs {
			q, term, err := topics.DecodeSearchQuery(string(r.Key), r.Value, r.Timestamp)
			if err != nil {
				t.Fatalf("invalid record %s: %v", r.Value, err)
			}
			terms[term]++
			if q.UserID == "" {
				replayed[string(r.Key)+" "+term] = q.TS.Millis()
			} else if string(r.Key) != q.UserID {
				t.Fatalf("record key %q, user %q", r.Key, q.UserID)
			}
		}
		if terms["black friday"] < 300 || terms["snow storm"] < 2 {
			t.Errorf("planted terms: %d black friday, %d snow storm", terms["black friday"], terms["snow storm"])
		}
		want := map[string]int64{"1 weather today": 1795996800000, "2 snow storm": 1796040000123, "4 snow storm": 1796040000124}
		for k, ts := range want {
			if replayed[k] != ts {
				t.Errorf("replayed %v, want %v", replayed, want)
				break
			}
		}
	})
}

func TestProduceUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		say  string
	}{
		{[]string{"produce"}, 2, "steps|scores|search"},
		{[]string{"produce", "clicks"}, 2, "steps|scores|search"},
		{[]string{"produce", "scores", "--board-ops", "arena:add"}, 2, `--board-ops "arena:add": loadgen: board "arena" with op "add"`},
		{[]string{"produce", "search", "--file", "x.tsv", "--trending", "a"}, 2, "--trending only shape a generated stream"},
		{[]string{"produce", "search", "--skew", "-1", "--brokers", "127.0.0.1:1"}, 1, "skew -1"},
		{[]string{"produce", "search", "--file", "/nonexistent/q.tsv"}, 1, "--file: open /nonexistent/q.tsv"},
		{[]string{"produce", "search", "--start", "yesterday"}, 2, `invalid value "yesterday" for flag -start`},
		{[]string{"produce", "steps", "--start", "yesterday"}, 2, `invalid value "yesterday" for flag -start`},
	} {
		var stdout, stderr bytes.Buffer
		code := dispatch(context.Background(), tc.args, strings.NewReader(""), &stdout, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.say) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d saying %q", tc.args, code, stderr.String(), tc.code, tc.say)
		}
	}
}
