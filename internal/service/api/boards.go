package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/rankstream/rankstream/board"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
	"github.com/rankstream/rankstream/topics"
)

// BoardPage is a page of a board through the generic endpoint GET /v1/boards/{board}.
type BoardPage struct {
	Board  string `json:"board"`
	Period string `json:"period"` // with its id: "d:20261130", "season:s1", "total"
	Scope  string `json:"scope"`  // "global" or the scope
	// PeriodEnd is when the period ends (null for total), for the countdown on the page.
	PeriodEnd *time.Time `json:"period_end"`
	Total     int64      `json:"total"`
	Offset    int        `json:"offset"`
	Items     []Entry    `json:"items"`
	// itemsJSON is Items already written (encodedRows.items) when cut from a cached Top-100.
	itemsJSON []byte
	staleness
}

// BoardStanding is a member's place on a board through the generic endpoint GET
// /v1/boards/{board}/members/{member}.
type BoardStanding struct {
	Board     string     `json:"board"`
	Period    string     `json:"period"`
	Scope     string     `json:"scope"`
	PeriodEnd *time.Time `json:"period_end"`
	Member    Entry      `json:"member"`
	Above     []Entry    `json:"above"`
	Below     []Entry    `json:"below"`
	Total     int64      `json:"total"`
	staleness
}

// WithBoards makes the generic endpoints answer for the declared boards (the boards file), as
// well as for the daily steps board (board "steps"), which they always answer for.
func WithBoards(boards []*board.Board) Option {
	return func(s *Server) {
		for _, b := range boards {
			s.boards[b.Name] = b
		}
	}
}

// target is the board, period and scope a query resolved to.
type target struct {
	board, period, scope string
	end                  *time.Time
	ref                  rsredis.BoardRef // a declared board's
	day                  board.Day        // the steps board's
}

func (t target) page(top topPage, offset int) BoardPage {
	return BoardPage{Board: t.board, Period: t.period, Scope: t.scope, PeriodEnd: t.end, Total: top.total, Offset: offset, Items: top.rows,
		itemsJSON: top.itemsJSON, staleness: staleness{readAt: top.readAt}}
}

// resolve finds the board and the period of q at now: 404 for a board that is not declared,
// 400 for a period it does not keep or an id that names none of its periods, 404 for a
// current season when none holds now.
func (s *Server) resolve(name string, q scoreQuery, now time.Time) (target, error) {
	t := target{board: name, scope: topics.GlobalScope}
	if q.Scope != "" {
		t.scope = q.Scope
	}
	if name == board.StepsBoard {
		return t.steps(q, now)
	}
	if len(q.Steps) > 0 {
		return target{}, badRequest(strings.Join(q.Steps, ", ") + ": parameters of the steps board only; use period and scope")
	}
	b, ok := s.boards[name]
	if !ok {
		return target{}, &apiError{http.StatusNotFound, "board " + echo(name) + " is not declared"}
	}
	p := q.Period
	if p == "" {
		p = b.Periods[0]
		if b.Has(board.PeriodTotal) {
			p = board.PeriodTotal
		}
	}
	if !b.Has(p) {
		return target{}, badRequest(fmt.Sprintf("period: board %s keeps %s, not %s", name, periodList(b), p))
	}
	var w board.Window
	if q.PeriodID == "" {
		if w, ok = b.Window(p, now); !ok {
			return target{}, &apiError{http.StatusNotFound, "no season of board " + name + " holds the present; name one: period=season:<name>"}
		}
	} else if w, ok = b.WindowByID(p, q.PeriodID); !ok {
		return target{}, badRequest("period: " + echo(string(p)+":"+q.PeriodID) + " is not a period of board " + name + " (in its zone " + b.Zone.String() + ")")
	}
	t.period = string(p)
	if p != board.PeriodTotal {
		t.period += ":" + w.ID
		end := w.End.UTC()
		t.end = &end
	}
	t.ref = rsredis.BoardRef{Board: name, Period: p, PeriodID: w.ID, Scope: q.Scope, Shards: b.Shards}
	return t, nil
}

// steps resolves a generic query of the daily steps board: period d (a day from 2000-01-01 to
// two days after today, UTC; without an id, today in UTC), scope global or a region. Its day
// ends when the day ends in the zone that sees it last (UTC-12).
func (t target) steps(q scoreQuery, now time.Time) (target, error) {
	if len(q.Steps) > 0 {
		return target{}, badRequest(strings.Join(q.Steps, ", ") + ": not with period and scope; use period=d:YYYYMMDD and scope=<region>")
	}
	if q.Period != "" && q.Period != board.PeriodDay {
		return target{}, badRequest("period: board steps keeps d, not " + string(q.Period))
	}
	t.day = board.DayOf(now, time.UTC)
	if q.PeriodID != "" {
		var err error
		if t.day, err = parseDay(q.PeriodID, now); err != nil {
			return target{}, badRequest("period: " + strings.TrimPrefix(err.Error(), "day: "))
		}
	}
	t.period = "d:" + t.day.String()
	end := t.day.LastInstant().UTC()
	t.end = &end
	return t, nil
}

func periodList(b *board.Board) string {
	var ps []string
	for _, p := range b.Periods {
		ps = append(ps, string(p))
	}
	return strings.Join(ps, ", ")
}

// region is the steps board's region of a target ("" for global).
func (t target) region() string {
	if t.scope == topics.GlobalScope {
		return ""
	}
	return t.scope
}

func (s *Server) scoreBoard(ctx context.Context, r request) (any, error) {
	return s.boardPage(ctx, r.board, r)
}

func (s *Server) boardPage(ctx context.Context, name string, r request) (any, error) {
	q, err := parseScoreBoardQuery(r.query)
	if err != nil {
		return nil, err
	}
	t, err := s.resolve(name, q, time.Now())
	if err != nil {
		return nil, err
	}
	var top topPage
	if name == board.StepsBoard {
		top, err = s.stepsRows(ctx, t.day, t.region(), q.Offset, q.Limit)
	} else {
		top, err = s.pageRows(ctx, rsredis.ScoreBoardKey(t.ref, 0), q.Offset, q.Limit, func(ctx context.Context, offset, limit int) (int64, []rsredis.Ranked, error) {
			return s.store.BoardPage(ctx, t.ref, offset, limit)
		})
	}
	if err != nil {
		return nil, err
	}
	return t.page(top, q.Offset), nil
}

// topPage is a board's size and rows of one page.
type topPage struct {
	total  int64
	rows   []Entry   // never nil
	readAt time.Time // when the read from Redis started
	// enc is rows written as JSON, once per read from Redis (a Top-100 in the board cache, or
	// a read shared by coalesced requests); itemsJSON, on the page answered, is its rows' part
	// of it.
	enc       *encodedRows
	itemsJSON []byte
}

// pageRows returns the size of the board of key and its rows offset+1..offset+limit: those
// within the Top-100 of a hot board from the board cache, the others from read, shared by the
// identical page reads that arrive while one runs (s.pages). The rows are written as JSON
// once per read from Redis, not once per request that shares it.
func (s *Server) pageRows(ctx context.Context, key string, offset, limit int, read func(ctx context.Context, offset, limit int) (int64, []rsredis.Ranked, error)) (topPage, error) {
	load := func(ctx context.Context, offset, limit int) (topPage, error) {
		start := time.Now()
		total, rows, err := read(ctx, offset, limit)
		if err != nil {
			return topPage{}, fmt.Errorf("api: %w", err)
		}
		es := entries(rows)
		return topPage{total: total, rows: es, readAt: start, enc: encodeRows(es)}, nil
	}
	if offset+limit <= MaxLimit {
		top, ok, err := s.boardC.get(ctx, key, s.timeout, func(ctx context.Context) (topPage, error) {
			return load(ctx, 0, MaxLimit)
		})
		if ok {
			if err != nil {
				return topPage{}, err
			}
			return top.sub(offset, offset+limit), nil
		}
	}
	top, err := s.pages.do(ctx, key+"\x00"+strconv.Itoa(offset)+"\x00"+strconv.Itoa(limit), s.timeout, func(ctx context.Context) (topPage, error) {
		return load(ctx, offset, limit)
	})
	if err != nil {
		return topPage{}, err
	}
	return top.sub(0, len(top.rows)), nil
}

// sub returns the rows lo..hi-1 of a page read from Redis (within its rows), with their JSON.
// The rows and their JSON are shared (cached or coalesced): sub-slices, never written.
func (t topPage) sub(lo, hi int) topPage {
	lo, hi = min(lo, len(t.rows)), min(hi, len(t.rows))
	return topPage{total: t.total, rows: t.rows[lo:hi], readAt: t.readAt, itemsJSON: t.enc.items(lo, hi)}
}

// stepsRows is pageRows of a day's steps board.
func (s *Server) stepsRows(ctx context.Context, day board.Day, region string, offset, limit int) (topPage, error) {
	return s.pageRows(ctx, "steps\x00"+day.String()+"\x00"+region, offset, limit, func(ctx context.Context, offset, limit int) (int64, []rsredis.Ranked, error) {
		return s.store.StepsPage(ctx, day, region, offset, limit)
	})
}

func (s *Server) scoreMember(ctx context.Context, r request) (any, error) {
	return s.boardMember(ctx, r.board, r)
}

func (s *Server) boardMember(ctx context.Context, name string, r request) (any, error) {
	q, err := parseScoreMemberQuery(r.member, r.query)
	if err != nil {
		return nil, err
	}
	t, err := s.resolve(name, q, time.Now())
	if err != nil {
		return nil, err
	}
	var total int64
	var rows []rsredis.Ranked
	if name == board.StepsBoard {
		total, rows, err = s.store.StepsStanding(ctx, t.day, t.region(), q.Member, q.Neighbors)
	} else {
		total, rows, err = s.store.BoardStanding(ctx, t.ref, q.Member, q.Neighbors)
	}
	if err := standingError(err, q.Member, t.board+" "+t.period+" "+t.scope); err != nil {
		return nil, err
	}
	st := BoardStanding{Board: t.board, Period: t.period, Scope: t.scope, PeriodEnd: t.end, Total: total}
	st.Member, st.Above, st.Below = split(entries(rows), q.Member)
	return st, nil
}

// standingError maps a standing read's error: 404 when the member is not on the board.
func standingError(err error, member, boardName string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, rsredis.ErrNotRanked):
		return &apiError{http.StatusNotFound, "member " + echo(member) + " is not on board " + boardName}
	}
	return fmt.Errorf("api: %w", err)
}

// split separates a standing's rows (ascending rank) into the member's and those above and
// below it (never nil): sub-slices of rows, which must not be nil.
func split(rows []Entry, member string) (own Entry, above, below []Entry) {
	for i, e := range rows {
		if e.Member == member {
			return e, rows[:i:i], rows[i+1:]
		}
	}
	return own, rows, rows[len(rows):]
}
