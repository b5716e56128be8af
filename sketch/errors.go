package sketch

import "errors"

var (
	// ErrInvalidOption is returned by New when an option is out of range or
	// options contradict each other.
	ErrInvalidOption = errors.New("invalid option")
	// ErrShapeMismatch is returned by Merge when the two windows were built
	// with different options.
	ErrShapeMismatch = errors.New("shape mismatch")
	// ErrOverflow is returned by Merge when the merged window would hold
	// more events than its 32-bit counters can count (see Stats.DroppedFull).
	ErrOverflow = errors.New("counter overflow")
	// ErrCorrupt is returned by UnmarshalBinary for data that is not a valid
	// encoding of a Window.
	ErrCorrupt = errors.New("corrupt encoding")
	// ErrVersion is returned by UnmarshalBinary for an encoding version this
	// package does not know.
	ErrVersion = errors.New("unknown encoding version")
)
