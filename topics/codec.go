package topics

import (
	"encoding"
	"fmt"
)

// BinaryValue is what Binary needs of a state type: a pointer that marshals itself.
type BinaryValue[T any] interface {
	*T
	encoding.BinaryMarshaler
	encoding.BinaryUnmarshaler
}

// Binary is a goka.Codec for group-table state that marshals itself in a compact, versioned
// binary form. Decode returns a *T.
type Binary[T any, P BinaryValue[T]] struct{}

// Encode marshals a *T.
func (Binary[T, P]) Encode(value any) ([]byte, error) {
	v, ok := value.(P)
	if !ok {
		return nil, fmt.Errorf("binary codec: expected %T, got %T", P(nil), value)
	}
	b, err := v.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("binary codec: encode %T: %w", value, err)
	}
	return b, nil
}

// Decode unmarshals data into a new *T.
func (Binary[T, P]) Decode(data []byte) (any, error) {
	v := P(new(T))
	if err := v.UnmarshalBinary(data); err != nil {
		return nil, fmt.Errorf("binary codec: decode %T: %w", v, err)
	}
	return v, nil
}

// Raw is a goka.Codec that passes bytes through untouched. Inputs use it so that decoding
// happens inside the callback, where a bad record can be routed to the dead-letter topic
// instead of stopping the group.
type Raw struct{}

// Encode returns value, which must be a []byte.
func (Raw) Encode(value any) ([]byte, error) {
	b, ok := value.([]byte)
	if !ok {
		return nil, fmt.Errorf("raw codec: expected []byte, got %T", value)
	}
	return b, nil
}

// Decode returns data as it is.
func (Raw) Decode(data []byte) (any, error) { return data, nil }
