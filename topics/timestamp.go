package topics

import (
	"bytes"
	"fmt"
	"strconv"
	"time"
)

// Timestamp is an event time as the contract allows it on the wire: an RFC 3339 string with an
// offset (or Z), or an integer number of milliseconds since the Unix epoch. It marshals as
// epoch milliseconds, the lossless form of what the pipeline keeps.
type Timestamp struct{ time.Time }

// ParseTime reads an event time in text (a "<time>\t<query>" line, a command-line flag): RFC
// 3339 with an offset, or integer epoch milliseconds.
func ParseTime(s string) (time.Time, error) {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.UnixMilli(ms), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("time %q is neither RFC 3339 with an offset nor epoch milliseconds", s)
	}
	return t, nil
}

// UnmarshalJSON accepts "2026-11-30T08:00:00+08:00" or 1796083200000.
func (t *Timestamp) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || bytes.Equal(b, []byte("null")) {
		t.Time = time.Time{}
		return nil
	}
	if b[0] == '"' {
		s, err := strconv.Unquote(string(b))
		if err != nil {
			return fmt.Errorf("timestamp: %w", err)
		}
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return fmt.Errorf("timestamp %q is not RFC 3339 with an offset: %w", s, err)
		}
		t.Time = v
		return nil
	}
	ms, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return fmt.Errorf("timestamp %s is neither an RFC 3339 string nor integer epoch milliseconds", b)
	}
	t.Time = time.UnixMilli(ms)
	return nil
}

// MarshalJSON writes epoch milliseconds.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return strconv.AppendInt(nil, t.UnixMilli(), 10), nil
}

// Millis returns the timestamp in epoch milliseconds.
func (t Timestamp) Millis() int64 { return t.UnixMilli() }
