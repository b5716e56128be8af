package api_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/service/api"
	"github.com/rankstream/rankstream/internal/testenv"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
)

// TestFriendsBoards: the viewer and their friends ranked on the day's steps and on a sharded
// declared board: higher value first, ties by the earlier reach, then by id; members without
// a value last, by id, with score 0 and no reach time; the viewer's own row in "me" whether on
// the page or not, with a value or not; total counts everyone; and the refusals.
func TestFriendsBoards(t *testing.T) {
	rdb := testenv.Redis(t)
	bs, err := board.NewBoards([]board.Spec{{Name: "arena", Periods: []string{"total"}, TZ: "UTC", Shards: "4"}})
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, api.New(rsredis.NewBatchedReader(rdb), slog.New(slog.NewTextHandler(io.Discard, nil)), api.WithBoards(bs)))
	ctx := context.Background()
	seed(t, rdb, 30) // steps of 2026-11-30: m000 first ... m029 last; m005 and m006 tie, m006 reached first
	ref := rsredis.BoardRef{Board: "arena", Period: board.PeriodTotal, Shards: 4}
	var writes []rsredis.BoardWrite
	for i := range 30 {
		writes = append(writes, rsredis.BoardWrite{Ref: ref, Member: fmt.Sprintf("m%03d", i), Present: true, Score: int64(i % 7), ReachedMs: int64(1000 + i%2)})
	}
	if err := rsredis.NewBoardWriter(rdb).Write(ctx, writes); err != nil {
		t.Fatal(err)
	}
	// m010's friends: every odd member, and two without a value anywhere.
	friendsOf := []any{"zz-none", "aa-none"}
	for i := 1; i < 30; i += 2 {
		friendsOf = append(friendsOf, fmt.Sprintf("m%03d", i))
	}
	if err := rdb.SAdd(ctx, rsredis.FriendsKey("m010"), friendsOf...).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.SAdd(ctx, rsredis.FriendsKey("ghost"), "m003", "m010").Err(); err != nil {
		t.Fatal(err)
	}

	type row struct {
		member         string
		score, reached int64
		present        bool
	}
	// truth ranks rows as the contract says, independently of the code under test.
	truth := func(rows []row) []row {
		slices.SortFunc(rows, func(a, b row) int {
			switch {
			case a.present != b.present:
				if a.present {
					return -1
				}
				return 1
			case a.present && a.score != b.score:
				return int(b.score - a.score)
			case a.present && a.reached != b.reached:
				return int(a.reached - b.reached)
			}
			return strings.Compare(a.member, b.member)
		})
		return rows
	}
	steps := func(members ...string) []row {
		var rows []row
		for _, m := range members {
			var i int
			if _, err := fmt.Sscanf(m, "m%03d", &i); err != nil {
				rows = append(rows, row{member: m})
				continue
			}
			st, reached := int64(10*(30-i)), day.FirstInstant().UnixMilli()+3600_000+int64(i)
			switch i {
			case 5:
				reached = day.FirstInstant().UnixMilli() + 3600_000 + 100
			case 6:
				st, reached = 10*25, day.FirstInstant().UnixMilli()+3600_000+50
			}
			rows = append(rows, row{m, st, reached, true})
		}
		return truth(rows)
	}
	arena := func(members ...string) []row {
		var rows []row
		for _, m := range members {
			var i int
			if _, err := fmt.Sscanf(m, "m%03d", &i); err != nil {
				rows = append(rows, row{member: m})
				continue
			}
			rows = append(rows, row{m, int64(i % 7), int64(1000 + i%2), true})
		}
		return truth(rows)
	}
	everyone := func(viewer string, fs ...any) []string {
		out := []string{viewer}
		for _, f := range fs {
			out = append(out, f.(string))
		}
		return out
	}
	check := func(path, viewer, boardName, period string, limit int, want []row) {
		t.Helper()
		var fb api.FriendsBoard
		get(t, srv, path, http.StatusOK, &fb)
		if fb.User != viewer || fb.Board != boardName || fb.Period != period || fb.Total != len(want) || len(fb.Items) != min(limit, len(want)) {
			t.Fatalf("GET %s: %+v, want %d of %d rows", path, fb, min(limit, len(want)), len(want))
		}
		same := func(e api.FriendEntry, rank int, w row) bool {
			ok := e.Rank == int64(rank) && e.Member == w.member && e.Score == w.score && (e.ReachedAt != nil) == w.present
			return ok && (!w.present || e.ReachedAt.UnixMilli() == w.reached)
		}
		for i, e := range fb.Items {
			if !same(e, i+1, want[i]) {
				t.Fatalf("GET %s: item %d = %+v, want %+v", path, i, e, want[i])
			}
		}
		me := slices.IndexFunc(want, func(r row) bool { return r.member == viewer })
		if !same(fb.Me, me+1, want[me]) {
			t.Fatalf("GET %s: me = %+v, want %+v at rank %d", path, fb.Me, want[me], me+1)
		}
	}
	all := steps(everyone("m010", friendsOf...)...)
	check("/v1/friends/m010/steps?day=20261130&limit=5", "m010", "steps", "d:20261130", 5, all) // m010 beyond the page
	check("/v1/friends/m010/steps?day=20261130&limit=100", "m010", "steps", "d:20261130", 100, all)
	check("/v1/friends/m010/steps?day=20261130", "m010", "steps", "d:20261130", 20, all) // the default limit
	check("/v1/friends/m010/boards/steps?period=d:20261130&limit=3", "m010", "steps", "d:20261130", 3, all)
	check("/v1/friends/ghost/steps?day=20261130&limit=1", "ghost", "steps", "d:20261130", 1, steps("ghost", "m003", "m010"))
	check("/v1/friends/lonely/steps?day=20261130", "lonely", "steps", "d:20261130", 20, steps("lonely"))
	check("/v1/friends/m010/steps?day=20261201", "m010", "steps", "d:20261201", 20, truth(func() []row {
		var rows []row
		for _, m := range everyone("m010", friendsOf...) {
			rows = append(rows, row{member: m})
		}
		return rows
	}()))
	check("/v1/friends/m010/boards/arena?limit=7", "m010", "arena", "total", 7, arena(everyone("m010", friendsOf...)...))
	check("/v1/friends/ghost/boards/arena?period=total&limit=0", "ghost", "arena", "total", 0, arena("ghost", "m003", "m010"))

	for path, code := range map[string]int{
		"/v1/friends/m%20010/steps":              http.StatusBadRequest,
		"/v1/friends/m010/steps?day=2026-11-30":  http.StatusBadRequest,
		"/v1/friends/m010/steps?limit=-1":        http.StatusBadRequest,
		"/v1/friends/m010/boards/nope":           http.StatusNotFound,
		"/v1/friends/m010/boards/arena?period=d": http.StatusBadRequest,
	} {
		get(t, srv, path, code, nil)
	}
}
