package topics

import (
	"errors"
	"fmt"
	"sync"
	"time"
	"unicode"
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
	// MaxJSONDepth bounds the nesting of a record's JSON (unknown fields included): the
	// contract's objects are flat, and the stdlib and the fast decoder disagree beyond 10,000.
	MaxJSONDepth = 32
)

// checkID accepts 1..MaxIDBytes of valid UTF-8 without white space, control or format
// characters (bidi controls, zero-width characters), U+FFFD or ':' (the Redis key separator), so
// that an id can be embedded in a key unescaped and two ids that look alike are equal.
func checkID(field, id string) error {
	if id == "" {
		return invalid("%s: missing", field)
	}
	return checkToken(field, id, MaxIDBytes)
}

// checkIDPlain is checkID for an id that a scan found made of token bytes only when plain
// (flatObject.plain): then only its length is left to check.
func checkIDPlain(field, id string, plain bool) error {
	if plain && id != "" && len(id) <= MaxIDBytes {
		return nil
	}
	return checkID(field, id)
}

// checkTokenPlain is checkToken for s, which a scan found made of token bytes only when plain.
func checkTokenPlain(field, s string, max int, plain bool) error {
	if plain && len(s) <= max {
		return nil
	}
	return checkToken(field, s, max)
}

func checkToken(field, s string, max int) error {
	if len(s) > max {
		return invalid("%s: %d bytes, longer than %d", field, len(s), max)
	}
	if !utf8.ValidString(s) {
		return invalid("%s: not valid UTF-8", field)
	}
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf { // ASCII: the same rule without the Unicode tables
			if c == ':' || c <= ' ' || c == 0x7f {
				return invalid("%s: contains %U", field, rune(c))
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) || unicode.In(r, unicode.Cc, unicode.Cf) || r == utf8.RuneError {
			return invalid("%s: contains %U", field, r)
		}
		i += n
	}
	return nil
}

// checkText accepts free text (a search query): valid UTF-8 without control characters other
// than white space (which Normalize collapses), without U+FFFD (what a JSON decoder makes of a
// lone surrogate escape such as "\udc00") and without format characters (bidi controls,
// zero-width space, word joiner, BOM, soft hyphen) except the zero-width joiner and
// non-joiner and the tag characters, which emoji sequences and several scripts need.
func checkText(field, s string) error {
	if !utf8.ValidString(s) {
		return invalid("%s: not valid UTF-8", field)
	}
	for _, r := range s {
		if r < utf8.RuneSelf && (r >= ' ' && r != 0x7f || unicode.IsSpace(r)) {
			continue // printable ASCII or white space: the common case, without the tables
		}
		switch {
		case r == utf8.RuneError:
			return invalid("%s: contains U+FFFD (e.g. from a lone surrogate escape)", field)
		case unicode.Is(unicode.Cc, r) && !unicode.IsSpace(r),
			unicode.Is(unicode.Cf, r) && r != 0x200C && r != 0x200D && !(0xE0020 <= r && r <= 0xE007F):
			return invalid("%s: contains the control or format character %U", field, r)
		}
	}
	return nil
}

// checkKey accepts a record key of at most MaxIDBytes of valid UTF-8.
func checkKey(key string) error {
	if len(key) > MaxIDBytes {
		return invalid("key: %d bytes, longer than %d", len(key), MaxIDBytes)
	}
	if !utf8.ValidString(key) {
		return invalid("key: not valid UTF-8")
	}
	return nil
}

// checkValue rejects a tombstone, an oversized value and one that is not valid UTF-8 (JSON
// decoders replace invalid bytes by U+FFFD silently, so that "r\xff1" and "r\xfe1" would be
// one id).
func checkValue(value []byte) error {
	if err := checkValueBytes(value); err != nil {
		return err
	}
	return checkDepth(value)
}

// checkValueBytes is checkValue without the nesting depth: a decoder that has seen the value
// is one flat object checks less.
func checkValueBytes(value []byte) error {
	if err := checkValueSize(value); err != nil {
		return err
	}
	return checkUTF8(value)
}

// checkValueSize is checkValueBytes without the UTF-8 check: a decoder whose scan saw only
// ASCII checks less.
func checkValueSize(value []byte) error {
	switch {
	case value == nil:
		return invalid("value: null (a tombstone)")
	case len(value) > MaxValueBytes:
		return invalid("value: %d bytes, over the limit of %d", len(value), MaxValueBytes)
	}
	return nil
}

func checkUTF8(value []byte) error {
	if !utf8.Valid(value) {
		return invalid("value: not valid UTF-8")
	}
	return nil
}

// checkDepth rejects JSON nested deeper than MaxJSONDepth.
func checkDepth(value []byte) error {
	if !shallow(value, MaxJSONDepth) {
		return invalid("value: JSON nested deeper than %d", MaxJSONDepth)
	}
	return nil
}

// shallow reports whether the arrays and objects of a JSON text nest at most max deep (strings
// skipped; the text need not be valid JSON).
func shallow(b []byte, max int) bool {
	depth, inString, escaped := 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			if depth++; depth > max {
				return false
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return true
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
