package topics

import (
	"errors"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"
)

// ErrInvalid is wrapped by every validation failure; errors.Is(err, ErrInvalid) tells a bad
// record (dead-letter it) from an infrastructure failure (retry it).
var ErrInvalid = errors.New("invalid event")

// InvalidError says why a record was rejected. Reason is short, stable text that goes into the
// dead-letter record's reason header.
type InvalidError struct{ Reason string }

func (e *InvalidError) Error() string { return "invalid event: " + e.Reason }

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *InvalidError) Unwrap() error { return ErrInvalid }

func invalid(format string, args ...any) error {
	return &InvalidError{Reason: fmt.Sprintf(format, args...)}
}

// Limits on identifiers and record sizes that hold for every input.
const (
	// MaxValueBytes is the largest record value any processor decodes; larger ones are
	// dead-lettered unread.
	MaxValueBytes = 64 << 10
	// MaxIDBytes bounds user, member, device and request ids.
	MaxIDBytes = 128
	// MaxRegionBytes bounds region names.
	MaxRegionBytes = 64
)

// checkID accepts 1..MaxIDBytes of valid UTF-8 without spaces, control characters or ':' (the
// Redis key separator), so that an id can be embedded in a key unescaped.
func checkID(field, id string) error {
	if id == "" {
		return invalid("%s: missing", field)
	}
	return checkToken(field, id, MaxIDBytes)
}

func checkToken(field, s string, max int) error {
	if len(s) > max {
		return invalid("%s: longer than %d bytes", field, max)
	}
	if !utf8.ValidString(s) {
		return invalid("%s: not valid UTF-8", field)
	}
	for _, r := range s {
		if r <= ' ' || r == 0x7f || r == ':' {
			return invalid("%s: contains %q", field, r)
		}
	}
	return nil
}

var zones sync.Map // IANA name -> *time.Location, successes only

// LoadZone returns the IANA time zone, cached. "Local" and "" are rejected: a user's day must
// not depend on the machine that processes it.
func LoadZone(name string) (*time.Location, error) {
	if loc, ok := zones.Load(name); ok {
		return loc.(*time.Location), nil
	}
	if name == "" {
		return nil, invalid("tz: missing")
	}
	if name == "Local" || len(name) > 64 {
		return nil, invalid("tz: unknown zone %q", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, invalid("tz: unknown zone %q", name)
	}
	zones.Store(name, loc)
	return loc, nil
}
