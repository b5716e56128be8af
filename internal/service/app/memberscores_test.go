package app_test

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/e2e"
	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/service/app"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/processors/scores"
	"github.com/rankstream/rankstream/topics"
)

// TestMemberScoresFollowTheChangelog: on the real broker and kfake, the states a scores
// table's changelog holds (each member's state after each of its ops, ops out of ts order,
// a delete and a comeback) reach ClickHouse's board_member_scores as each member's latest
// entries, one row per board, period and member under FINAL; a second writer of the same
// group after a restart adds nothing visible.
func TestMemberScoresFollowTheChangelog(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		kc := kafka.Config{Brokers: brokers, Partitions: 2, Names: topics.Names{Prefix: testenv.UniqueName(t, "totals") + "."}}
		cl := e2e.KafkaClient(t, kc)
		h := e2e.NewHistory(t)
		sink, conn := h.Sink, h.Conn

		b, err := board.NewBoard(board.Spec{Name: "arena", Periods: []string{"h", "d", "total"}, TZ: "Europe/Paris"})
		if err != nil {
			t.Fatal(err)
		}
		rec := time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC)
		rng := rand.New(rand.NewPCG(3, 5))
		states := map[string]*scores.State{}
		for i := range 600 {
			m := fmt.Sprintf("m%02d", rng.IntN(40))
			s := states[m]
			if s == nil {
				s = &scores.State{}
				states[m] = s
			}
			op := scores.Op{RequestHash: uint64(i + 1), Member: m, Kind: scores.Incr, Score: int64(rng.IntN(21) - 5),
				TSMs: rec.Add(-time.Duration(rng.IntN(30)) * time.Hour).UnixMilli(), Scope: []string{"", "eu", "us"}[rng.IntN(3)]}
			switch rng.IntN(20) {
			case 0:
				op.Kind = scores.Delete
			case 1:
				op.Kind = scores.Set
			}
			if _, err := s.Apply(b, op, rec.UnixMilli(), time.Minute); err != nil {
				t.Fatal(err)
			}
			v, err := s.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: string(kc.Names.Table(scores.Group)), Key: []byte(m), Value: v}); err != nil {
				t.Fatal(err)
			}
		}
		type row struct {
			Period  string `ch:"period"`
			Member  string `ch:"member"`
			Score   int64  `ch:"score"`
			Ms      int64  `ch:"reached_ms"`
			Scope   string `ch:"scope"`
			Deleted uint8  `ch:"deleted"`
		}
		var want []row
		for m, s := range states {
			for _, bs := range s.Boards {
				for _, e := range bs.Entries {
					p := "total"
					if e.Period != board.PeriodTotal {
						p = string(e.Period) + ":" + e.ID
					}
					d := uint8(0)
					if !e.Present {
						d = 1
					}
					want = append(want, row{p, m, e.Score, e.ReachedMs, e.Scope, d})
				}
			}
		}
		slices.SortFunc(want, func(a, b row) int { return cmp.Or(cmp.Compare(a.Period, b.Period), cmp.Compare(a.Member, b.Member)) })
		matches := func() bool {
			var got []row
			if err := conn.Select(ctx, &got, "SELECT period, member, score, reached_ms, scope, deleted FROM board_member_scores FINAL WHERE board = 'arena' ORDER BY period, member"); err != nil {
				t.Fatal(err)
			}
			return slices.Equal(got, want)
		}
		log := slog.New(slog.DiscardHandler)
		for run := range 2 { // the second run starts from the committed offsets: nothing to do
			runCtx, stop := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { done <- scores.RunTotals(runCtx, kc, app.MemberScores{Sink: sink}, log) }()
			testenv.WaitFor(t, time.Minute, fmt.Sprintf("run %d: board_member_scores equal the members' latest entries (%d rows)", run, len(want)), matches)
			stop()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
	})
}
