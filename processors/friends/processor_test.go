package friends_test

import (
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lovoo/goka/tester"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/processors/friends"
	"github.com/rankstream/rankstream/topics"
)

// recordingSink keeps the latest state of every pair it was handed and acknowledges at once.
type recordingSink struct {
	mu    sync.Mutex
	pairs map[[2]string]bool
	nils  int
}

func (s *recordingSink) Submit(u *board.FriendUpdate, done func(error)) {
	s.mu.Lock()
	if u == nil {
		s.nils++
	} else {
		s.pairs[[2]string{u.User, u.Friend}] = u.Friends
	}
	s.mu.Unlock()
	done(nil)
}

type harness struct {
	tt    *tester.Tester
	sink  *recordingSink
	dlq   *tester.QueueTracker
	names topics.Names
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{tt: tester.New(t), sink: &recordingSink{pairs: map[[2]string]bool{}}, names: topics.Names{Prefix: "unit."}}
	cfg := friends.Config{Names: h.names, Rules: topics.DefaultFriendRules, Sink: h.sink, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	testenv.RunGokaTester(t, friends.Graph(cfg), h.tt)
	h.dlq = h.tt.NewQueueTracker(string(h.names.Stream(topics.DLQ)))
	return h
}

var recordTime = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func (h *harness) op(user, friend, op string, minute int) {
	ts := recordTime.Add(time.Duration(minute-60) * time.Minute).UnixMilli()
	h.tt.Consume(string(h.names.Stream(topics.FriendsChanged)), user,
		[]byte(fmt.Sprintf(`{"user_id":%q,"friend_id":%q,"op":%q,"ts":%d}`, user, friend, op, ts)), tester.WithTime(recordTime))
}

func (h *harness) friendsOf(user string) []string {
	s, _ := h.tt.TableValue(h.names.Table(friends.Group), user).(*friends.State)
	if s == nil {
		return nil
	}
	return s.Friends()
}

// check says how the tables or the sink differ from want (user -> friends).
func (h *harness) check(t *testing.T, want map[string][]string) {
	t.Helper()
	for u, fs := range want {
		if got := h.friendsOf(u); !slices.Equal(got, fs) {
			t.Fatalf("table: friends of %s = %v, want %v", u, got, fs)
		}
		for _, f := range fs {
			if !h.sink.pairs[[2]string{u, f}] {
				t.Fatalf("sink: %s has not %s as a friend", u, f)
			}
		}
	}
	for p, on := range h.sink.pairs {
		if on && !slices.Contains(want[p[0]], p[1]) {
			t.Fatalf("sink: %s has %s as a friend", p[0], p[1])
		}
	}
}

func TestEitherSideDecidesBothSides(t *testing.T) {
	h := newHarness(t)
	h.op("u1", "u2", "add", 10)
	h.check(t, map[string][]string{"u1": {"u2"}, "u2": {"u1"}})
	h.op("u2", "u1", "remove", 5) // older than the add: changes nothing
	h.check(t, map[string][]string{"u1": {"u2"}, "u2": {"u1"}})
	h.op("u2", "u1", "remove", 20)
	h.op("u3", "u1", "add", 21)
	h.check(t, map[string][]string{"u1": {"u3"}, "u2": nil, "u3": {"u1"}})
	// Opposite ops at the same ts, from either side: the removal wins on both.
	h.op("u1", "u4", "add", 30)
	h.op("u4", "u1", "remove", 30)
	h.op("u1", "u4", "add", 30)
	h.check(t, map[string][]string{"u1": {"u3"}, "u2": nil, "u3": {"u1"}, "u4": nil})
	if _, _, ok := h.dlq.Next(); ok {
		t.Fatal("a valid op was dead-lettered")
	}
}

// TestAddPastTheBoundIsRefusedOnBothSides: an add to a user who has MaxFriends friends is
// applied by the side that sent it, refused by the full side (a dead letter), and undone on
// the sender's side by the full side's reply. The redelivery of the input changes nothing;
// that of the loop record the full side refused is refused (and dead-lettered) again.
func TestAddPastTheBoundIsRefusedOnBothSides(t *testing.T) {
	h := newHarness(t)
	full := new(friends.State)
	for i := range friends.MaxFriends {
		full.Apply(friends.Op{Friend: fmt.Sprint("f", i), Add: true, TSMs: 1})
	}
	h.tt.SetTableValue(h.names.Table(friends.Group), "star", full)
	h.op("fan", "star", "add", 10)
	if got := h.friendsOf("fan"); len(got) != 0 {
		t.Fatalf("fan's friends %v", got)
	}
	if n := len(h.friendsOf("star")); n != friends.MaxFriends || slices.Contains(h.friendsOf("star"), "fan") {
		t.Fatalf("star has %d friends", n)
	}
	if on, ok := h.sink.pairs[[2]string{"fan", "star"}]; !ok || on {
		t.Fatal("the sink was not told that fan and star are not friends")
	}
	hdr, _, value, ok := h.dlq.NextRawWithHeaders()
	if !ok || !strings.Contains(string(hdr[topics.HeaderReason]), "already has 5000 friends") ||
		!strings.Contains(string(value), `"user_id":"fan","friend_id":"star","op":"add"`) {
		t.Fatalf("dead letter %q: %q", value, hdr[topics.HeaderReason])
	}
	h.op("fan", "star", "add", 10)
	if _, _, ok := h.dlq.Next(); ok {
		t.Fatal("the redelivered input was dead-lettered: the refusal was star's")
	}
	mirror := topics.FriendLoopRecord{Kind: topics.FriendMirror, Add: true, TSMs: recordTime.Add(-50 * time.Minute).UnixMilli(), Friend: "fan"}
	h.tt.Consume(string(h.names.Loop(friends.Group)), "star", mirror.Encode(), tester.WithTime(recordTime))
	if _, _, ok := h.dlq.Next(); !ok {
		t.Fatal("the redelivered refused loop record was not dead-lettered again")
	}
	if got := h.friendsOf("fan"); len(got) != 0 || slices.Contains(h.friendsOf("star"), "fan") {
		t.Fatalf("fan's friends after the redeliveries %v", got)
	}
	// Once star has room, a later add is applied on both sides.
	h.op("star", "f0", "remove", 11)
	h.op("fan", "star", "add", 12)
	if !slices.Equal(h.friendsOf("fan"), []string{"star"}) || !slices.Contains(h.friendsOf("star"), "fan") {
		t.Fatalf("after room was made: fan %v", h.friendsOf("fan"))
	}
}

func TestInvalidOpsGoToTheDeadLetterTopic(t *testing.T) {
	h := newHarness(t)
	for _, v := range []string{`{"user_id":"u1","friend_id":"u1","op":"add","ts":1796040000000}`, `nope`} {
		h.tt.Consume(string(h.names.Stream(topics.FriendsChanged)), "u1", []byte(v), tester.WithTime(recordTime))
		hdr, _, value, ok := h.dlq.NextRawWithHeaders()
		if !ok || string(value) != v || string(hdr[topics.HeaderSourceTopic]) != string(h.names.Stream(topics.FriendsChanged)) {
			t.Fatalf("%s: dead letter %q, %v", v, value, hdr)
		}
	}
	if h.sink.nils != 2 || len(h.sink.pairs) != 0 {
		t.Fatalf("sink: %d nils, pairs %v", h.sink.nils, h.sink.pairs)
	}
}
