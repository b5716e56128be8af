package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

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
}

func (s *Server) stepsBoard(ctx context.Context, r *http.Request) (any, error) {
	q, err := parseBoardQuery(r.URL.RawQuery, time.Now())
	if err != nil {
		return nil, err
	}
	total, rows, err := s.store.StepsPage(ctx, q.Day, q.Region, q.Offset, q.Limit)
	if err != nil {
		return nil, fmt.Errorf("api: %w", err)
	}
	return Page{Board: "steps", Day: q.Day.String(), Region: q.Region, Total: total, Offset: q.Offset, Items: entries(rows)}, nil
}

func (s *Server) stepsMember(ctx context.Context, r *http.Request) (any, error) {
	q, err := parseMemberQuery(r.PathValue("member"), r.URL.RawQuery, time.Now())
	if err != nil {
		return nil, err
	}
	total, rows, err := s.store.StepsStanding(ctx, q.Day, q.Region, q.Member, q.Neighbors)
	switch {
	case errors.Is(err, rsredis.ErrNotRanked):
		return nil, &apiError{http.StatusNotFound, "member " + echo(q.Member) + " is not on board " + rsredis.StepsBoard(q.Day, q.Region)}
	case errors.Is(err, rsredis.ErrBoardChanged):
		return nil, &apiError{http.StatusServiceUnavailable, rsredis.ErrBoardChanged.Error()}
	case err != nil:
		return nil, fmt.Errorf("api: %w", err)
	}
	st := Standing{Board: "steps", Day: q.Day.String(), Region: q.Region, Total: total, Above: []Entry{}, Below: []Entry{}}
	for _, e := range entries(rows) {
		switch {
		case e.Member == q.Member:
			st.Member = e
		case st.Member.Member == "":
			st.Above = append(st.Above, e)
		default:
			st.Below = append(st.Below, e)
		}
	}
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
