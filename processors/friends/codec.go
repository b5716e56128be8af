package friends

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/rankstream/rankstream/topics"
)

// stateVersion is the version byte of the state's encoding.
const stateVersion = 1

// ErrCorruptState is returned by UnmarshalBinary for bytes MarshalBinary did not make.
var ErrCorruptState = errors.New("friends: corrupt state")

// MarshalBinary encodes the state: a version byte, the floor (varint), the count of pairs
// (uvarint), then per pair its friend id, a flags byte (bit 0: add; bits 1-2: the refusal)
// and its ts (varint). At the bounds (MaxFriends adds and MaxRemoved removals of ids of
// topics.MaxIDBytes) a state is under 1 MiB.
func (s *State) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, 16+len(s.Pairs)*24)
	b = append(b, stateVersion)
	b = binary.AppendVarint(b, s.FloorMs)
	b = binary.AppendUvarint(b, uint64(len(s.Pairs)))
	for _, p := range s.Pairs {
		b = topics.AppendString(b, p.Friend)
		flags := byte(p.Refused) << 1
		if p.Add {
			flags |= 1
		}
		b = append(b, flags)
		b = binary.AppendVarint(b, p.TSMs)
	}
	return b, nil
}

// UnmarshalBinary decodes what MarshalBinary made. It checks every invariant Apply keeps
// (order, bounds, ranges) and touches the receiver only on success.
func (s *State) UnmarshalBinary(data []byte) error {
	d := topics.NewBinaryReader(data, ErrCorruptState)
	if v := d.Byte(); v != stateVersion {
		return fmt.Errorf("%w: version %d", ErrCorruptState, v)
	}
	floor := d.Varint()
	d.Check(floor >= 0 && floor <= topics.MaxFriendTSMillis+1)
	pairs := make([]Pair, 0, d.Count(MaxFriends+MaxRemoved))
	friends := 0
	for range cap(pairs) {
		p := Pair{Op: Op{Friend: d.String(topics.MaxIDBytes)}}
		flags := d.Byte()
		p.Add, p.Refused, p.TSMs = flags&1 == 1, Refusal(flags>>1), d.Varint()
		d.Check(p.Friend != "" && p.Refused <= RefusedForgotten && !(p.Add && p.Refused != NotRefused) &&
			p.TSMs >= 0 && p.TSMs <= topics.MaxFriendTSMillis &&
			(len(pairs) == 0 || pairs[len(pairs)-1].Friend < p.Friend))
		if p.Add {
			friends++
		}
		pairs = append(pairs, p)
	}
	d.Check(friends <= MaxFriends && len(pairs)-friends <= MaxRemoved)
	if d.Err() != nil {
		return fmt.Errorf("%w: %d bytes", ErrCorruptState, len(data))
	}
	s.Pairs, s.FloorMs, s.friends = pairs, floor, friends
	return nil
}
