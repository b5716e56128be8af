package steps_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/lovoo/goka/tester"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/e2e"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/processors/steps"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
	"github.com/rankstream/rankstream/topics"
)

// recordingSink stores every update synchronously and acknowledges it at once.
type recordingSink struct {
	mu      sync.Mutex
	updates []*board.StepUpdate
}

func (s *recordingSink) Submit(u *board.StepUpdate, done func(error)) {
	s.mu.Lock()
	s.updates = append(s.updates, u)
	s.mu.Unlock()
	done(nil)
}

// written returns the updates that carry something to write, in order.
func (s *recordingSink) written() []*board.StepUpdate {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*board.StepUpdate
	for _, u := range s.updates {
		if u != nil {
			out = append(out, u)
		}
	}
	return out
}

func (s *recordingSink) last() *board.StepUpdate {
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

func newHarness(t *testing.T) *harness { return newHarnessWithin(t, steps.Limits{}) }

func newHarnessWithin(t *testing.T, lim steps.Limits) *harness {
	t.Helper()
	h := &harness{tt: tester.New(t), sink: &recordingSink{}, names: topics.Names{Prefix: "unit."}}
	cfg := steps.Config{Names: h.names, Rules: topics.DefaultStepRules, Limits: lim, Sink: h.sink, Log: nopLogger()}
	testenv.RunGokaTester(t, steps.Graph(cfg), h.tt)
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
	// The stale report (c) and the duplicate (b again) were acknowledged without a write: this
	// processor had handed their day's effect already (a processor that did not, after a
	// rebalance or a crash, re-sends it: TestARestoredDayIsHandedAgainOnce,
	// TestCrashRecoveryIsExact).
	if u := h.sink.last(); u != nil {
		t.Fatalf("the duplicate handed %+v to the sink, want nothing to write", u)
	}
	if got := h.sink.written(); len(got) != 3 || got[1].Steps != 300 || got[1].Day != 20261130 || got[1].User != "u1" || got[1].Region != "cn" || got[2].Day != 20261201 {
		t.Fatalf("updates written = %+v, want 100 and 300 on 20261130, then 20261201", got)
	}
	if _, _, ok := h.dlq.Next(); ok {
		t.Fatal("a valid record went to the dead-letter topic")
	}
}

// TestARestoredDayIsHandedAgainOnce: a day whose state names another claim than this
// processor's (the table restored after a rebalance or a crash) is handed to the sink by its
// next record, a duplicate included, and only by the first.
func TestARestoredDayIsHandedAgainOnce(t *testing.T) {
	h := newHarness(t)
	const report = `{"request_id":"a","user_id":"u1","steps":100,"ts":"2026-11-30T19:00:00+08:00","tz":"Asia/Shanghai"}`
	h.consume("u1", report)
	s := h.state("u1")
	s.Days[0].HandedIn++ // another processor's claim
	h.tt.SetTableValue(h.names.Table(steps.Group), "u1", s)
	h.consume("u1", report)
	h.consume("u1", report)
	got := h.sink.written()
	if len(got) != 2 || got[1].Steps != 100 || got[1].Day != 20261130 {
		t.Fatalf("updates written = %+v, want the day handed once more after the restore", got)
	}
	if h.state("u1").Days[0].HandedIn == s.Days[0].HandedIn {
		t.Fatal("the re-sent day's state does not name this processor's claim")
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

	days := func(user string) map[board.Day]int64 {
		out := map[board.Day]int64{}
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

// TestStaleReportsRequestIDIsPersisted (defect: a stale report's request id was kept in memory
// only, so a retry of the same request id with a larger value was merged): the table value
// after a stale report holds its request id, and the retry changes nothing.
func TestStaleReportsRequestIDIsPersisted(t *testing.T) {
	h := newHarness(t)
	report := func(req string, steps int) {
		h.consume("u1", `{"request_id":"`+req+`","user_id":"u1","steps":`+strconv.Itoa(steps)+`,"ts":"2026-11-30T10:00:00Z","tz":"UTC","region":"eu"}`)
	}
	report("a", 500)
	report("b", 0) // stale
	if s := h.state("u1"); s == nil || !slices.Contains(s.Days[0].Requests, xxhash.Sum64String("b")) {
		t.Fatalf("the stale report's request id is not in the table: %+v", s)
	}
	report("b", 36_894) // a retry of the stale request with another value
	if s := h.state("u1"); s.Days[0].Steps != 500 {
		t.Fatalf("the retry of a stale request id was merged: %+v", s.Days[0])
	}
	if w := h.sink.written(); w[len(w)-1].Steps != 500 {
		t.Fatalf("last update written %+v, want 500 steps", w[len(w)-1])
	}
	// A dead-lettered record is not a merge: a valid report with its request id is merged.
	h.consume("u1", `{"request_id":"c","user_id":"u1","steps":-3,"ts":"2026-11-30T10:00:00Z","tz":"UTC"}`)
	report("c", 600)
	if s := h.state("u1"); s.Days[0].Steps != 600 {
		t.Fatalf("a valid report whose request id was dead-lettered before was not merged: %+v", s.Days[0])
	}
}

// TestTooManyRegionsGoToTheDeadLetterTopic: a report that would move the user to a region
// beyond MaxRegionsPerDay in one day is dead-lettered with the reason, and changes nothing.
func TestTooManyRegionsGoToTheDeadLetterTopic(t *testing.T) {
	h := newHarness(t)
	for i := range steps.MaxRegionsPerDay + 1 {
		h.consume("u1", fmt.Sprintf(`{"request_id":"r%d","user_id":"u1","steps":%d,"ts":"2026-11-30T10:00:00Z","tz":"UTC","region":"reg%d"}`, i, 10*(i+1), i))
	}
	hdr, _, _, ok := h.dlq.NextRawWithHeaders()
	if !ok || !strings.Contains(string(hdr[topics.HeaderReason]), "distinct regions") {
		t.Fatalf("no dead letter saying why (%v): %q", ok, hdr[topics.HeaderReason])
	}
	d := h.state("u1").Days[0]
	if d.Steps != 10*steps.MaxRegionsPerDay || len(d.Left) != steps.MaxRegionsPerDay-1 {
		t.Fatalf("day after the rejected report: %+v", d)
	}
	if u := h.sink.last(); u != nil {
		t.Fatalf("the rejected report was written: %+v", u)
	}
}

// redisModel is what Redis holds after the sink wrote a sequence of updates: set-if-greater
// step keys, ZADD GT boards, ZREM from the regions left (empty boards vanish).
type redisModel struct {
	values map[string]int64
	boards map[string]map[string]float64
}

func newRedisModel(updates []*board.StepUpdate) redisModel {
	m := redisModel{values: map[string]int64{}, boards: map[string]map[string]float64{}}
	for _, u := range updates {
		if u == nil {
			continue
		}
		if k := rsredis.StepKey(u.Day, u.User); u.Steps > m.values[k] || m.values[k] == 0 {
			m.values[k] = max(u.Steps, m.values[k])
		}
		score, err := board.DayComposite(u.Day).Encode(u.Steps, u.ReachedMs)
		if err != nil {
			panic(err)
		}
		add := func(board string) {
			if m.boards[board] == nil {
				m.boards[board] = map[string]float64{}
			}
			if cur, ok := m.boards[board][u.User]; !ok || score > cur {
				m.boards[board][u.User] = score
			}
		}
		add(rsredis.StepsGlobalBoard(u.Day))
		if u.Region != "" {
			add(rsredis.StepsRegionBoard(u.Region, u.Day))
		}
		for _, l := range u.Left {
			if l != u.Region {
				b := rsredis.StepsRegionBoard(l, u.Day)
				delete(m.boards[b], u.User)
				if len(m.boards[b]) == 0 {
					delete(m.boards, b)
				}
			}
		}
	}
	return m
}

// TestAnyOrderGivesTheSameRedis is the property of the merge: for random streams, every
// interleaving of the records across users and every permutation within a user gives the
// same Redis contents, as long as each request id's first valid report stays first (a
// request id is merged once: which report of it comes first is input, not order). Invalid
// records, even those sharing a valid request id, move freely.
func TestAnyOrderGivesTheSameRedis(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 3))
	for trial := range 8 {
		// Near midnight in Kiritimati, a day before the records' time.
		records, ids, invalid := e2e.PropertyStream(rng, 5, 40, time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC))
		var want redisModel
		for p := range 12 {
			order := e2e.ShuffleStream(rng, ids)
			if p == 0 {
				slices.Sort(order)
			}
			h := newHarness(t)
			for _, i := range order {
				h.consume(records[i].Key, string(records[i].Value))
			}
			dead := 0
			for _, _, ok := h.dlq.Next(); ok; _, _, ok = h.dlq.Next() {
				dead++
			}
			if dead != invalid {
				t.Fatalf("trial %d: %d dead letters, want %d", trial, dead, invalid)
			}
			got := newRedisModel(h.sink.updates)
			if p == 0 {
				want = got
				if len(want.values) == 0 || len(want.boards) < 3 {
					t.Fatalf("trial %d: the stream gives too little to compare: %+v", trial, want)
				}
			} else if !reflect.DeepEqual(got, want) {
				t.Fatalf("trial %d, permutation %d: Redis differs:\n got %+v\nwant %+v", trial, p, got, want)
			}
		}
	}
}
