package board

import (
	"errors"
	"fmt"
	"math/bits"
	"time"
)

// Errors of Encode: the value does not fit the composite's bits and must be rejected, never
// rounded.
var (
	ErrScoreRange = errors.New("board: score out of the composite's range")
	ErrTimeRange  = errors.New("board: reach time out of the composite's range")
)

// Composite packs (score, reach time) into a float64 that sorts like "higher score first,
// then earlier reach first" and is exact: the packed integer stays below 2^53, where every
// integer is a float64.
//
//	value = score << timeBits | (maxTick - tick),  tick = (reached - base) / unit
//
// A Composite covers reach times in [base, base + span) at the given unit; timeBits is the
// number of bits span/unit needs, and the score gets the 53 - timeBits bits that remain (at
// least 9: a time.Duration spans at most 2^63 ns, about 2^43 ms).
type Composite struct {
	baseMs, unitMs int64
	timeBits       uint
	maxTick        int64 // 2^timeBits - 1
	lastTick       int64 // span/unit - 1: the last tick inside the span
	maxScore       int64
}

// NewComposite returns a Composite for reach times in [base, base+span) at unit resolution.
func NewComposite(base time.Time, span, unit time.Duration) (Composite, error) {
	if unit < time.Millisecond || unit%time.Millisecond != 0 || span < unit {
		return Composite{}, fmt.Errorf("board: composite span %s and unit %s: unit must be whole milliseconds and not above the span", span, unit)
	}
	ticks := int64(span / unit)
	tb := uint(bits.Len64(uint64(ticks - 1)))
	return Composite{
		baseMs:   base.UnixMilli(),
		unitMs:   unit.Milliseconds(),
		timeBits: tb,
		maxTick:  1<<tb - 1,
		lastTick: ticks - 1,
		maxScore: 1<<(53-tb) - 1,
	}, nil
}

// MaxScore is the largest score Encode accepts.
func (c Composite) MaxScore() int64 { return c.maxScore }

// Encode packs score and reach time. Scores must be in [0, MaxScore], reach times inside the
// composite's span.
func (c Composite) Encode(score int64, reachedMs int64) (float64, error) {
	if score < 0 || score > c.maxScore {
		return 0, fmt.Errorf("%w: %d not in [0, %d]", ErrScoreRange, score, c.maxScore)
	}
	d := reachedMs - c.baseMs
	if d < 0 || d/c.unitMs > c.lastTick {
		return 0, fmt.Errorf("%w: %s", ErrTimeRange, time.UnixMilli(reachedMs).UTC().Format(time.RFC3339Nano))
	}
	return float64(score<<c.timeBits | (c.maxTick - d/c.unitMs)), nil
}

// Decode unpacks a value made by Encode. The reach time comes back truncated to the unit.
func (c Composite) Decode(v float64) (score int64, reachedMs int64) {
	n := int64(v)
	tick := c.maxTick - n&c.maxTick
	return n >> c.timeBits, c.baseMs + tick*c.unitMs
}
