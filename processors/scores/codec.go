package scores

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/topics"
)

// Versions of the state's encoding. Version 1 had no fair play (flags, rate minutes); it is
// still decoded (neither banned nor frozen, no minute counted).
const (
	stateVersion1 = 1
	stateVersion  = 2
)

// Flags of a board's state (version 2).
const (
	flagBanned = 1 << iota
	flagFrozen
)

// Bounds of a decoded state (Apply keeps far below them).
const (
	maxBoards     = 1 << 16
	maxEntries    = 1 << 20
	maxStringSize = 1 << 10
)

// MarshalBinary encodes the state: a version byte, then per board its name, floor, flags
// (banned, frozen), rate minutes (minute, ops, points), request ids (hash fixed 8 bytes, ts)
// and entries (period, id, end, presence, score, reach time, scope, scopes left), counts and
// numbers as varints.
func (s *State) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, 16+len(s.Boards)*64)
	b = append(b, stateVersion)
	b = binary.AppendUvarint(b, uint64(len(s.Boards)))
	for _, bs := range s.Boards {
		b = topics.AppendString(b, bs.Board)
		b = binary.AppendVarint(b, bs.FloorMs)
		flags := byte(0)
		if bs.Banned {
			flags |= flagBanned
		}
		if bs.Frozen {
			flags |= flagFrozen
		}
		b = append(b, flags)
		b = binary.AppendUvarint(b, uint64(len(bs.Rate)))
		for _, r := range bs.Rate {
			b = binary.AppendVarint(b, r.Minute)
			b = binary.AppendVarint(b, r.Ops)
			b = binary.AppendVarint(b, r.Points)
		}
		b = binary.AppendUvarint(b, uint64(len(bs.Requests)))
		for _, r := range bs.Requests {
			b = binary.LittleEndian.AppendUint64(b, r.Hash)
			b = binary.AppendVarint(b, r.TSMs)
		}
		b = binary.AppendUvarint(b, uint64(len(bs.Entries)))
		for _, e := range bs.Entries {
			b = append(b, byte(slices.Index(board.Periods, e.Period)))
			b = topics.AppendString(b, e.ID)
			b = binary.AppendVarint(b, e.EndMs)
			present := byte(0)
			if e.Present {
				present = 1
			}
			b = append(b, present)
			b = binary.AppendVarint(b, e.Score)
			b = binary.AppendVarint(b, e.ReachedMs)
			b = topics.AppendString(b, e.Scope)
			b = binary.AppendUvarint(b, uint64(len(e.Left)))
			for _, l := range e.Left {
				b = topics.AppendString(b, l)
			}
		}
	}
	return b, nil
}

// ErrCorruptState is returned by UnmarshalBinary for bytes MarshalBinary did not make.
var ErrCorruptState = errors.New("scores: corrupt state")

// UnmarshalBinary decodes what MarshalBinary made. It checks every invariant Apply keeps
// (orders, ranges, bounds) and touches the receiver only on success.
func (s *State) UnmarshalBinary(data []byte) error {
	d := topics.NewBinaryReader(data, ErrCorruptState)
	v := d.Byte()
	if v != stateVersion && v != stateVersion1 {
		return fmt.Errorf("%w: version %d", ErrCorruptState, v)
	}
	boards := make([]BoardState, 0, d.Count(maxBoards))
	for range cap(boards) {
		bs := BoardState{Board: d.String(maxStringSize), FloorMs: d.Varint()}
		d.Check(board.ValidName(bs.Board) && (len(boards) == 0 || boards[len(boards)-1].Board < bs.Board))
		if v == stateVersion {
			flags := d.Byte()
			d.Check(flags&^(flagBanned|flagFrozen) == 0)
			bs.Banned, bs.Frozen = flags&flagBanned != 0, flags&flagFrozen != 0
			if n := d.Count(RateMinutes); n > 0 {
				bs.Rate = make([]RateMinute, 0, n)
				for range n {
					r := RateMinute{Minute: d.Varint(), Ops: d.Varint(), Points: d.Varint()}
					d.Check(r.Ops > 0 && r.Points >= 0 && (len(bs.Rate) == 0 || bs.Rate[len(bs.Rate)-1].Minute < r.Minute))
					bs.Rate = append(bs.Rate, r)
				}
				d.Check(bs.Rate[n-1].Minute-bs.Rate[0].Minute < RateMinutes)
			}
		}
		bs.Requests = make([]Request, 0, d.Count(MaxRequests))
		for range cap(bs.Requests) {
			r := Request{Hash: binary.LittleEndian.Uint64(d.Bytes(8)), TSMs: d.Varint()}
			d.Check(len(bs.Requests) == 0 || compareRequests(bs.Requests[len(bs.Requests)-1], r) < 0)
			bs.Requests = append(bs.Requests, r)
		}
		bs.Entries = make([]Entry, 0, d.Count(maxEntries))
		for range cap(bs.Entries) {
			e := readEntry(d)
			if n := len(bs.Entries); n > 0 {
				prev := bs.Entries[n-1]
				c := comparePeriod(prev.Period, e.Period)
				d.Check(c < 0 || c == 0 && prev.ID < e.ID)
			}
			bs.Entries = append(bs.Entries, e)
		}
		d.Check(len(bs.Entries)+len(bs.Requests) > 0 || bs.Banned || bs.Frozen)
		boards = append(boards, bs)
	}
	if d.Err() != nil {
		return fmt.Errorf("%w: %d bytes", ErrCorruptState, len(data))
	}
	s.Boards = boards
	return nil
}

func readEntry(d *topics.BinaryReader) Entry {
	p := d.Byte()
	d.Check(int(p) < len(board.Periods))
	e := Entry{Period: board.Periods[min(int(p), len(board.Periods)-1)], ID: d.String(maxStringSize), EndMs: d.Varint()}
	present := d.Byte()
	e.Present = present == 1
	e.Score, e.ReachedMs, e.Scope = d.Varint(), d.Varint(), d.String(maxStringSize)
	d.Check(present <= 1 && e.ID != "" && (e.EndMs == 0) == (e.Period == board.PeriodTotal) &&
		inRange(e.Score) && (e.Present || e.Score == 0 && e.ReachedMs == 0))
	if n := d.Count(MaxScopesPerPeriod - 1); n > 0 {
		e.Left = make([]string, 0, n)
		for range n {
			l := d.String(maxStringSize)
			d.Check(l != "" && l != e.Scope && (len(e.Left) == 0 || e.Left[len(e.Left)-1] < l))
			e.Left = append(e.Left, l)
		}
	}
	return e
}
