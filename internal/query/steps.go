package query

import (
	"errors"
	"net/http"
	"time"

	"github.com/rankstream/rankstream/internal/rank"
	"github.com/rankstream/rankstream/topics"
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

// stepsBoardKey reads day (yyyymmdd; default: today in tz, default UTC) and region.
func (s *Server) stepsBoardKey(r *http.Request) (key string, day rank.Day, region string, err error) {
	q := r.URL.Query()
	if v := q.Get("day"); v != "" {
		if day, err = rank.ParseDay(v); err != nil {
			return "", 0, "", badRequest(err.Error())
		}
	} else {
		loc := time.UTC
		if tz := q.Get("tz"); tz != "" {
			if loc, err = topics.LoadZone(tz); err != nil {
				return "", 0, "", badRequest(err.Error())
			}
		}
		day = rank.DayOf(time.Now(), loc)
	}
	region = q.Get("region")
	if region == "" {
		return rank.StepsGlobalBoard(day), day, "", nil
	}
	return rank.StepsRegionBoard(region, day), day, region, nil
}

func (s *Server) stepsBoard(r *http.Request) (any, error) {
	key, day, region, err := s.stepsBoardKey(r)
	if err != nil {
		return nil, err
	}
	offset, err := intParam(r, "offset", 0, MaxOffset)
	if err != nil {
		return nil, err
	}
	limit, err := intParam(r, "limit", defaultLimit, MaxLimit)
	if err != nil {
		return nil, err
	}
	ctx := r.Context()
	pipe := s.rdb.Pipeline()
	total := pipe.ZCard(ctx, key)
	var rows *goredis.ZSliceCmd
	if limit > 0 {
		rows = pipe.ZRevRangeWithScores(ctx, key, int64(offset), int64(offset+limit-1))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, err
	}
	page := Page{Board: "steps", Day: day.String(), Region: region, Total: total.Val(), Offset: offset, Items: []Entry{}}
	if rows != nil {
		page.Items = entries(day, int64(offset)+1, rows.Val())
	}
	return page, nil
}

func (s *Server) stepsMember(r *http.Request) (any, error) {
	key, day, region, err := s.stepsBoardKey(r)
	if err != nil {
		return nil, err
	}
	n, err := intParam(r, "neighbors", 0, MaxNeighbors)
	if err != nil {
		return nil, err
	}
	member := r.PathValue("member")
	ctx := r.Context()
	pipe := s.rdb.Pipeline()
	rk := pipe.ZRevRank(ctx, key, member)
	total := pipe.ZCard(ctx, key)
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, goredis.Nil) {
		return nil, err
	}
	if errors.Is(rk.Err(), goredis.Nil) {
		return nil, &apiError{http.StatusNotFound, "member " + member + " is not on board " + key}
	}
	pos := rk.Val()
	from := max(0, pos-int64(n))
	rows, err := s.rdb.ZRevRangeWithScores(ctx, key, from, pos+int64(n)).Result()
	if err != nil {
		return nil, err
	}
	all := entries(day, from+1, rows)
	st := Standing{Board: "steps", Day: day.String(), Region: region, Total: total.Val(), Above: []Entry{}, Below: []Entry{}}
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

func entries(day rank.Day, firstRank int64, rows []goredis.Z) []Entry {
	c := rank.DayComposite(day)
	out := make([]Entry, len(rows))
	for i, z := range rows {
		score, reached := c.Decode(z.Score)
		m, _ := z.Member.(string)
		out[i] = Entry{Rank: firstRank + int64(i), Member: m, Score: score, ReachedAt: time.UnixMilli(reached).UTC()}
	}
	return out
}
