package api

import (
	"context"
	"time"

	"github.com/rankstream/rankstream/board"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
)

// Entry is one row of a board.
type Entry struct {
	Rank   int64  `json:"rank"`
	Member string `json:"member"`
	Score  int64  `json:"score"`
	// ReachedAt is when the member reached the score (the tie-breaker).
	ReachedAt time.Time `json:"reached_at"`
}

// Page is a slice of a board.
type Page struct {
	Board  string  `json:"board"`
	Day    string  `json:"day"`
	Region string  `json:"region,omitempty"`
	Total  int64   `json:"total"`
	Offset int     `json:"offset"`
	Items  []Entry `json:"items"`
	// itemsJSON is Items already written (encodedRows.items) when cut from a cached Top-100.
	itemsJSON []byte
	staleness
}

// Standing is a member's place on a board with its neighbours.
type Standing struct {
	Board  string  `json:"board"`
	Day    string  `json:"day"`
	Region string  `json:"region,omitempty"`
	Member Entry   `json:"member"`
	Above  []Entry `json:"above"`
	Below  []Entry `json:"below"`
	Total  int64   `json:"total"`
	staleness
}

// stepsBoard answers GET /v1/boards/steps: with period or scope, as the generic endpoint does.
func (s *Server) stepsBoard(ctx context.Context, r request) (any, error) {
	if isGeneric(r.query) {
		return s.boardPage(ctx, board.StepsBoard, r)
	}
	q, err := parseBoardQuery(r.query, time.Now())
	if err != nil {
		return nil, err
	}
	top, err := s.stepsRows(ctx, q.Day, q.Region, q.Offset, q.Limit)
	if err != nil {
		return nil, err
	}
	return Page{Board: "steps", Day: q.Day.String(), Region: q.Region, Total: top.total, Offset: q.Offset, Items: top.rows,
		itemsJSON: top.itemsJSON, staleness: staleness{readAt: top.readAt}}, nil
}

// stepsMember answers GET /v1/boards/steps/members/{member}: with period or scope, as the
// generic endpoint does.
func (s *Server) stepsMember(ctx context.Context, r request) (any, error) {
	if isGeneric(r.query) {
		return s.boardMember(ctx, board.StepsBoard, r)
	}
	q, err := parseMemberQuery(r.member, r.query, time.Now())
	if err != nil {
		return nil, err
	}
	total, rows, err := s.store.StepsStanding(ctx, q.Day, q.Region, q.Member, q.Neighbors)
	if err := standingError(err, q.Member, rsredis.StepsBoard(q.Day, q.Region)); err != nil {
		return nil, err
	}
	st := Standing{Board: "steps", Day: q.Day.String(), Region: q.Region, Total: total}
	st.Member, st.Above, st.Below = split(entries(rows), q.Member)
	return st, nil
}

// entries converts board rows to the API's; never nil.
func entries(rows []rsredis.Ranked) []Entry {
	out := make([]Entry, len(rows))
	for i, r := range rows {
		out[i] = Entry{Rank: r.Rank, Member: r.Member, Score: r.Score, ReachedAt: time.UnixMilli(r.ReachedMs).UTC()}
	}
	return out
}
