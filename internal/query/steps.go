package query

import (
	"context"
	"errors"
	"fmt"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
	"net/http"
	"time"

	"github.com/rankstream/rankstream/internal/board"
	goredis "github.com/redis/go-redis/v9"
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

// stepsBoardKey is the Redis key of the day's board, global or of a region.
func stepsBoardKey(day board.Day, region string) string {
	if region == "" {
		return rsredis.StepsGlobalBoard(day)
	}
	return rsredis.StepsRegionBoard(region, day)
}

func (s *Server) stepsBoard(ctx context.Context, r *http.Request) (any, error) {
	q, err := parseBoardQuery(r.URL.RawQuery, time.Now())
	if err != nil {
		return nil, err
	}
	key := stepsBoardKey(q.Day, q.Region)
	pipe := s.rdb.Pipeline()
	total := pipe.ZCard(ctx, key)
	var rows *goredis.ZSliceCmd
	if q.Limit > 0 {
		rows = pipe.ZRevRangeWithScores(ctx, key, int64(q.Offset), int64(q.Offset+q.Limit-1))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("query: steps board %s: %w", key, err)
	}
	page := Page{Board: "steps", Day: q.Day.String(), Region: q.Region, Total: total.Val(), Offset: q.Offset, Items: []Entry{}}
	if rows != nil {
		page.Items = entries(q.Day, int64(q.Offset)+1, rows.Val())
	}
	return page, nil
}

func (s *Server) stepsMember(ctx context.Context, r *http.Request) (any, error) {
	q, err := parseMemberQuery(r.PathValue("member"), r.URL.RawQuery, time.Now())
	if err != nil {
		return nil, err
	}
	key, member, n := stepsBoardKey(q.Day, q.Region), q.Member, int64(q.Neighbors)
	pipe := s.rdb.Pipeline()
	rk := pipe.ZRevRank(ctx, key, member)
	total := pipe.ZCard(ctx, key)
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, goredis.Nil) {
		return nil, fmt.Errorf("query: steps member %s: %w", key, err)
	}
	if errors.Is(rk.Err(), goredis.Nil) {
		return nil, &apiError{http.StatusNotFound, "member " + echo(member) + " is not on board " + key}
	}
	pos := rk.Val()
	from := max(0, pos-n)
	rows, err := s.rdb.ZRevRangeWithScores(ctx, key, from, pos+n).Result()
	if err != nil {
		return nil, fmt.Errorf("query: steps member %s: %w", key, err)
	}
	all := entries(q.Day, from+1, rows)
	st := Standing{Board: "steps", Day: q.Day.String(), Region: q.Region, Total: total.Val(), Above: []Entry{}, Below: []Entry{}}
	for _, e := range all {
		switch {
		case e.Member == member:
			st.Member = e
		case st.Member.Member == "":
			st.Above = append(st.Above, e)
		default:
			st.Below = append(st.Below, e)
		}
	}
	if st.Member.Member == "" {
		// The board changed between the two reads; report what the rank read said.
		return nil, &apiError{http.StatusServiceUnavailable, "board changed during the read; retry"}
	}
	return st, nil
}

func entries(day board.Day, firstRank int64, rows []goredis.Z) []Entry {
	c := board.DayComposite(day)
	out := make([]Entry, len(rows))
	for i, z := range rows {
		score, reached := c.Decode(z.Score)
		m, _ := z.Member.(string)
		out[i] = Entry{Rank: firstRank + int64(i), Member: m, Score: score, ReachedAt: time.UnixMilli(reached).UTC()}
	}
	return out
}
