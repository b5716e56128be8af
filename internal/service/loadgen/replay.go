package loadgen

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/rankstream/rankstream/topics"
)

// maxReplayLine is the longest line a replay reads.
const maxReplayLine = 1 << 20

// Replay turns lines "<time>\t<query>" into search.queries records, in file order: the same
// format `rankstream topk` reads, so its output is the expected result of a replay. The time
// is RFC 3339 with an offset or integer epoch milliseconds and becomes the query's ts;
// everything after the first tab is the query, sent as it is (the pipeline normalises and
// validates it). Lines carry no user: a record's key is its line number, which spreads the
// records over the partitions, and user_id is left out. Empty lines are skipped; "\r\n" line
// ends are accepted.
type Replay struct {
	sc   *bufio.Scanner
	line int
	err  error
}

// NewReplay reads lines from r.
func NewReplay(r io.Reader) *Replay {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxReplayLine)
	return &Replay{sc: sc}
}

// Next returns the next line's record (timed by the line, not by now: see replayRecord), or
// nothing at the end of the input or at the first malformed line; Err tells which.
func (p *Replay) Next(time.Time) []Record {
	for p.err == nil && p.sc.Scan() {
		p.line++
		text := strings.TrimSuffix(p.sc.Text(), "\r")
		if text == "" {
			continue
		}
		rec, err := replayRecord(text, p.line)
		if err != nil {
			p.err = fmt.Errorf("loadgen: replay line %d: %w", p.line, err)
			return nil
		}
		return []Record{rec}
	}
	if err := p.sc.Err(); err != nil && p.err == nil {
		p.err = fmt.Errorf("loadgen: replay after line %d: %w", p.line, err)
	}
	return nil
}

// Err returns the error that ended the replay early, nil if it reached the end of the input.
func (p *Replay) Err() error { return p.err }

// replayRecord makes a line's record. Its record time is the line's time, not now: the query
// happened then, and the pipeline bounds ts by the record time (topics.SearchMaxAge), so a
// replay of any age is accepted.
func replayRecord(text string, line int) (Record, error) {
	ts, query, ok := strings.Cut(text, "\t")
	if !ok {
		return Record{}, fmt.Errorf("no tab between time and query")
	}
	t, err := topics.ParseTime(ts)
	if err != nil {
		return Record{}, err
	}
	v, err := json.Marshal(topics.SearchQuery{Query: query, TS: topics.Timestamp{Time: t}})
	if err != nil {
		return Record{}, fmt.Errorf("encode: %w", err)
	}
	return Record{Key: strconv.Itoa(line), Value: v, Time: t}, nil
}
