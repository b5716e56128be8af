package api_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/service/api"
	"github.com/rankstream/rankstream/internal/testenv"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
)

// TestGenericBoardEndpoints: a sharded declared board and the steps board answer through
// GET /v1/boards/{board} and /v1/boards/{board}/members/{member}: pages, ranks, neighbours,
// period and period_end, scopes, and the refusals (deep offsets, unknown boards and periods,
// members not on the board).
func TestGenericBoardEndpoints(t *testing.T) {
	rdb := testenv.Redis(t)
	bs, err := board.NewBoards([]board.Spec{{Name: "arena", Periods: []string{"d", "total"}, TZ: "Asia/Shanghai", Shards: "8"}})
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, api.New(rsredis.NewBatchedReader(rdb), slog.New(slog.NewTextHandler(io.Discard, nil)), api.WithBoards(bs)))
	seed(t, rdb, 30) // the steps board of 2026-11-30

	// 1,200 members on arena's total board, global and (every third) scope eu: member
	// a%04d has score 5*(1200-i)/5... ties in groups of five broken by reach time, then id.
	const n = 1200
	type row struct {
		member         string
		score, reached int64
	}
	var want []row
	var writes []rsredis.BoardWrite
	total := rsredis.BoardRef{Board: "arena", Period: board.PeriodTotal, Shards: 8}
	for i := range n {
		r := row{fmt.Sprintf("a%04d", i), int64((n - i) / 5), int64(1000 + i%3)}
		want = append(want, r)
		writes = append(writes, rsredis.BoardWrite{Ref: total, Member: r.member, Present: true, Score: r.score, ReachedMs: r.reached})
		if i%3 == 0 {
			eu := total
			eu.Scope = "eu"
			writes = append(writes, rsredis.BoardWrite{Ref: eu, Member: r.member, Present: true, Score: r.score, ReachedMs: r.reached})
		}
	}
	if err := rsredis.NewBoardWriter(rdb).Write(context.Background(), writes); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(want, func(a, b row) int {
		switch {
		case a.score != b.score:
			return int(b.score - a.score)
		case a.reached != b.reached:
			return int(a.reached - b.reached)
		case a.member < b.member:
			return -1
		}
		return 1
	})
	rankOf := map[string]int{}
	for i, r := range want {
		rankOf[r.member] = i + 1
	}

	for _, c := range []struct{ offset, limit int }{{0, 20}, {0, 100}, {517, 33}, {1000, 100}, {999, 1}} {
		var p api.BoardPage
		get(t, srv, fmt.Sprintf("/v1/boards/arena?period=total&offset=%d&limit=%d", c.offset, c.limit), http.StatusOK, &p)
		if p.Board != "arena" || p.Period != "total" || p.Scope != "global" || p.PeriodEnd != nil || p.Total != n || p.Offset != c.offset || len(p.Items) != c.limit {
			t.Fatalf("page %+v: %+v", c, p)
		}
		for k, e := range p.Items {
			w := want[c.offset+k]
			if e.Rank != int64(c.offset+k+1) || e.Member != w.member || e.Score != w.score || e.ReachedAt.UnixMilli() != w.reached {
				t.Fatalf("page %+v item %d: %+v, want %+v", c, k, e, w)
			}
		}
	}
	var deep map[string]string
	get(t, srv, "/v1/boards/arena?offset=1001", http.StatusBadRequest, &deep)
	if deep["error"] == "" {
		t.Fatal("no reason for a deep page")
	}
	for _, m := range []string{want[0].member, want[1].member, want[600].member, want[n-1].member} {
		var st api.BoardStanding
		get(t, srv, "/v1/boards/arena/members/"+m+"?neighbors=3", http.StatusOK, &st)
		r := rankOf[m]
		if st.Member.Member != m || st.Member.Rank != int64(r) || st.Total != n || len(st.Above) != min(3, r-1) || len(st.Below) != min(3, n-r) {
			t.Fatalf("standing of %s (rank %d): %+v", m, r, st)
		}
		for k, e := range st.Above {
			if e.Member != want[r-1-len(st.Above)+k].member {
				t.Fatalf("above %s: %+v", m, st.Above)
			}
		}
	}
	var eu api.BoardPage
	get(t, srv, "/v1/boards/arena?period=total&scope=eu&limit=5", http.StatusOK, &eu)
	if eu.Total != n/3 || eu.Scope != "eu" || len(eu.Items) != 5 {
		t.Fatalf("scope eu: %+v", eu)
	}
	// The current day exists (empty) and says when it ends; a named one too.
	var d api.BoardPage
	get(t, srv, "/v1/boards/arena?period=d:20261130", http.StatusOK, &d)
	if d.Period != "d:20261130" || d.PeriodEnd == nil || !d.PeriodEnd.Equal(time.Date(2026, 11, 30, 16, 0, 0, 0, time.UTC)) || d.Total != 0 || d.Items == nil {
		t.Fatalf("day page: %+v", d)
	}
	get(t, srv, "/v1/boards/arena/members/nobody", http.StatusNotFound, nil)
	get(t, srv, "/v1/boards/nope", http.StatusNotFound, nil)
	get(t, srv, "/v1/boards/arena?period=h", http.StatusBadRequest, nil)

	// The steps board through the generic form (period d, scope global), and still through
	// its own.
	var sp api.BoardPage
	get(t, srv, "/v1/boards/steps?period=d:20261130&limit=3", http.StatusOK, &sp)
	if sp.Board != "steps" || sp.Period != "d:20261130" || sp.Scope != "global" || sp.Total != 30 || len(sp.Items) != 3 || sp.Items[0].Member != "m000" ||
		sp.PeriodEnd == nil || !sp.PeriodEnd.Equal(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)) {
		t.Fatalf("steps page: %+v", sp)
	}
	var sst api.BoardStanding
	get(t, srv, "/v1/boards/steps/members/m006?period=d:20261130&neighbors=1", http.StatusOK, &sst)
	if sst.Member.Rank != 6 || len(sst.Above) != 1 || sst.Above[0].Member != "m004" || sst.Below[0].Member != "m005" {
		t.Fatalf("steps standing: %+v", sst)
	}
	var legacy api.Page
	get(t, srv, "/v1/boards/steps?day=20261130&limit=3", http.StatusOK, &legacy)
	if legacy.Day != "20261130" || legacy.Total != 30 {
		t.Fatalf("steps legacy page: %+v", legacy)
	}
	get(t, srv, "/v1/boards/steps?period=d:20261130&day=20261130", http.StatusBadRequest, nil)
}
