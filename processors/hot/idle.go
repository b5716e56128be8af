package hot

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/lovoo/goka"

	"github.com/rankstream/rankstream/topics"
)

// This file decides idleness where the data is: the instance that owns input partition p
// declares p idle (an idle marker, topics.HotLoopIdle, to every loop partition, after p's
// buffered terms) only once p has had nothing left to read for Idle: the offset after the last
// record it routed (or, before any in this goka session, the offset goka starts from) has
// reached p's end offset, and stayed there. A partition read behind, or not read at all (its
// consumer lagging, dead, not yet polled), is never idle, so the windows wait for it: closing
// them without it would drop its queries as late once read. The loop partitions leave p out of
// the watermark (rules.low) until p's next word; a partition never heard from holds them back
// until its idle marker or its data comes.
//
// The same readings tell whether p reads at the head of its log (live): it had read everything
// its log held at the reading before. Its markers say so (topics.HotLoopRecord.Live), so that
// before the first window a partition behind the others' queries is told from a backlog on its
// way (rules.behind).

// idleEvery is how often the watcher compares its input partitions' positions with their end
// offsets (three listings a second per process: end, start and committed offsets).
const idleEvery = time.Second

// idleProduceTimeout bounds the wait for the idle markers sent outside a session.
const idleProduceTimeout = 10 * time.Second

// idleStreak is what the watcher knows of one input partition it owns: since when it has had
// nothing left to read at its position.
type idleStreak struct {
	pos   int64     // the position the streak is at
	since time.Time // when the partition was first seen with nothing left to read at pos (zero: data left)
	sent  bool      // its idle marker went out at pos
}

// observe returns the streak after a reading at now: pos is the offset after the last record
// the instance routed, end the partition's end offset. due is true when the partition has had
// nothing left to read at pos for idle and its idle marker is not out yet. A new position or
// data left start a new streak.
func (s idleStreak) observe(pos, end int64, now time.Time, idle time.Duration) (next idleStreak, due bool) {
	if pos != s.pos || pos < end {
		s = idleStreak{pos: pos}
	}
	if pos < end {
		return s, false
	}
	if s.since.IsZero() {
		s.since = now
	}
	return s, !s.sent && now.Sub(s.since) >= idle
}

// assignment is the input partitions goka assigned to this process, and how many assignments
// came (the goka rebalance callback).
type assignment struct {
	mu    sync.Mutex
	parts []int32
	gen   int
}

// set is the goka rebalance callback: a new session with these partitions.
func (a *assignment) set(as goka.Assignment) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.parts = a.parts[:0]
	for part := range as {
		a.parts = append(a.parts, part)
	}
	slices.Sort(a.parts)
	a.gen++
}

func (a *assignment) get() ([]int32, int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.parts), a.gen
}

// watchIdle sends the idle markers of this process's input partitions until ctx ends, every
// idleEvery. A reading that fails decides nothing: the partitions stay as they are.
func (p *processor) watchIdle(ctx context.Context) {
	t := time.NewTicker(idleEvery)
	defer t.Stop()
	streaks, ends, gen := map[int32]idleStreak{}, map[int32]int64{}, -1
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		parts, g := p.owned.get()
		if g != gen { // a new session: its positions start again
			clear(streaks)
			clear(ends)
			gen = g
		}
		if len(parts) == 0 {
			continue
		}
		if err := p.idleTick(ctx, parts, streaks, ends); err != nil && ctx.Err() == nil {
			p.cfg.Log.Debug("hot: reading the input's offsets", "err", err)
		}
	}
}

// idleTick reads the input's offsets, sends the idle markers due (idleStreak) and tells each
// partition whether it reads at the head of its log: its position reached the end offset of
// the reading before (ends, updated), or of this one at the first reading.
func (p *processor) idleTick(ctx context.Context, parts []int32, streaks map[int32]idleStreak, ends map[int32]int64) error {
	input := string(p.cfg.Names.Stream(topics.SearchQueries))
	start, end, err := p.io.offsets(ctx, input)
	if err != nil {
		return err
	}
	committed, err := p.io.committed(ctx, string(p.cfg.Names.Group(Group)), input)
	if err != nil {
		return err
	}
	now := time.Now()
	for _, part := range parts {
		e, ok := end[part]
		if !ok || int(part) >= len(p.inputs) {
			continue
		}
		in := p.inputs[part]
		in.mu.Lock() // a new session's buffer waits: it then sends a marker first (input)
		buf := in.buf.Load()
		pos, live := int64(0), false
		if buf != nil {
			pos, live = buf.position()
		}
		if !live { // no record routed in this session: goka starts at the committed offset
			c, ok := committed[part]
			pos = max(start[part], c)
			if !ok {
				pos = start[part]
			}
		}
		before, ok := ends[part]
		if !ok {
			before = e
		}
		in.live.Store(pos >= before)
		ends[part] = e
		s, due := streaks[part].observe(pos, e, now, p.cfg.Idle)
		if due {
			s.sent = p.sendIdle(ctx, buf, part, pos, live)
		}
		streaks[part] = s
		in.mu.Unlock()
	}
	return nil
}

// sendIdle sends input partition part's idle marker at position pos: through its session's
// loop buffer (buf, live), after its buffered terms, or, with no session live, directly.
func (p *processor) sendIdle(ctx context.Context, buf *loopBuffer, part int32, pos int64, live bool) bool {
	if live {
		sent := buf.idle(pos) // not sent: a record came, or the session ended; the next reading sees it
		if sent {
			p.cfg.Log.Info("hot: input partition idle", "partition", part, "offset", pos)
		}
		return sent
	}
	recs := markerRecords(p.loop, p.markerKeys, topics.HotLoopRecord{Kind: topics.HotLoopIdle, Partition: part, Offset: pos})
	// Bounded: a new session of the partition waits for it (in.mu), and the next reading tries again.
	ctx, cancel := context.WithTimeout(ctx, idleProduceTimeout)
	defer cancel()
	if err := p.io.produce(ctx, recs...); err != nil {
		p.cfg.Log.Warn("hot: idle marker", "partition", part, "err", err)
		return false
	}
	p.cfg.Log.Info("hot: input partition idle", "partition", part, "offset", pos)
	return true
}
