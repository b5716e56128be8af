package scores_test

import (
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lovoo/goka/tester"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/processors/scores"
	"github.com/rankstream/rankstream/topics"
)

// recordingSink keeps every submission and acknowledges it at once.
type recordingSink struct {
	mu   sync.Mutex
	subs [][]board.ScoreUpdate
}

func (s *recordingSink) Submit(us []board.ScoreUpdate, done func(error)) {
	s.mu.Lock()
	s.subs = append(s.subs, us)
	s.mu.Unlock()
	done(nil)
}

func (s *recordingSink) last() []board.ScoreUpdate {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.subs[len(s.subs)-1]
}

func (s *recordingSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.subs)
}

type harness struct {
	tt              *tester.Tester
	sink            *recordingSink
	dlq, quarantine *tester.QueueTracker
	names           topics.Names
}

func testBoards(t *testing.T) []*board.Board {
	t.Helper()
	bs, err := board.NewBoards([]board.Spec{
		{Name: "arena", Periods: []string{"d", "w", "total"}, TZ: "Asia/Shanghai", Retention: "2d"},
		{Name: "cup", Periods: []string{"season"}, TZ: "UTC",
			Seasons: []board.SeasonSpec{{Name: "s1", Start: "2026-11-01", End: "2026-12-01"}}},
		{Name: "fp", Periods: []string{"d", "total"}, TZ: "UTC", MaxIncr: "100", MaxRateOps: "3"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return bs
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{tt: tester.New(t), sink: &recordingSink{}, names: topics.Names{Prefix: "unit."}}
	cfg := scores.Config{Names: h.names, Rules: topics.DefaultScoreRules, Boards: testBoards(t), Sink: h.sink,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	testenv.RunGokaTester(t, scores.Graph(cfg), h.tt)
	h.dlq = h.tt.NewQueueTracker(string(h.names.Stream(topics.DLQ)))
	h.quarantine = h.tt.NewQueueTracker(string(h.names.Stream(topics.ScoresQuarantine)))
	return h
}

var recordTime = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func (h *harness) consume(key, value string) {
	h.tt.Consume(string(h.names.Stream(topics.ScoresUpdated)), key, []byte(value), tester.WithTime(recordTime))
}

func (h *harness) state(member string) *scores.State {
	v, _ := h.tt.TableValue(h.names.Table(scores.Group), member).(*scores.State)
	return v
}

// find returns the update of period p in us.
func find(t *testing.T, us []board.ScoreUpdate, p board.Period) board.ScoreUpdate {
	t.Helper()
	for _, u := range us {
		if u.Period == p {
			return u
		}
	}
	t.Fatalf("no update of period %s in %+v", p, us)
	return board.ScoreUpdate{}
}

func TestProcessorAppliesOpsAndHandsEntries(t *testing.T) {
	h := newHarness(t)
	at := func(clock string) string { return `"2026-11-30T` + clock + `+08:00"` }
	h.consume("m1", `{"request_id":"a","board":"arena","member":"m1","op":"set","score":100,"ts":`+at("19:00:00")+`,"scope":"eu"}`)
	us := h.sink.last()
	if len(us) != 3 {
		t.Fatalf("a set on a d/w/total board handed %d entries: %+v", len(us), us)
	}
	d := find(t, us, board.PeriodDay)
	if d.Board != "arena" || d.Member != "m1" || d.PeriodID != "20261130" || !d.Present || d.Score != 100 || d.Scope != "eu" ||
		d.ReachedMs != time.Date(2026, 11, 30, 11, 0, 0, 0, time.UTC).UnixMilli() ||
		!d.ExpireAt.Equal(time.Date(2026, 12, 2, 16, 0, 0, 0, time.UTC)) { // local midnight + 2 days
		t.Fatalf("day entry %+v", d)
	}
	if w := find(t, us, board.PeriodWeek); w.PeriodID != "2026W49" || w.Score != 100 {
		t.Fatalf("week entry %+v", w)
	}
	if tot := find(t, us, board.PeriodTotal); tot.PeriodID != "total" || !tot.ExpireAt.IsZero() {
		t.Fatalf("total entry %+v", tot)
	}

	h.consume("m1", `{"request_id":"b","board":"arena","member":"m1","op":"incr","score":-30,"ts":`+at("19:10:00")+`}`)
	if d := find(t, h.sink.last(), board.PeriodDay); d.Score != 70 || d.Scope != "eu" {
		t.Fatalf("after incr -30: %+v", d)
	}
	// A retry of b carrying another value changes nothing, and hands the entries as they are.
	h.consume("m1", `{"request_id":"b","board":"arena","member":"m1","op":"set","score":999,"ts":`+at("19:20:00")+`}`)
	if d := find(t, h.sink.last(), board.PeriodDay); d.Score != 70 {
		t.Fatalf("a duplicate request id changed the score: %+v", d)
	}
	// A delete removes the member from every period; a later incr brings it back from 0.
	h.consume("m1", `{"request_id":"c","board":"arena","member":"m1","op":"delete","ts":`+at("19:30:00")+`}`)
	for _, u := range h.sink.last() {
		if u.Present {
			t.Fatalf("after delete: %+v", u)
		}
	}
	h.consume("m1", `{"request_id":"d","board":"arena","member":"m1","op":"incr","score":5,"ts":`+at("19:40:00")+`}`)
	if d := find(t, h.sink.last(), board.PeriodDay); !d.Present || d.Score != 5 {
		t.Fatalf("after delete and incr 5: %+v", d)
	}
	if _, _, ok := h.dlq.Next(); ok {
		t.Fatal("a valid op was dead-lettered")
	}
	if s := h.state("m1"); s == nil || len(s.Boards) != 1 || len(s.Boards[0].Requests) != 4 {
		t.Fatalf("state %+v, want one board with four request ids", s)
	}
}

func TestInvalidOpsGoToTheDeadLetterTopic(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct{ key, value, reason string }{
		{"m1", `{"request_id":"a","board":"nope","member":"m1","op":"set","score":1,"ts":1796040000000}`, `board: "nope" is not declared`},
		{"m1", `{"request_id":"a","board":"arena","member":"m1","op":"freeze","score":1,"ts":1796040000000}`, "op: unknown"},
		{"m1", `{"request_id":"a","board":"arena","member":"m1","op":"set","score":1.5,"ts":1796040000000}`, "is not an integer"},
		{"m2", `{"request_id":"a","board":"arena","member":"m1","op":"set","score":1,"ts":1796040000000}`, "does not match member"},
		{"m1", `{"board":"arena","member":"m1","op":"set","score":1,"ts":1796040000000}`, "request_id: missing"},
		{"m1", `{"request_id":"a","board":"arena","member":"m1","op":"set","score":1,"ts":"yesterday"}`, "json:"},
		// Within the topic's bounds, but older than arena's retention of 2 days.
		{"m1", `{"request_id":"a","board":"arena","member":"m1","op":"set","score":1,"ts":"2026-11-20T00:00:00Z"}`, "older than the board's retention"},
		{"m1", `{"request_id":"a","board":"cup","member":"m1","op":"set","score":1,"ts":"2026-10-31T23:00:00Z"}`, `is in no season of board "cup"`},
		{"m1", `{"request_id":"a","board":"arena","member":"m1","op":"set","score":140737488355328,"ts":1796040000000}`, ""},
		{"m1", `{"request_id":"b","board":"arena","member":"m1","op":"incr","score":1,"ts":1796040000000}`, "score would leave"},
		{"m1", "\xff", "not valid UTF-8"},
	} {
		before := h.sink.count()
		h.consume(tc.key, tc.value)
		if h.sink.count() != before+1 {
			t.Fatalf("%s: %d submissions, want one", tc.value, h.sink.count()-before)
		}
		if tc.reason == "" {
			continue
		}
		hdr, _, value, ok := h.dlq.NextRawWithHeaders()
		if !ok {
			t.Fatalf("%s: no dead letter", tc.value)
		}
		if r := string(hdr[topics.HeaderReason]); !strings.Contains(r, tc.reason) {
			t.Fatalf("%s: reason %q does not say %q", tc.value, r, tc.reason)
		}
		if string(value) != tc.value || h.sink.last() != nil {
			t.Fatalf("%s: dead letter %q, submitted %+v", tc.value, value, h.sink.last())
		}
		if src := string(hdr[topics.HeaderSourceTopic]); src != string(h.names.Stream(topics.ScoresUpdated)) {
			t.Fatalf("source topic %q", src)
		}
	}
	if _, _, ok := h.dlq.Next(); ok {
		t.Fatal("an extra dead letter")
	}
	// The refused incr changed no score, and its request id is remembered (in the table):
	// its redelivery decides the same, a duplicate now, handing the entries as they are.
	if s := h.state("m1"); s == nil || s.Boards[0].Entries[0].Score != board.MaxScore || len(s.Boards[0].Requests) != 2 {
		t.Fatalf("state %+v", s)
	}
	h.consume("m1", `{"request_id":"b","board":"arena","member":"m1","op":"incr","score":1,"ts":1796040000000}`)
	if _, _, ok := h.dlq.Next(); ok {
		t.Fatal("the redelivered refused op was dead-lettered again")
	}
	if us := h.sink.last(); len(us) != 3 || us[0].Score != board.MaxScore {
		t.Fatalf("the redelivered refused op handed %+v", us)
	}
}

// TestFairPlayQuarantinesAndBans: a spike goes to the quarantine topic with its original bytes
// and reason, hands no entry, and freezes the member (their next ops are quarantined too, the
// entries stay); a ban of every board ("*") removes the member from every period of each, is
// recorded in the quarantine topic with who and why, and sends their later ops to the
// dead-letter topic with the reason banned; an honest member next to them is untouched.
func TestFairPlayQuarantinesAndBans(t *testing.T) {
	h := newHarness(t)
	op := func(req, member, body string) string {
		return `{"request_id":"` + req + `","member":"` + member + `","ts":"2026-11-30T11:00:00Z",` + body + `}`
	}
	next := func(q *tester.QueueTracker, what string) (string, string) {
		t.Helper()
		hdr, _, value, ok := q.NextRawWithHeaders()
		if !ok {
			t.Fatalf("%s: nothing in the topic", what)
		}
		return string(hdr[topics.HeaderReason]), string(value)
	}
	h.consume("m1", op("a", "m1", `"board":"fp","op":"incr","score":100`))
	h.consume("m2", op("a", "m2", `"board":"fp","op":"incr","score":100`))
	spike := op("b", "m1", `"board":"fp","op":"incr","score":101`)
	h.consume("m1", spike)
	if reason, value := next(h.quarantine, "the spike"); value != spike || !strings.HasPrefix(reason, "max_incr: rise 101 above 100") {
		t.Fatalf("quarantined %q with reason %q", value, reason)
	}
	if h.sink.last() != nil {
		t.Fatalf("a quarantined op handed %+v", h.sink.last())
	}
	h.consume("m1", op("c", "m1", `"board":"fp","op":"incr","score":1`))
	if reason, _ := next(h.quarantine, "an op of the frozen member"); !strings.HasPrefix(reason, "frozen: ") {
		t.Fatalf("reason %q", reason)
	}
	h.consume("m1", op("d", "m1", `"board":"arena","op":"set","score":7`)) // another board: not frozen
	if u := h.sink.last(); len(u) != 3 || !u[0].Present {
		t.Fatalf("arena: %+v", u)
	}

	ban := op("e", "m1", `"board":"*","op":"ban","by":"alice","reason":"spikes"`)
	h.consume("m1", ban)
	if reason, value := next(h.quarantine, "the ban's audit"); value != ban || reason != "ban by alice on arena,cup,fp: spikes" {
		t.Fatalf("audit %q: %q", value, reason)
	}
	removed := map[string]int{}
	for _, u := range h.sink.last() {
		if u.Present {
			t.Fatalf("after the ban: %+v", u)
		}
		removed[u.Board]++
	}
	if removed["arena"] != 3 || removed["fp"] != 2 || len(removed) != 2 {
		t.Fatalf("the ban removed %v, want every period of arena (3) and fp (2)", removed)
	}
	h.consume("m1", op("f", "m1", `"board":"fp","op":"incr","score":1`))
	if reason, _, _, ok := h.dlq.NextRawWithHeaders(); !ok || !strings.HasPrefix(string(reason[topics.HeaderReason]), "banned: ") {
		t.Fatalf("an op of a banned member: dead letter %v, reason %q", ok, reason[topics.HeaderReason])
	}
	h.consume("m2", op("b", "m2", `"board":"fp","op":"incr","score":100`))
	if u := find(t, h.sink.last(), board.PeriodTotal); u.Member != "m2" || !u.Present || u.Score != 200 {
		t.Fatalf("the honest member: %+v", u)
	}
	if _, _, ok := h.quarantine.Next(); ok {
		t.Fatal("more in the quarantine topic")
	}
}
