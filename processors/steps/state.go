package steps

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"sync/atomic"
	"time"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/topics"
)

// MaxRequestsPerDay bounds the request ids remembered per user and day. Past it the oldest
// are forgotten, and a report carrying a forgotten id is merged again: with the same value it
// changes nothing (the merge is idempotent), with another value it counts as a new report.
const MaxRequestsPerDay = 1024

// MaxRegionsPerDay bounds the distinct regions one user may be ranked in during one local day
// (the current one and every one they left). A report that would move the user to one more
// region is rejected with ErrTooManyRegions and goes to the dead-letter topic.
const MaxRegionsPerDay = 16

// ErrTooFast quarantines a report whose steps rose faster than Limits.MaxRisePerMinute allows:
// the record goes to the quarantine topic (steps.quarantine), not the board.
var ErrTooFast = errors.New("max_rise")

// ErrTooManyRegions rejects a report that would move a user to a region beyond
// MaxRegionsPerDay in one day.
var ErrTooManyRegions = fmt.Errorf("steps: more than %d distinct regions for one user and day", MaxRegionsPerDay)

// DayState is a user's merged state for one local day.
type DayState struct {
	Day   board.Day
	Steps int64
	// ReachedMs is the earliest event time (epoch ms) of a report carrying Steps: when the
	// user reached the day's count. It breaks ties on the boards.
	ReachedMs int64
	// Region is the region named by the best report that names one (most steps, then
	// earliest, then the smallest region name), so that it does not depend on arrival order.
	// RegionSteps and RegionReachedMs are that report's steps and time ("" and zeros: none).
	Region          string
	RegionSteps     int64
	RegionReachedMs int64
	// Left are the regions the user was ranked in on this day besides Region, sorted: every
	// update re-sends them so that a redelivery can remove the user from those boards.
	Left []string
	// Requests are hashes of the request ids merged into this day, oldest first.
	Requests []uint64
	// HandedIn is the partition claim (see claims) in which the processor last handed this
	// day's effect to its sink, 0 if none: the effect was handed as it is now, since every
	// change of it is handed in the claim that makes it.
	HandedIn uint64
}

// Update returns the day's whole effect for user's boards, as the processor hands it to its
// sink (and `rankstream reconcile` compares and rewrites it).
func (d DayState) Update(user string) *board.StepUpdate {
	return &board.StepUpdate{User: user, Day: d.Day, Steps: d.Steps, ReachedMs: d.ReachedMs, Region: d.Region, Left: d.Left}
}

// State is a user's group-table value: the days still inside the retention, oldest first.
type State struct {
	Days []DayState
}

// Report is a validated step report reduced to what the merge needs.
type Report struct {
	RequestHash uint64
	Day         board.Day
	Steps       int64
	TSMs        int64
	Region      string
}

// Limits are the plausibility rules of a user's day that depend on the state.
type Limits struct {
	// MaxRisePerMinute is the most steps a user's day may rise per minute of event time
	// (0: no limit): a report that would raise the day's value (or reach it earlier) is
	// quarantined when its steps exceed MaxRisePerMinute times the minutes since the day's
	// start, or, when it is later than the day's value's reach time, when its rise over that
	// value exceeds MaxRisePerMinute times the minutes between the two. A user whose readings
	// never fall as time goes on and never rise faster than the limit is never quarantined,
	// in any order of their reports.
	MaxRisePerMinute int64
}

// Outcome says what a report did to the state.
type Outcome int

// Outcomes of Apply.
const (
	Improved  Outcome = iota // the day's value, its reach time or its region changed
	Duplicate                // the request id was merged before: nothing changed
	Stale                    // an older or smaller value: only its request id was recorded
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

// Result is what Apply did.
type Result struct {
	// Day is the day's state after the merge.
	Day     DayState
	Outcome Outcome
	// Changed tells that the state differs from before the call (a merged report, of any
	// outcome but Duplicate, or days pruned): it must be written back, or the request id
	// would be forgotten.
	Changed bool
}

// Apply merges r into the state. Days before oldest are dropped from the state first.
//
// Merge rule: same-day value = max(steps); among reports carrying that maximum, the earliest
// event time is when it was reached. The region is that of the best report naming one. A
// request id merged before (whatever its outcome then) changes nothing. This is commutative
// and idempotent, so the result does not depend on arrival order or on redelivery.
//
// A report that would move the user to more than MaxRegionsPerDay regions in the day is not
// merged (its request id is not recorded) and Apply returns an error wrapping
// ErrTooManyRegions.
func (s *State) Apply(r Report, oldest board.Day) (Result, error) {
	return s.ApplyWithin(r, oldest, Limits{}, 0)
}

// ApplyWithin is Apply under lim: a report rising faster than lim.MaxRisePerMinute is not
// merged (its request id is not recorded, as for ErrTooManyRegions) and ApplyWithin returns
// an error wrapping ErrTooFast. dayStartMs is the first instant of r.Day in the report's zone
// (epoch ms), where the rise counts from.
func (s *State) ApplyWithin(r Report, oldest board.Day, lim Limits, dayStartMs int64) (Result, error) {
	pruned := s.prune(oldest)
	i, found := slices.BinarySearchFunc(s.Days, r.Day, func(d DayState, day board.Day) int { return int(d.Day - day) })
	if !found {
		s.Days = slices.Insert(s.Days, i, DayState{Day: r.Day, Steps: -1})
	}
	d := &s.Days[i]
	if slices.Contains(d.Requests, r.RequestHash) {
		return Result{Day: *d, Outcome: Duplicate, Changed: pruned}, nil
	}
	if err := lim.check(r, d, dayStartMs); err != nil {
		if !found {
			s.Days = slices.Delete(s.Days, i, i+1)
		}
		return Result{Changed: pruned}, err
	}
	moves := r.Region != "" && r.Region != d.Region && regionBeats(r, d)
	if moves && d.Region != "" && !slices.Contains(d.Left, r.Region) && len(d.Left)+2 > MaxRegionsPerDay {
		return Result{Day: *d, Changed: pruned}, fmt.Errorf("%w: region %q on %v", ErrTooManyRegions, r.Region, r.Day)
	}
	if len(d.Requests) == MaxRequestsPerDay {
		d.Requests = slices.Delete(d.Requests, 0, 1)
	}
	d.Requests = append(d.Requests, r.RequestHash)
	out := Stale
	if r.Steps > d.Steps || r.Steps == d.Steps && r.TSMs < d.ReachedMs {
		d.Steps, d.ReachedMs = r.Steps, r.TSMs
		out = Improved
	}
	if r.Region != "" && regionBeats(r, d) {
		if moves {
			if d.Region != "" {
				d.Left = insertSorted(d.Left, d.Region)
			}
			if j, ok := slices.BinarySearch(d.Left, r.Region); ok {
				d.Left = slices.Delete(d.Left, j, j+1)
			}
			d.Region = r.Region
			out = Improved
		}
		d.RegionSteps, d.RegionReachedMs = r.Steps, r.TSMs
	}
	return Result{Day: *d, Outcome: out, Changed: true}, nil
}

// check applies the rise limit to a report that would raise the day's value or reach it
// earlier. Products stay far inside int64: steps are at most topics' MaxSteps bound and event
// times within the retention.
func (l Limits) check(r Report, d *DayState, dayStartMs int64) error {
	if l.MaxRisePerMinute <= 0 || r.Steps < d.Steps || r.Steps == d.Steps && r.TSMs >= d.ReachedMs {
		return nil
	}
	if since := r.TSMs - dayStartMs; r.Steps*60_000 > l.MaxRisePerMinute*since {
		return fmt.Errorf("%w: %d steps %s after the day's start, above %d a minute", ErrTooFast, r.Steps, time.Duration(since)*time.Millisecond, l.MaxRisePerMinute)
	}
	if d.Steps >= 0 && r.TSMs > d.ReachedMs {
		if rise, dt := r.Steps-d.Steps, r.TSMs-d.ReachedMs; rise*60_000 > l.MaxRisePerMinute*dt {
			return fmt.Errorf("%w: %d steps more in %s than the day's %d, above %d a minute", ErrTooFast, rise, time.Duration(dt)*time.Millisecond, d.Steps, l.MaxRisePerMinute)
		}
	}
	return nil
}

// regionBeats tells whether r names the day's region rather than the report that named it
// so far: more steps, then earlier, then the smaller region name.
func regionBeats(r Report, d *DayState) bool {
	switch {
	case d.Region == "":
		return true
	case r.Steps != d.RegionSteps:
		return r.Steps > d.RegionSteps
	case r.TSMs != d.RegionReachedMs:
		return r.TSMs < d.RegionReachedMs
	}
	return r.Region < d.Region
}

func insertSorted(s []string, v string) []string {
	i, ok := slices.BinarySearch(s, v)
	if ok {
		return s
	}
	return slices.Insert(s, i, v)
}

// prune drops the days before oldest and tells whether there were any.
func (s *State) prune(oldest board.Day) bool {
	n := 0
	for n < len(s.Days) && s.Days[n].Day < oldest {
		n++
	}
	s.Days = slices.Delete(s.Days, 0, n)
	return n > 0
}

// MarkHanded records that day's effect, as it is now, is handed to the sink in claim, and
// tells whether it was not already (the day was handed in another claim, or never); the state
// changed then, and must be written back.
func (s *State) MarkHanded(day board.Day, claim uint64) bool {
	i, found := slices.BinarySearchFunc(s.Days, day, func(d DayState, day board.Day) int { return int(d.Day - day) })
	if !found || s.Days[i].HandedIn == claim {
		return false
	}
	s.Days[i].HandedIn = claim
	return true
}

// Versions of the state's encoding. Version 1 had no region key and no regions left, version
// 2 no claim a day was handed in; both are still decoded (a version 1 region counts as
// reached with the day's value, and a day of either was handed in no claim of this version).
const (
	stateVersion1 = 1
	stateVersion2 = 2
	stateVersion  = 3
)

// MarshalBinary encodes the state: a version byte, then per day the date, steps, reach time,
// region (with its steps and reach time when not empty), the regions left, the request hashes
// and the claim it was handed in, as varints (hashes and the claim fixed 8 bytes).
func (s *State) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, s.size())
	b = append(b, stateVersion)
	b = binary.AppendUvarint(b, uint64(len(s.Days)))
	for _, d := range s.Days {
		b = binary.AppendUvarint(b, uint64(d.Day))
		b = binary.AppendVarint(b, d.Steps)
		b = binary.AppendVarint(b, d.ReachedMs)
		b = topics.AppendString(b, d.Region)
		if d.Region != "" {
			b = binary.AppendVarint(b, d.RegionSteps)
			b = binary.AppendVarint(b, d.RegionReachedMs)
		}
		b = binary.AppendUvarint(b, uint64(len(d.Left)))
		for _, l := range d.Left {
			b = topics.AppendString(b, l)
		}
		b = binary.AppendUvarint(b, uint64(len(d.Requests)))
		for _, h := range d.Requests {
			b = binary.LittleEndian.AppendUint64(b, h)
		}
		b = binary.LittleEndian.AppendUint64(b, d.HandedIn)
	}
	return b, nil
}

// size is the length of the encoding, so that MarshalBinary allocates once and the table
// keeps no spare room.
func (s *State) size() int {
	n := 1 + uvarintLen(uint64(len(s.Days)))
	for _, d := range s.Days {
		n += uvarintLen(uint64(d.Day)) + varintLen(d.Steps) + varintLen(d.ReachedMs) + uvarintLen(uint64(len(d.Region))) + len(d.Region)
		if d.Region != "" {
			n += varintLen(d.RegionSteps) + varintLen(d.RegionReachedMs)
		}
		n += uvarintLen(uint64(len(d.Left)))
		for _, l := range d.Left {
			n += uvarintLen(uint64(len(l))) + len(l)
		}
		n += uvarintLen(uint64(len(d.Requests))) + 8*len(d.Requests) + 8
	}
	return n
}

// uvarintLen is the length of binary.AppendUvarint's encoding of x.
func uvarintLen(x uint64) int { return (bits.Len64(x|1) + 6) / 7 }

// varintLen is the length of binary.AppendVarint's encoding of x.
func varintLen(x int64) int { return uvarintLen(uint64(x<<1) ^ uint64(x>>63)) }

// ErrCorruptState is returned by UnmarshalBinary for bytes MarshalBinary did not make.
var ErrCorruptState = errors.New("steps: corrupt state")

// UnmarshalBinary decodes what MarshalBinary made. It validates everything before it touches
// the receiver.
func (s *State) UnmarshalBinary(b []byte) error {
	days, err := decodeDays(b, nil)
	if err != nil {
		return err
	}
	s.Days = days
	return nil
}

// decodeDays decodes what MarshalBinary made into days[:0], reusing the room of days and of
// their request lists; on error the contents of days are undefined.
func decodeDays(b []byte, days []DayState) ([]DayState, error) {
	r := topics.NewBinaryReader(b, ErrCorruptState)
	v := r.Byte()
	if v < stateVersion1 || v > stateVersion {
		return nil, fmt.Errorf("%w: version %d", ErrCorruptState, v)
	}
	n := r.Uvarint(64)
	if days == nil || uint64(cap(days)) < n {
		days = make([]DayState, 0, n)
	}
	days = days[:0]
	for range n {
		days = days[:len(days)+1]
		d := &days[len(days)-1]
		requests := d.Requests[:0]
		*d = DayState{}
		d.Day = board.Day(r.Uvarint(99991231))
		d.Steps = r.Varint()
		d.ReachedMs = r.Varint()
		d.Region = regionName(r.Bytes(int(r.Uvarint(1 << 10))))
		switch {
		case v == stateVersion1 && d.Region != "":
			d.RegionSteps, d.RegionReachedMs = d.Steps, d.ReachedMs
		case v >= stateVersion2 && d.Region != "":
			d.RegionSteps = r.Varint()
			d.RegionReachedMs = r.Varint()
		}
		if v >= stateVersion2 {
			if nl := r.Uvarint(MaxRegionsPerDay - 1); nl > 0 {
				d.Left = make([]string, 0, nl)
				for range nl {
					l := r.String(1 << 10)
					if l == "" || l == d.Region || len(d.Left) > 0 && l <= d.Left[len(d.Left)-1] {
						r.Check(false)
					}
					d.Left = append(d.Left, l)
				}
			}
		}
		nr := r.Uvarint(MaxRequestsPerDay)
		if requests == nil || uint64(cap(requests)) < nr {
			requests = make([]uint64, 0, nr+1) // room for the request the merge appends
		}
		for range nr {
			requests = append(requests, binary.LittleEndian.Uint64(r.Bytes(8)))
		}
		d.Requests = requests
		if v >= stateVersion {
			d.HandedIn = binary.LittleEndian.Uint64(r.Bytes(8))
		}
		if len(days) > 1 && d.Day <= days[len(days)-2].Day {
			r.Check(false)
		}
	}
	if r.Err() != nil {
		return nil, fmt.Errorf("%w: %d bytes", ErrCorruptState, len(b))
	}
	return days, nil
}

// regions holds the region names decoded so far, up to maxInterned of them: a state's region
// is usually one of a few names, and decoding it from this list costs no allocation.
var regions atomic.Pointer[[]string]

const maxInterned = 64

// regionName returns b as a string of its own, the interned one if b is a known region
// name.
func regionName[T string | []byte](b T) string {
	if len(b) == 0 {
		return ""
	}
	known := regions.Load()
	if known != nil {
		for _, s := range *known {
			if s == string(b) {
				return s
			}
		}
	}
	s := string([]byte(b)) // a copy also when T is string
	if known == nil || len(*known) < maxInterned {
		var grown []string
		if known != nil {
			grown = append(grown, *known...)
		}
		grown = append(grown, s)
		regions.CompareAndSwap(known, &grown) // lost to another decoder: the name waits for the next miss
	}
	return s
}
