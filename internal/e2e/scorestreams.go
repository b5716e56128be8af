package e2e

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// ScoreBoard is a board of the score tests, described by the tests' own code (ScoreBoardsYAML
// writes it as a boards file).
type ScoreBoard struct {
	Name    string
	Periods []string // of h, d, w, m, season, total
	Zone    *time.Location
	Seasons []ScoreSeason
	Shards  int
}

// ScoreSeason is a season of a board: local dates [Start, End).
type ScoreSeason struct {
	Name       string
	Start, End time.Time // local midnights in the board's zone
}

// ScoreMaxScore is the largest score of a board (2^47), by the tests' own count.
const ScoreMaxScore = int64(1) << 47

// ScoreBoards returns the boards of the score tests around monday (a Monday, 00:00 UTC): one in
// Asia/Shanghai (h, d, w, total; 4 shards), one in America/New_York (d, w, m, total), one in
// UTC whose two seasons meet at monday (season, total; 3 shards). Retention 30 days.
func ScoreBoards(monday time.Time) []ScoreBoard {
	zone := func(name string) *time.Location {
		loc, err := time.LoadLocation(name)
		if err != nil {
			panic(err)
		}
		return loc
	}
	return []ScoreBoard{
		{Name: "arena", Periods: []string{"h", "d", "w", "total"}, Zone: zone("Asia/Shanghai"), Shards: 4},
		{Name: "ladder", Periods: []string{"d", "w", "m", "total"}, Zone: zone("America/New_York"), Shards: 1},
		{Name: "cup", Periods: []string{"season", "total"}, Zone: time.UTC, Shards: 3, Seasons: []ScoreSeason{
			{"s1", monday.AddDate(0, 0, -7), monday}, {"s2", monday, monday.AddDate(0, 0, 7)}}},
	}
}

// ScoreBoardsYAML writes boards as a boards file.
func ScoreBoardsYAML(boards []ScoreBoard) string {
	var b strings.Builder
	b.WriteString("boards:\n")
	for _, x := range boards {
		fmt.Fprintf(&b, "  - name: %s\n    periods: [%s]\n    tz: %s\n    retention: 30d\n    shards: %d\n",
			x.Name, strings.Join(x.Periods, ", "), x.Zone, x.Shards)
		if len(x.Seasons) > 0 {
			b.WriteString("    seasons:\n")
			for _, s := range x.Seasons {
				fmt.Fprintf(&b, "      - {name: %s, start: %s, end: %s}\n", s.Name, s.Start.Format(time.DateOnly), s.End.Format(time.DateOnly))
			}
		}
	}
	return b.String()
}

// periods returns the periods holding t, as "<period>:<id>" ("total" alone), by the tests'
// own reading of the clock (exact in zones without a transition near t).
func (b *ScoreBoard) periods(t time.Time) []string {
	l := t.In(b.Zone)
	var out []string
	for _, p := range b.Periods {
		switch p {
		case "h":
			out = append(out, "h:"+l.Format("2006010215"))
		case "d":
			out = append(out, "d:"+l.Format("20060102"))
		case "w":
			y, w := l.ISOWeek()
			out = append(out, fmt.Sprintf("w:%04dW%02d", y, w))
		case "m":
			out = append(out, "m:"+l.Format("200601"))
		case "season":
			for _, s := range b.Seasons {
				if !t.Before(s.Start) && t.Before(s.End) {
					out = append(out, "season:"+s.Name)
				}
			}
		case "total":
			out = append(out, "total")
		}
	}
	return out
}

// ScoreKey names one board of a period and scope: Period "d:20261130" or "total", Scope
// "global" or a scope.
type ScoreKey struct{ Board, Period, Scope string }

// ScoreRow is a member on a board.
type ScoreRow struct {
	Member         string
	Score, Reached int64 // Reached in epoch ms
}

// ScoreTruth is every board the stream touched (empty ones included: a scope everyone left),
// ranked: higher score, then earlier reach, then smaller member id.
type ScoreTruth map[ScoreKey][]ScoreRow

type scoreEntry struct {
	present        bool
	score, reached int64
	scope          string
	left           map[string]bool
}

// scoreOracle applies ops by the rules of the issue, in record order.
type scoreOracle struct {
	boards  map[string]*ScoreBoard
	entries map[string]map[string]*scoreEntry // board/member → period → entry
	seen    map[string]map[string]bool        // board/member → request ids applied
}

type scoreOp struct {
	requestID, board, member, op, scope string
	score                               int64
	ts                                  time.Time
}

// apply applies a decodable op of a declared board within its bounds; false when the op is
// refused (an incr that would take a period out of range: its request id then counts as
// used, and a retry changes nothing).
func (o *scoreOracle) apply(op scoreOp) bool {
	bm := op.board + "/" + op.member
	if o.seen[bm][op.requestID] {
		return true // applied once: nothing changes, whatever this one carries
	}
	if o.entries[bm] == nil {
		o.entries[bm], o.seen[bm] = map[string]*scoreEntry{}, map[string]bool{}
	}
	es := o.entries[bm]
	var named []string
	if op.op == "delete" {
		for p := range es {
			named = append(named, p)
		}
	} else {
		named = o.boards[op.board].periods(op.ts)
	}
	cur := func(p string) int64 {
		if e := es[p]; e != nil && e.present {
			return e.score
		}
		return 0
	}
	if op.op == "incr" {
		for _, p := range named {
			if v := cur(p) + op.score; v > ScoreMaxScore || v < -ScoreMaxScore {
				o.seen[bm][op.requestID] = true // refused for the state it met: for good
				return false
			}
		}
	}
	for _, p := range named {
		e := es[p]
		if e == nil {
			e = &scoreEntry{left: map[string]bool{}}
			es[p] = e
		}
		if op.op == "delete" {
			e.present, e.score, e.reached = false, 0, 0
			continue
		}
		v := op.score
		if op.op == "incr" {
			v += cur(p)
		}
		if !e.present || v != e.score {
			e.present, e.score, e.reached = true, v, op.ts.UnixMilli()
		}
		if op.scope != "" && op.scope != e.scope {
			if e.scope != "" {
				e.left[e.scope] = true
			}
			delete(e.left, op.scope)
			e.scope = op.scope
		}
	}
	o.seen[bm][op.requestID] = true
	return true
}

func (o *scoreOracle) truth() ScoreTruth {
	t := ScoreTruth{}
	touch := func(k ScoreKey) {
		if _, ok := t[k]; !ok {
			t[k] = []ScoreRow{}
		}
	}
	for bm, es := range o.entries {
		board, member, _ := strings.Cut(bm, "/")
		for p, e := range es {
			keys := []ScoreKey{{board, p, "global"}}
			if e.scope != "" {
				keys = append(keys, ScoreKey{board, p, e.scope})
			}
			for l := range e.left {
				touch(ScoreKey{board, p, l})
			}
			for _, k := range keys {
				touch(k)
				if e.present {
					t[k] = append(t[k], ScoreRow{member, e.score, e.reached})
				}
			}
		}
	}
	for k := range t {
		slices.SortFunc(t[k], func(a, b ScoreRow) int {
			return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.Reached, b.Reached), strings.Compare(a.Member, b.Member))
		})
	}
	return t
}

// ScoreStream makes a stream of score ops over boards from monday - 12 h to monday + 8 h (so
// it crosses midnight and a week boundary in Asia/Shanghai, UTC and America/New_York, and the
// seasons' boundary), in record-time order: set, incr (some negative) and delete ops, scopes
// that change, ties (equal scores reached in the same millisecond), ops at the boundaries and a
// millisecond before, request ids retried with other values, and invalid records (malformed,
// an unknown board or op, a fractional or out-of-range score, a key that is not the member, a
// ts too far ahead or older than the retention, an incr that would leave the range). It
// returns the records, the truth computed by the tests' own rules and the number of records
// that must be dead-lettered.
func ScoreStream(rng *rand.Rand, boards []ScoreBoard, members, opsPerMember int, monday time.Time) (records []Record, truth ScoreTruth, invalid int) {
	return ScoreStreamFrom(rng, boards, members, opsPerMember, monday, nil)
}

// ScoreStreamFrom is ScoreStream whose truth counts the ops of a board named in from only
// from the records stamped at or after its time (the ops of a board added to the boards file
// later and built by a replay from that time); the ops before are not counted as invalid.
func ScoreStreamFrom(rng *rand.Rand, boards []ScoreBoard, members, opsPerMember int, monday time.Time, from map[string]time.Time) (records []Record, truth ScoreTruth, invalid int) {
	o := &scoreOracle{boards: map[string]*ScoreBoard{}, entries: map[string]map[string]*scoreEntry{}, seen: map[string]map[string]bool{}}
	for i := range boards {
		o.boards[boards[i].Name] = &boards[i]
	}
	start, span := monday.Add(-12*time.Hour), 20*time.Hour
	var edges []time.Time // midnights of the zones in the span
	for _, b := range boards {
		for d := -1; d <= 1; d++ {
			l := monday.In(b.Zone)
			m := time.Date(l.Year(), l.Month(), l.Day()+d, 0, 0, 0, 0, b.Zone)
			if m.After(start) && m.Before(start.Add(span)) {
				edges = append(edges, m, m.Add(-time.Millisecond))
			}
		}
	}
	tie := start.Add(3 * time.Hour).Truncate(time.Minute)
	scopes := []string{"", "", "eu", "us", "asia"}
	type gen struct {
		rec   Record
		op    *scoreOp // nil: invalid whatever the state
		check bool     // valid unless the state refuses it (apply decides)
	}
	var all []gen
	for m := range members {
		member := fmt.Sprintf("m%03d", m)
		var reqs []string
		for i := range opsPerMember {
			op := scoreOp{requestID: fmt.Sprintf("r%d", i), board: boards[rng.IntN(len(boards))].Name, member: member,
				scope: scopes[rng.IntN(len(scopes))]}
			op.ts = start.Add(time.Duration(rng.Int64N(int64(span)))).Truncate(time.Millisecond)
			switch k := rng.IntN(20); {
			case k < 6:
				op.op, op.score = "set", rng.Int64N(300)
			case k < 18:
				op.op, op.score = "incr", rng.Int64N(120)-40
			default:
				op.op = "delete"
			}
			switch rng.IntN(10) {
			case 0: // a tie: the same score at the same instant as others
				op.op, op.score, op.ts = "set", 150, tie
			case 1: // at a midnight, or a millisecond before
				op.ts = edges[rng.IntN(len(edges))]
			}
			if len(reqs) > 0 && rng.IntN(8) == 0 {
				op.requestID = reqs[rng.IntN(len(reqs))] // a retry, with other values
			}
			recTime := op.ts.Add(time.Duration(rng.Int64N(int64(time.Minute))))
			g := gen{op: &op, check: true}
			value := scoreValue(op)
			switch rng.IntN(60) {
			case 0:
				value, g.op = value[:len(value)/2], nil
			case 1:
				value, g.op = strings.Replace(value, `"board":"`+op.board, `"board":"nope`, 1), nil
			case 2:
				value, g.op = strings.Replace(value, `"op":"`+op.op, `"op":"ban`, 1), nil
			case 3:
				if op.op != "delete" {
					value, g.op = strings.Replace(value, fmt.Sprintf(`"score":%d`, op.score), fmt.Sprintf(`"score":%d.5`, op.score), 1), nil
				}
			case 4:
				op.ts, g.op = recTime.Add(6*time.Minute), nil // further ahead than the skew
				value = scoreValue(op)
			case 5:
				op.ts, g.op = recTime.Add(-31*24*time.Hour), nil // older than the board's retention
				value = scoreValue(op)
			case 6:
				all = append(all, gen{rec: Record{Key: member + "x", Value: []byte(value), Time: recTime}})
				continue
			case 7: // to the top of the range, then one more
				op.op, op.score = "set", ScoreMaxScore
				value = scoreValue(op)
				g.op = &op
				over := op
				over.requestID, over.op, over.score = op.requestID+"-over", "incr", 1
				all = append(all, gen{rec: Record{Key: member, Value: []byte(value), Time: recTime}, op: &op, check: true},
					gen{rec: Record{Key: member, Value: []byte(scoreValue(over)), Time: recTime}, op: &over, check: true})
				reqs = append(reqs, op.requestID)
				continue
			case 8:
				op.op, op.score = "set", ScoreMaxScore+1
				value, g.op = scoreValue(op), nil
			}
			if g.op != nil {
				reqs = append(reqs, op.requestID)
			}
			g.rec = Record{Key: member, Value: []byte(value), Time: recTime}
			all = append(all, g)
		}
	}
	slices.SortStableFunc(all, func(a, b gen) int { return a.rec.Time.Compare(b.rec.Time) })
	for _, g := range all {
		if g.op != nil && g.rec.Time.Before(from[g.op.board]) {
			records = append(records, g.rec)
			continue
		}
		if g.op == nil || !o.apply(*g.op) {
			invalid++
		}
		records = append(records, g.rec)
	}
	return records, o.truth(), invalid
}

func scoreValue(op scoreOp) string {
	v := map[string]any{"request_id": op.requestID, "board": op.board, "member": op.member, "op": op.op,
		"ts": op.ts.Format(time.RFC3339Nano)}
	if op.op != "delete" {
		v["score"] = op.score
	}
	if op.scope != "" {
		v["scope"] = op.scope
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
