package api

import (
	"errors"
	"strings"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/topics"
)

// The query strings of the generic board endpoints, GET /v1/boards/{board}?period=&scope=
// &offset=&limit= and GET /v1/boards/{board}/members/{member}?period=&scope=&neighbors=, parsed
// with the rules of params.go, and these:
//   - period is one of h, d, w, m, season, total, optionally followed by ':' and an id
//     (d:20261130, h:2026113008, w:2026W49, m:202611, season:s1), read by board.ParsePeriod;
//     without an id, the current one in the board's zone; absent, the board's default period
//     (total if it keeps it, else the first it keeps; d for steps). Whether the board keeps
//     it and the id names one of its periods is checked against the board (resolve);
//   - scope is "global" (the default) or a scope (topics.CheckScope);
//   - offset above MaxOffset is refused (not clamped: members beyond rank MaxOffset read their
//     own standing with its neighbours instead); limit and neighbors are clamped to their caps.

// scoreQuery is a generic board or member query.
type scoreQuery struct {
	Period   board.Period // "": the board's default
	PeriodID string       // "": the current one
	Scope    string       // "": the global board
	// Steps are the steps endpoints' own parameters (day, tz, region) when given: refused on
	// the generic form.
	Steps     []string
	Member    string
	Offset    int
	Limit     int
	Neighbors int
}

// genericKeys are the parameters that make a request to the steps endpoints generic.
var genericKeys = []string{"period", "scope"}

func parseScoreBoardQuery(raw string) (scoreQuery, error) {
	p, err := parseParams(raw, "period", "scope", "offset", "limit", "day", "tz", "region")
	if err != nil {
		return scoreQuery{}, err
	}
	q, err := p.score()
	if err != nil {
		return scoreQuery{}, err
	}
	if q.Offset, err = p.count("offset", 0, MaxOffset+1); err != nil {
		return scoreQuery{}, err
	}
	if q.Offset > MaxOffset {
		v, _ := p.get("offset")
		return scoreQuery{}, badRequest("offset: " + echo(v) + " is beyond 1000; a member beyond rank 1000 reads its own rank and neighbours at /v1/boards/{board}/members/{member}")
	}
	if q.Limit, err = p.count("limit", defaultLimit, MaxLimit); err != nil {
		return scoreQuery{}, err
	}
	return q, nil
}

func parseScoreMemberQuery(member, raw string) (scoreQuery, error) {
	if err := topics.CheckID("member", member); err != nil {
		return scoreQuery{}, invalid(err)
	}
	p, err := parseParams(raw, "period", "scope", "neighbors", "day", "tz", "region")
	if err != nil {
		return scoreQuery{}, err
	}
	q, err := p.score()
	if err != nil {
		return scoreQuery{}, err
	}
	q.Member = member
	if q.Neighbors, err = p.count("neighbors", 0, MaxNeighbors); err != nil {
		return scoreQuery{}, err
	}
	return q, nil
}

// score reads period and scope, and notes the steps endpoints' own parameters.
func (p *params) score() (scoreQuery, error) {
	var q scoreQuery
	for _, k := range []string{"day", "tz", "region"} {
		if _, ok := p.get(k); ok {
			q.Steps = append(q.Steps, k)
		}
	}
	if v, ok := p.get("period"); ok {
		kind, id, err := board.ParsePeriod(v)
		switch {
		case errors.Is(err, board.ErrPeriodKind):
			return scoreQuery{}, badRequest("period: " + echo(v) + " is none of h, d, w, m, season, total (optionally :id)")
		case err != nil:
			return scoreQuery{}, badRequest("period: the id in " + echo(v) + " is not [A-Za-z0-9_-]{1,64}")
		}
		q.Period, q.PeriodID = kind, id
	}
	if v, ok := p.get("scope"); ok && v != topics.GlobalScope {
		if err := topics.CheckScope(v); err != nil {
			return scoreQuery{}, invalid(err)
		}
		q.Scope = v
	}
	return q, nil
}

// isGeneric tells whether a request to a steps endpoint uses the generic form (names period
// or scope). A query string that does not parse is not: the steps endpoint refuses it.
func isGeneric(raw string) bool {
	if !strings.Contains(raw, "period") && !strings.Contains(raw, "scope") && !strings.Contains(raw, "%") {
		return false // names neither, even escaped: no need to parse it (the steps endpoint does)
	}
	p, err := parseParams(raw, genericKeys...)
	if err != nil {
		return false
	}
	_, period := p.get("period")
	_, scope := p.get("scope")
	return period || scope
}
