package steps

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/rankstream/rankstream/internal/rank"
)

// MaxRequestsPerDay bounds the request ids remembered per user and day. Past it the oldest
// are forgotten; a forgotten duplicate is then merged again, which changes nothing because the
// merge (max steps, earliest reach) is idempotent. Dedup saves work; it is not what makes
// results exact.
const MaxRequestsPerDay = 1024

// DayState is a user's merged state for one local day.
type DayState struct {
	Day   rank.Day
	Steps int64
	// ReachedMs is the earliest event time (epoch ms) of a report carrying Steps: when the
	// user reached the day's count. It breaks ties on the boards.
	ReachedMs int64
	// Region is the region named by the latest report that raised the day's value.
	Region string
	// Requests are hashes of the request ids merged into this day, oldest first.
	Requests []uint64
}

// State is a user's group-table value: the days still inside the retention, oldest first.
type State struct {
	Days []DayState
}

// Report is a validated step report reduced to what the merge needs.
type Report struct {
	RequestHash uint64
	Day         rank.Day
	Steps       int64
	TSMs        int64
	Region      string
}

// Outcome says what a report did to the state.
type Outcome int

// Outcomes of Apply.
const (
	Improved  Outcome = iota // the day's value or its reach time changed
	Duplicate                // the request id was merged before
	Stale                    // an older or smaller value: dropped
)

func (o Outcome) String() string {
	switch o {
	case Improved:
		return "improved"
	case Duplicate:
		return "duplicate"
	case Stale:
		return "stale"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Apply merges r into the state and returns the day's state after the merge, the outcome, and
// the region the user had on that day before, if the merge moved them to another region.
// Days before oldest are dropped from the state first.
//
// Merge rule: same-day value = max(steps); among reports carrying that maximum, the earliest
// event time is when it was reached. This is commutative and idempotent, so the result does
// not depend on arrival order or on redelivery.
func (s *State) Apply(r Report, oldest rank.Day) (day DayState, out Outcome, prevRegion string) {
	s.prune(oldest)
	i, found := slices.BinarySearchFunc(s.Days, r.Day, func(d DayState, day rank.Day) int { return int(d.Day - day) })
	if !found {
		s.Days = slices.Insert(s.Days, i, DayState{Day: r.Day, Steps: -1})
	}
	d := &s.Days[i]
	if slices.Contains(d.Requests, r.RequestHash) {
		return *d, Duplicate, ""
	}
	if len(d.Requests) == MaxRequestsPerDay {
		d.Requests = slices.Delete(d.Requests, 0, 1)
	}
	d.Requests = append(d.Requests, r.RequestHash)

	switch {
	case r.Steps > d.Steps, r.Steps == d.Steps && r.TSMs < d.ReachedMs:
		d.Steps, d.ReachedMs = r.Steps, r.TSMs
		if r.Region != "" && r.Region != d.Region {
			prevRegion, d.Region = d.Region, r.Region
		}
		out = Improved
	default:
		out = Stale
	}
	return *d, out, prevRegion
}

func (s *State) prune(oldest rank.Day) {
	n := 0
	for n < len(s.Days) && s.Days[n].Day < oldest {
		n++
	}
	s.Days = slices.Delete(s.Days, 0, n)
}

const stateVersion = 1

// MarshalBinary encodes the state: a version byte, then per day the date, steps, reach time,
// region and request hashes, as varints (hashes fixed 8 bytes).
func (s *State) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, 16+len(s.Days)*32)
	b = append(b, stateVersion)
	b = binary.AppendUvarint(b, uint64(len(s.Days)))
	for _, d := range s.Days {
		b = binary.AppendUvarint(b, uint64(d.Day))
		b = binary.AppendVarint(b, d.Steps)
		b = binary.AppendVarint(b, d.ReachedMs)
		b = binary.AppendUvarint(b, uint64(len(d.Region)))
		b = append(b, d.Region...)
		b = binary.AppendUvarint(b, uint64(len(d.Requests)))
		for _, h := range d.Requests {
			b = binary.LittleEndian.AppendUint64(b, h)
		}
	}
	return b, nil
}

// ErrCorruptState is returned by UnmarshalBinary for bytes MarshalBinary did not make.
var ErrCorruptState = errors.New("steps: corrupt state")

// UnmarshalBinary decodes what MarshalBinary made. It validates everything before it touches
// the receiver.
func (s *State) UnmarshalBinary(b []byte) error {
	r := reader{b: b}
	if v := r.byte(); v != stateVersion {
		return fmt.Errorf("%w: version %d", ErrCorruptState, v)
	}
	n := r.uvarint(64)
	days := make([]DayState, 0, n)
	for range n {
		var d DayState
		d.Day = rank.Day(r.uvarint(99991231))
		d.Steps = r.varint()
		d.ReachedMs = r.varint()
		d.Region = string(r.bytes(r.uvarint(1 << 10)))
		nr := r.uvarint(MaxRequestsPerDay)
		d.Requests = make([]uint64, 0, nr)
		for range nr {
			d.Requests = append(d.Requests, binary.LittleEndian.Uint64(r.bytes(8)))
		}
		if len(days) > 0 && d.Day <= days[len(days)-1].Day {
			r.fail()
		}
		days = append(days, d)
	}
	if r.err != nil || len(r.b) != 0 {
		return fmt.Errorf("%w: %d bytes", ErrCorruptState, len(b))
	}
	s.Days = days
	return nil
}

// reader decodes a byte slice, remembering the first failure; after one, it returns zeros.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail() { r.err, r.b = ErrCorruptState, nil }

func (r *reader) byte() byte {
	if len(r.b) < 1 {
		r.fail()
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *reader) uvarint(max uint64) uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > max {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) bytes(n uint64) []byte {
	if uint64(len(r.b)) < n {
		r.fail()
		return make([]byte, n)
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}
