package api

import (
	"container/heap"
	"context"
	"fmt"
	"time"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/topics"
)

// FriendsBoard is a viewer's friends board: the viewer and their friends ranked on a board,
// GET /v1/friends/{user}/steps and /v1/friends/{user}/boards/{board}.
type FriendsBoard struct {
	User   string `json:"user"`
	Board  string `json:"board"`
	Period string `json:"period"` // with its id: "d:20261130", "total"
	// Total counts the viewer and every friend, with a value or not.
	Total int           `json:"total"`
	Items []FriendEntry `json:"items"`
	// Me is the viewer's own row, also when it is beyond the page; without a value it has
	// score 0 and the rank it has among those without one.
	Me FriendEntry `json:"me"`
}

// FriendEntry is one row of a friends board. ReachedAt is null for a member without a value
// on the board's period (ranked after every member with one, by id, with score 0).
type FriendEntry struct {
	Rank      int64      `json:"rank"`
	Member    string     `json:"member"`
	Score     int64      `json:"score"`
	ReachedAt *time.Time `json:"reached_at"`
}

// friendsSteps answers GET /v1/friends/{user}/steps?day=&tz=&limit=: the day's steps of the
// viewer and their friends (the day as the steps board reads it).
func (s *Server) friendsSteps(ctx context.Context, r request) (any, error) {
	user := r.user
	if err := topics.CheckID("user", user); err != nil {
		return nil, invalid(err)
	}
	p, err := parseParams(r.query, "day", "tz", "limit")
	if err != nil {
		return nil, err
	}
	day, _, err := p.board(time.Now())
	if err != nil {
		return nil, err
	}
	limit, err := p.count("limit", defaultLimit, MaxLimit)
	if err != nil {
		return nil, err
	}
	return s.friendsBoard(ctx, user, target{board: board.StepsBoard, period: "d:" + day.String(), day: day}, limit)
}

// friendsOfBoard answers GET /v1/friends/{user}/boards/{board}?period=&limit=: any declared
// board (and steps), its period resolved as the board endpoints resolve it; the global board.
func (s *Server) friendsOfBoard(ctx context.Context, r request) (any, error) {
	user := r.user
	if err := topics.CheckID("user", user); err != nil {
		return nil, invalid(err)
	}
	p, err := parseParams(r.query, "period", "limit")
	if err != nil {
		return nil, err
	}
	q, err := p.score()
	if err != nil {
		return nil, err
	}
	limit, err := p.count("limit", defaultLimit, MaxLimit)
	if err != nil {
		return nil, err
	}
	t, err := s.resolve(r.board, q, time.Now())
	if err != nil {
		return nil, err
	}
	return s.friendsBoard(ctx, user, t, limit)
}

// friendsBoard reads the viewer's friends (SMEMBERS), then the values of the viewer and every
// friend on t in pipelined batches (one more round trip), and ranks them with the boards'
// order (board.Compare): the first limit rows by a partial sort, and the viewer's rank.
func (s *Server) friendsBoard(ctx context.Context, user string, t target, limit int) (FriendsBoard, error) {
	friends, err := s.store.Friends(ctx, user)
	if err != nil {
		return FriendsBoard{}, fmt.Errorf("api: %w", err)
	}
	members := make([]string, 0, len(friends)+1)
	for _, f := range friends {
		if f != user { // a friend set never holds its user; a foreign writer might
			members = append(members, f)
		}
	}
	members = append(members, user)
	var st []board.Standing
	if t.board == board.StepsBoard {
		st, err = s.store.StepsStandings(ctx, t.day, members)
	} else {
		st, err = s.store.BoardStandings(ctx, t.ref, members)
	}
	if err != nil {
		return FriendsBoard{}, fmt.Errorf("api: %w", err)
	}
	me := st[len(st)-1]
	rank := int64(1)
	for _, x := range st[:len(st)-1] {
		if board.Compare(x, me) < 0 {
			rank++
		}
	}
	top := topStandings(st, limit)
	out := FriendsBoard{User: user, Board: t.board, Period: t.period, Total: len(st), Items: make([]FriendEntry, len(top)),
		Me: friendEntry(rank, me)}
	for i, x := range top {
		out.Items[i] = friendEntry(int64(i+1), x)
	}
	return out, nil
}

func friendEntry(rank int64, st board.Standing) FriendEntry {
	e := FriendEntry{Rank: rank, Member: st.Member, Score: st.Score}
	if st.Present {
		at := time.UnixMilli(st.ReachedMs).UTC()
		e.ReachedAt = &at
	}
	return e
}

// topStandings returns the first k standings in board order: a heap of the k best so far
// (the worst of them on top), O(n log k).
func topStandings(all []board.Standing, k int) []board.Standing {
	h := worstFirst(make([]board.Standing, 0, min(k, len(all))))
	for _, x := range all {
		switch {
		case k == 0:
		case len(h) < k:
			heap.Push(&h, x)
		case board.Compare(x, h[0]) < 0:
			h[0] = x
			heap.Fix(&h, 0)
		}
	}
	out := make([]board.Standing, len(h))
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&h).(board.Standing)
	}
	return out
}

// worstFirst is a heap whose top is the standing ranked last.
type worstFirst []board.Standing

func (h worstFirst) Len() int           { return len(h) }
func (h worstFirst) Less(i, j int) bool { return board.Compare(h[i], h[j]) > 0 }
func (h worstFirst) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *worstFirst) Push(x any)        { *h = append(*h, x.(board.Standing)) }
func (h *worstFirst) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
