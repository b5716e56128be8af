package scores

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/rankstream/rankstream/internal/board"
)

// stateVersion is the version byte of the state's encoding.
const stateVersion = 1

// Bounds of a decoded state (Apply keeps far below them).
const (
	maxBoards     = 1 << 16
	maxEntries    = 1 << 20
	maxStringSize = 1 << 10
)

// MarshalBinary encodes the state: a version byte, then per board its name, floor, request
// ids (hash fixed 8 bytes, ts) and entries (period, id, end, presence, score, reach time,
// scope, scopes left), counts and numbers as varints.
func (s *State) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, 16+len(s.Boards)*64)
	b = append(b, stateVersion)
	b = binary.AppendUvarint(b, uint64(len(s.Boards)))
	for _, bs := range s.Boards {
		b = appendString(b, bs.Board)
		b = binary.AppendVarint(b, bs.FloorMs)
		b = binary.AppendUvarint(b, uint64(len(bs.Requests)))
		for _, r := range bs.Requests {
			b = binary.LittleEndian.AppendUint64(b, r.Hash)
			b = binary.AppendVarint(b, r.TSMs)
		}
		b = binary.AppendUvarint(b, uint64(len(bs.Entries)))
		for _, e := range bs.Entries {
			b = append(b, byte(slices.Index(board.Periods, e.Period)))
			b = appendString(b, e.ID)
			b = binary.AppendVarint(b, e.EndMs)
			present := byte(0)
			if e.Present {
				present = 1
			}
			b = append(b, present)
			b = binary.AppendVarint(b, e.Score)
			b = binary.AppendVarint(b, e.ReachedMs)
			b = appendString(b, e.Scope)
			b = binary.AppendUvarint(b, uint64(len(e.Left)))
			for _, l := range e.Left {
				b = appendString(b, l)
			}
		}
	}
	return b, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// ErrCorruptState is returned by UnmarshalBinary for bytes MarshalBinary did not make.
var ErrCorruptState = errors.New("scores: corrupt state")

// UnmarshalBinary decodes what MarshalBinary made. It checks every invariant Apply keeps
// (orders, ranges, bounds) and touches the receiver only on success.
func (s *State) UnmarshalBinary(data []byte) error {
	d := decoder{b: data}
	if v := d.byte(); v != stateVersion {
		return fmt.Errorf("%w: version %d", ErrCorruptState, v)
	}
	boards := make([]BoardState, 0, d.count(maxBoards))
	for range cap(boards) {
		bs := BoardState{Board: d.string(), FloorMs: d.varint()}
		d.check(board.ValidName(bs.Board) && (len(boards) == 0 || boards[len(boards)-1].Board < bs.Board))
		bs.Requests = make([]Request, 0, d.count(MaxRequests))
		for range cap(bs.Requests) {
			r := Request{Hash: binary.LittleEndian.Uint64(d.bytes(8)), TSMs: d.varint()}
			d.check(len(bs.Requests) == 0 || compareRequests(bs.Requests[len(bs.Requests)-1], r) < 0)
			bs.Requests = append(bs.Requests, r)
		}
		bs.Entries = make([]Entry, 0, d.count(maxEntries))
		for range cap(bs.Entries) {
			e := d.entry()
			if n := len(bs.Entries); n > 0 {
				prev := bs.Entries[n-1]
				c := comparePeriod(prev.Period, e.Period)
				d.check(c < 0 || c == 0 && prev.ID < e.ID)
			}
			bs.Entries = append(bs.Entries, e)
		}
		d.check(len(bs.Entries)+len(bs.Requests) > 0)
		boards = append(boards, bs)
	}
	if d.err != nil || len(d.b) != 0 {
		return fmt.Errorf("%w: %d bytes", ErrCorruptState, len(data))
	}
	s.Boards = boards
	return nil
}

func (d *decoder) entry() Entry {
	p := d.byte()
	d.check(int(p) < len(board.Periods))
	e := Entry{Period: board.Periods[min(int(p), len(board.Periods)-1)], ID: d.string(), EndMs: d.varint()}
	present := d.byte()
	e.Present = present == 1
	e.Score, e.ReachedMs, e.Scope = d.varint(), d.varint(), d.string()
	d.check(present <= 1 && e.ID != "" && (e.EndMs == 0) == (e.Period == board.PeriodTotal) &&
		inRange(e.Score) && (e.Present || e.Score == 0 && e.ReachedMs == 0))
	if n := d.count(MaxScopesPerPeriod - 1); n > 0 {
		e.Left = make([]string, 0, n)
		for range n {
			l := d.string()
			d.check(l != "" && l != e.Scope && (len(e.Left) == 0 || e.Left[len(e.Left)-1] < l))
			e.Left = append(e.Left, l)
		}
	}
	return e
}

// decoder reads a byte slice, remembering the first failure; after one it returns zeros.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) check(ok bool) {
	if !ok {
		d.err, d.b = ErrCorruptState, nil
	}
}

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.check(false)
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

// count reads a count of at most max items, each of which takes at least one byte.
func (d *decoder) count(max uint64) int {
	v, n := binary.Uvarint(d.b)
	d.check(n > 0 && v <= max && v <= uint64(len(d.b)-n))
	if d.err != nil {
		return 0
	}
	d.b = d.b[n:]
	return int(v)
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	d.check(n > 0)
	if d.err != nil {
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) string() string { return string(d.bytes(d.count(maxStringSize))) }

func (d *decoder) bytes(n int) []byte {
	if len(d.b) < n {
		d.check(false)
		return make([]byte, n)
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}
