package api

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/topics"
)

// The query strings of the read endpoints, parsed and validated by pure functions (the clock
// is passed in). The rules, also in docs/contract.md ("Query parameters"):
//   - a query string Go cannot parse (more than 10,000 parameters, a bad %-escape, a ';') is
//     refused, never read as if it were empty;
//   - a known parameter given more than once is refused; unknown parameters are ignored; an
//     empty value counts as absent;
//   - offset, limit, neighbors and k are ASCII decimal digits (no sign, no spaces); a value
//     above the parameter's cap is clamped to it (the contract's "capped"), at any length;
//   - day is YYYYMMDD, a real date from 2000-01-01 to two days after today (UTC);
//   - tz, when given, must be an IANA zone, also when day is given (then it changes nothing);
//   - region and member ids follow the rules of the inputs (topics.CheckRegion, CheckID).
//
// Errors are *apiError 400 with a short reason; a value they quote is cut to maxEcho bytes.

const (
	// maxEcho bounds the bytes of a request's value quoted in an error message.
	maxEcho = 64
	// firstDay is the earliest day a board can be asked for.
	firstDay = board.Day(20000101)
	// daysAhead is how many days after today's UTC date a board can be asked for: the local
	// date at UTC+14 is at most one day ahead; one more allows for clients' clocks.
	daysAhead = 2
)

// boardQuery is GET /v1/boards/steps?day=&tz=&region=&offset=&limit=.
type boardQuery struct {
	Day           board.Day
	Region        string // "": the global board
	Offset, Limit int
}

// memberQuery is GET /v1/boards/steps/members/{member}?day=&tz=&region=&neighbors=.
type memberQuery struct {
	Day       board.Day
	Region    string
	Member    string
	Neighbors int
}

// hotQuery is GET /v1/hot/search?k=.
type hotQuery struct{ K int }

func parseBoardQuery(raw string, now time.Time) (boardQuery, error) {
	p, err := parseParams(raw, "day", "tz", "region", "offset", "limit")
	if err != nil {
		return boardQuery{}, err
	}
	var q boardQuery
	if q.Day, q.Region, err = p.board(now); err != nil {
		return boardQuery{}, err
	}
	if q.Offset, err = p.count("offset", 0, MaxOffset); err != nil {
		return boardQuery{}, err
	}
	if q.Limit, err = p.count("limit", defaultLimit, MaxLimit); err != nil {
		return boardQuery{}, err
	}
	return q, nil
}

func parseMemberQuery(member, raw string, now time.Time) (memberQuery, error) {
	if err := topics.CheckID("member", member); err != nil {
		return memberQuery{}, invalid(err)
	}
	p, err := parseParams(raw, "day", "tz", "region", "neighbors")
	if err != nil {
		return memberQuery{}, err
	}
	q := memberQuery{Member: member}
	if q.Day, q.Region, err = p.board(now); err != nil {
		return memberQuery{}, err
	}
	if q.Neighbors, err = p.count("neighbors", 0, MaxNeighbors); err != nil {
		return memberQuery{}, err
	}
	return q, nil
}

func parseHotQuery(raw string) (hotQuery, error) {
	p, err := parseParams(raw, "k")
	if err != nil {
		return hotQuery{}, err
	}
	k, err := p.count("k", defaultHotK, MaxHotK)
	return hotQuery{K: k}, err
}

// params holds the non-empty values of an endpoint's known parameters (at most maxKnown).
type params struct {
	known []string
	vals  [maxKnown]string // vals[i] is known[i]'s value; "": absent
}

// maxKnown bounds the parameters an endpoint knows.
const maxKnown = 8

// maxPlainParams bounds the parameters of a query string that parseParams reads itself; one
// with more goes through url.ParseQuery, and so does one with an escape, a '+' or a ';', so
// that url.ParseQuery decides the limit on parameters and every error.
const maxPlainParams = 64

// get returns name's value and whether it is given (not empty); a parameter the endpoint
// does not know is absent.
func (p *params) get(name string) (string, bool) {
	if i := slices.Index(p.known, name); i >= 0 {
		return p.vals[i], p.vals[i] != ""
	}
	return "", false
}

// parseParams parses a raw query string strictly (see above) and keeps the known parameters.
// A plain query (no escape, '+' or ';', at most maxPlainParams parameters: what the pages and
// clients send) is split in place, without url.ParseQuery's map and slices: its keys and
// values are what url.ParseQuery would give (it unescapes only '%' and '+'), so the result is
// the same (TestParseParamsAsNetURL).
func parseParams(raw string, known ...string) (params, error) {
	if len(known) > maxKnown {
		panic("BUG: more than maxKnown parameters")
	}
	if strings.ContainsAny(raw, "%+;") || strings.Count(raw, "&") >= maxPlainParams {
		return parseParamsNetURL(raw, known)
	}
	p := params{known: known}
	var given [maxKnown]int
	for rest := raw; rest != ""; {
		var kv string
		kv, rest, _ = strings.Cut(rest, "&")
		k, v, _ := strings.Cut(kv, "=")
		if i := slices.Index(known, k); i >= 0 {
			given[i]++
			p.vals[i] = v
		}
	}
	for i, k := range known {
		if given[i] > 1 {
			return params{}, badRequest(k + ": given more than once")
		}
	}
	return p, nil
}

// parseParamsNetURL is parseParams through url.ParseQuery: any query string.
func parseParamsNetURL(raw string, known []string) (params, error) {
	all, err := url.ParseQuery(raw)
	if err != nil {
		return params{}, badRequest("query string: " + cut(err.Error(), 2*maxEcho))
	}
	p := params{known: known}
	for i, k := range known {
		switch vs := all[k]; {
		case len(vs) > 1:
			return params{}, badRequest(k + ": given more than once")
		case len(vs) == 1:
			p.vals[i] = vs[0]
		}
	}
	return p, nil
}

// board reads day, tz and region.
func (p *params) board(now time.Time) (board.Day, string, error) {
	loc := time.UTC
	if tz, ok := p.get("tz"); ok {
		var err error
		if loc, err = topics.LoadZone(tz); err != nil {
			return 0, "", badRequest("tz: unknown zone " + echo(tz))
		}
	}
	day := board.DayOf(now, loc)
	if v, ok := p.get("day"); ok {
		var err error
		if day, err = parseDay(v, now); err != nil {
			return 0, "", err
		}
	}
	region, _ := p.get("region")
	if region != "" {
		if err := topics.CheckRegion(region); err != nil {
			return 0, "", invalid(err)
		}
	}
	return day, region, nil
}

// parseDay accepts YYYYMMDD, a real date from firstDay to daysAhead after now's UTC date.
func parseDay(v string, now time.Time) (board.Day, error) {
	if len(v) != 8 || !digits(v) {
		return 0, badRequest("day: " + echo(v) + " is not YYYYMMDD")
	}
	d, err := board.ParseDay(v)
	if err != nil {
		return 0, badRequest("day: " + echo(v) + " is not a date")
	}
	if last := board.DayOf(now, time.UTC).AddDays(daysAhead); d < firstDay || d > last {
		return 0, badRequest(fmt.Sprintf("day: %s is outside %s..%s", v, firstDay, last))
	}
	return d, nil
}

// count reads a non-negative count: absent gives def, more than max gives max.
func (p *params) count(name string, def, max int) (int, error) {
	v, ok := p.get(name)
	if !ok {
		return def, nil
	}
	if !digits(v) {
		return 0, badRequest(name + ": " + echo(v) + " is not a non-negative integer")
	}
	n := 0
	for i := 0; i < len(v) && n <= max; i++ { // past max, the value no longer matters
		n = n*10 + int(v[i]-'0')
	}
	return min(n, max), nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// invalid turns a topics validation error into a 400 with its reason.
func invalid(err error) error {
	var ie *topics.InvalidError
	if errors.As(err, &ie) {
		return badRequest(cut(ie.Reason, 2*maxEcho))
	}
	return badRequest(cut(err.Error(), 2*maxEcho))
}

// echo quotes a request's value for an error message, cut to maxEcho bytes.
func echo(v string) string {
	if len(v) <= maxEcho {
		return strconv.Quote(v)
	}
	return fmt.Sprintf("%q... (%d bytes)", cut(v, maxEcho), len(v))
}

// cut returns at most n bytes of s, not splitting a UTF-8 sequence.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && i > n-utf8.UTFMax && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}
