package loadgen

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/topics"
)

// ScoreBoardLoad is one board a score stream feeds, and the op it sends.
type ScoreBoardLoad struct {
	Board string
	// Op is topics.OpSet (a game's score reported whole: the member's running score) or
	// topics.OpIncr (points won or lost, now and then negative).
	Op string
}

// ScoresConfig shapes a score-op stream. Zero fields take the defaults in brackets.
type ScoresConfig struct {
	Boards  []ScoreBoardLoad // at least one
	Members int              // distinct members [10,000]
	Scopes  []string         // scopes members belong to [DefaultRegions]
	// DupRatio of ops re-send an earlier op unchanged (same request id) [0].
	DupRatio float64
	Seed     uint64
}

// Scores generates score ops (topic scores.updated).
type Scores struct {
	cfg     ScoresConfig
	rng     *rand.Rand
	running map[string]int64 // per board and member, for set boards: the score a client reports
	recent  []Record
	seq     uint64
}

// NewScores returns a generator.
func NewScores(cfg ScoresConfig) (*Scores, error) {
	if len(cfg.Boards) == 0 {
		return nil, fmt.Errorf("loadgen: a score stream needs at least one board")
	}
	for _, b := range cfg.Boards {
		if !board.ValidName(b.Board) || b.Op != topics.OpSet && b.Op != topics.OpIncr {
			return nil, fmt.Errorf("loadgen: board %q with op %q: want a board name and set or incr", b.Board, b.Op)
		}
	}
	if cfg.Members <= 0 {
		cfg.Members = 10_000
	}
	if len(cfg.Scopes) == 0 {
		cfg.Scopes = DefaultRegions
	}
	if cfg.DupRatio < 0 || cfg.DupRatio > 1 {
		return nil, fmt.Errorf("loadgen: duplicate ratio %v must be in [0, 1]", cfg.DupRatio)
	}
	return &Scores{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x5c0e)), running: make(map[string]int64)}, nil
}

// Next returns the op sent at simulated time now.
func (g *Scores) Next(now time.Time) []Record {
	if g.rng.Float64() < g.cfg.DupRatio && len(g.recent) > 0 {
		rec := g.recent[g.rng.IntN(len(g.recent))]
		rec.Time = now
		return []Record{rec}
	}
	b := g.cfg.Boards[g.rng.IntN(len(g.cfg.Boards))]
	m := g.rng.IntN(g.cfg.Members)
	member := "m" + strconv.Itoa(m)
	op := topics.ScoreOp{Board: b.Board, Member: member, Op: b.Op, TS: topics.Timestamp{Time: now},
		Scope: g.cfg.Scopes[m%len(g.cfg.Scopes)]}
	if b.Op == topics.OpIncr {
		op.Score = 1 + g.rng.Int64N(100)
		if g.rng.IntN(10) == 0 {
			op.Score = -op.Score / 2
		}
	} else {
		k := b.Board + "/" + member
		g.running[k] += g.rng.Int64N(1_000)
		op.Score = g.running[k]
	}
	g.seq++
	op.RequestID = "s" + strconv.FormatUint(g.cfg.Seed, 36) + "-" + strconv.FormatUint(g.seq, 36)
	v, err := json.Marshal(op)
	if err != nil {
		panic("BUG: marshal score op: " + err.Error())
	}
	rec := Record{Key: member, Value: v, Time: now}
	if len(g.recent) < 1024 {
		g.recent = append(g.recent, rec)
	} else {
		g.recent[g.rng.IntN(len(g.recent))] = rec
	}
	return []Record{rec}
}
