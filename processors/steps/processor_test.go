package steps_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lovoo/goka"
	"github.com/lovoo/goka/tester"

	"github.com/rankstream/rankstream/internal/rank"
	"github.com/rankstream/rankstream/processors/steps"
	"github.com/rankstream/rankstream/topics"
)

// recordingSink stores every update synchronously and acknowledges it at once.
type recordingSink struct {
	mu      sync.Mutex
	updates []*rank.StepUpdate
}

func (s *recordingSink) Submit(u *rank.StepUpdate, done func(error)) {
	s.mu.Lock()
	s.updates = append(s.updates, u)
	s.mu.Unlock()
	done(nil)
}

func (s *recordingSink) last() *rank.StepUpdate {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.updates[len(s.updates)-1]
}

type harness struct {
	tt    *tester.Tester
	sink  *recordingSink
	dlq   *tester.QueueTracker
	names topics.Names
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{tt: tester.New(t), sink: &recordingSink{}, names: topics.Names{Prefix: "unit."}}
	cfg := steps.Config{Names: h.names, Rules: topics.DefaultStepRules, Sink: h.sink, Log: nopLogger()}
	proc, err := goka.NewProcessor(nil, steps.Graph(cfg), goka.WithTester(h.tt))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- proc.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("processor: %v", err)
		}
	})
	h.dlq = h.tt.NewQueueTracker(string(h.names.Stream(topics.DLQ)))
	return h
}

var recordTime = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func (h *harness) consume(key, value string) {
	h.tt.Consume(string(h.names.Stream(topics.StepsReported)), key, []byte(value), tester.WithTime(recordTime))
}

func (h *harness) state(user string) *steps.State {
	v, _ := h.tt.TableValue(h.names.Table(steps.Group), user).(*steps.State)
	return v
}

func TestProcessorMergesAndStoresDays(t *testing.T) {
	h := newHarness(t)
	h.consume("u1", `{"request_id":"a","user_id":"u1","steps":100,"ts":"2026-11-30T19:00:00+08:00","tz":"Asia/Shanghai","region":"cn"}`)
	h.consume("u1", `{"request_id":"b","user_id":"u1","steps":300,"ts":"2026-11-30T19:30:00+08:00","tz":"Asia/Shanghai","region":"cn"}`)
	h.consume("u1", `{"request_id":"c","user_id":"u1","steps":200,"ts":"2026-11-30T19:10:00+08:00","tz":"Asia/Shanghai","region":"cn"}`)
	// The same instant is already the next day in Kiritimati (UTC+14).
	h.consume("u1", `{"request_id":"d","user_id":"u1","steps":50,"ts":"2026-11-30T11:30:00Z","tz":"Pacific/Kiritimati"}`)
	h.consume("u1", `{"request_id":"b","user_id":"u1","steps":9999,"ts":"2026-11-30T19:30:00+08:00","tz":"Asia/Shanghai","region":"cn"}`)

	s := h.state("u1")
	if s == nil || len(s.Days) != 2 {
		t.Fatalf("state = %+v, want two days", s)
	}
	if d := s.Days[0]; d.Day != 20261130 || d.Steps != 300 || d.ReachedMs != time.Date(2026, 11, 30, 11, 30, 0, 0, time.UTC).UnixMilli() {
		t.Fatalf("day 1 = %+v", d)
	}
	if d := s.Days[1]; d.Day != 20261201 || d.Steps != 50 {
		t.Fatalf("day 2 = %+v", d)
	}
	// The duplicate re-sends the stored value: a redelivered record must still write it.
	if u := h.sink.last(); u.Steps != 300 || u.Day != 20261130 || u.User != "u1" || u.Region != "cn" {
		t.Fatalf("last update = %+v", u)
	}
	if _, _, ok := h.dlq.Next(); ok {
		t.Fatal("a valid record went to the dead-letter topic")
	}
}

func TestPoisonRecordsGoToTheDeadLetterTopic(t *testing.T) {
	h := newHarness(t)
	poison := []struct{ key, value, reason string }{
		{"u1", `{"request_id":`, "json:"},
		{"u1", `{"request_id":"r","user_id":"u1","steps":-3,"ts":1796040000000,"tz":"UTC"}`, "negative"},
		{"u1", `{"request_id":"r","user_id":"u1","steps":5000000,"ts":1796040000000,"tz":"UTC"}`, "plausible maximum"},
		{"u1", `{"request_id":"r","user_id":"u1","steps":5,"ts":1796040000000,"tz":"Atlantis/Capital"}`, "unknown zone"},
		{"u1", `{"user_id":"u1","steps":5,"ts":1796040000000,"tz":"UTC"}`, "request_id: missing"},
		{"u1", `{"request_id":"r","steps":5,"ts":1796040000000,"tz":"UTC"}`, "user_id: missing"},
		{"u1", `{"request_id":"` + strings.Repeat("x", 1_000_000) + `"}`, "over the limit"},
	}
	for _, p := range poison {
		h.consume(p.key, p.value)
	}
	h.consume("u2", `{"request_id":"ok","user_id":"u2","steps":7,"ts":1796040000000,"tz":"UTC"}`)

	for i, p := range poison {
		hdr, key, value, ok := h.dlq.NextRawWithHeaders()
		if !ok {
			t.Fatalf("dead letter %d missing", i)
		}
		if key != p.key || string(value) != p.value {
			t.Fatalf("dead letter %d: key %q, value of %d bytes: not the original", i, key, len(value))
		}
		if r := string(hdr[topics.HeaderReason]); !strings.Contains(r, p.reason) {
			t.Fatalf("dead letter %d: reason %q does not say %q", i, r, p.reason)
		}
		if src := string(hdr[topics.HeaderSourceTopic]); src != string(h.names.Stream(topics.StepsReported)) {
			t.Fatalf("dead letter %d: source topic %q", i, src)
		}
		if string(hdr[topics.HeaderSourceOffset]) == "" || string(hdr[topics.HeaderSourcePartition]) == "" {
			t.Fatalf("dead letter %d: no source partition/offset headers: %v", i, hdr)
		}
	}
	if _, _, ok := h.dlq.Next(); ok {
		t.Fatal("more dead letters than poison records")
	}
	if s := h.state("u2"); s == nil || s.Days[0].Steps != 7 {
		t.Fatalf("the processor lost the valid record after the poison ones: %+v", s)
	}
	if h.state("u1") != nil {
		t.Fatal("a poison record changed state")
	}
}

// TestMidnightRolloverAcrossZones: the same user reporting across local midnight starts a new
// day in their zone, while at the same instants users in other zones stay on their own dates.
func TestMidnightRolloverAcrossZones(t *testing.T) {
	h := newHarness(t)
	report := func(user, req, ts, tz string, steps int) {
		h.consume(user, `{"request_id":"`+req+`","user_id":"`+user+`","steps":`+strconv.Itoa(steps)+`,"ts":"`+ts+`","tz":"`+tz+`"}`)
	}
	// 2026-11-30T10:00Z is midnight in Kiritimati (UTC+14) and 23:00 of Nov 29 in Pago Pago (UTC-11).
	report("kiri", "a", "2026-11-30T09:59:59Z", "Pacific/Kiritimati", 9000)
	report("kiri", "b", "2026-11-30T10:00:00Z", "Pacific/Kiritimati", 12)
	report("pago", "a", "2026-11-30T09:59:59Z", "Pacific/Pago_Pago", 7000)
	report("pago", "b", "2026-11-30T10:00:00Z", "Pacific/Pago_Pago", 7100)
	report("pago", "c", "2026-11-30T11:00:00Z", "Pacific/Pago_Pago", 5)

	days := func(user string) map[rank.Day]int64 {
		out := map[rank.Day]int64{}
		for _, d := range h.state(user).Days {
			out[d.Day] = d.Steps
		}
		return out
	}
	if got := days("kiri"); len(got) != 2 || got[20261130] != 9000 || got[20261201] != 12 {
		t.Fatalf("kiri: %v, want 9000 on Nov 30 and 12 on Dec 1", got)
	}
	if got := days("pago"); len(got) != 2 || got[20261129] != 7100 || got[20261130] != 5 {
		t.Fatalf("pago: %v, want 7100 on Nov 29 and 5 on Nov 30", got)
	}
}
