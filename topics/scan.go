package topics

import (
	"strconv"
	"time"
)

// maxFlatFields bounds the fields a flatObject knows.
const maxFlatFields = 8

// flatObject is a JSON object of the common shape of an event, read without the JSON decoder
// (scan): the decoders of the hot paths try it first and leave anything else to the decoder,
// so that both ways give the same results and the same reasons (FuzzStepReportScanMatchesDecoder,
// FuzzSearchQueryScanMatchesDecoder).
type flatObject struct {
	span [maxFlatFields][2]int // of each field seen, its value: a string's contents, an integer's digits
	seen uint                  // the fields seen, by their index
	str  uint                  // of them, those whose value is a string
	// plain: of the strings, those of token bytes only (printable ASCII but ':'), which pass
	// checkToken's rule on characters as they are.
	plain uint
	// wideStr tells that a string holds a byte of 0x80 or above: without one, b is ASCII.
	wideStr bool
}

// scan reads b if it is one object whose keys are known field names exactly as written (field
// gives a name's index, -1 for any other name), each at most once, whose values are strings
// without escapes or control characters (for the fields in strs) or JSON integers (for those
// in ints), with JSON white space anywhere between the tokens. It reports false for anything
// else. b must be valid UTF-8.
func (o *flatObject) scan(b []byte, field func([]byte) int, ints, strs uint) bool {
	i := skipSpace(b, 0)
	if i == len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipSpace(b, i+1) == len(b)
	}
	for {
		ks, ke, _ := scanString(b, i)
		if ke < 0 {
			return false
		}
		f := field(b[ks:ke])
		if f < 0 || o.seen&(1<<f) != 0 {
			return false
		}
		o.seen |= 1 << f
		if i = skipSpace(b, ke+1); i == len(b) || b[i] != ':' {
			return false
		}
		if i = skipSpace(b, i+1); i == len(b) {
			return false
		}
		if b[i] == '"' {
			vs, ve, class := scanString(b, i)
			if ve < 0 || strs&(1<<f) == 0 {
				return false
			}
			o.span[f] = [2]int{vs, ve}
			o.str |= 1 << f
			if class&notToken == 0 {
				o.plain |= 1 << f
			}
			o.wideStr = o.wideStr || class&wide != 0
			i = ve + 1
		} else {
			e := scanInt(b, i)
			if e == i || ints&(1<<f) == 0 {
				return false
			}
			o.span[f] = [2]int{i, e}
			i = e
		}
		if i = skipSpace(b, i); i == len(b) {
			return false
		}
		if b[i] == ',' {
			i = skipSpace(b, i+1)
			continue
		}
		if b[i] != '}' {
			return false
		}
		return skipSpace(b, i+1) == len(b)
	}
}

// field returns field f's value in s, the scanned text as a string ("" when absent).
func (o *flatObject) field(s string, f int) string { return s[o.span[f][0]:o.span[f][1]] }

// time returns the event time of field f in s (the zero time when absent) as Timestamp decodes
// it: an integer that fits int64 is epoch milliseconds, a string RFC 3339. ok is false when it
// does not parse.
func (o *flatObject) time(s string, f int) (t time.Time, ok bool) {
	if o.seen&(1<<f) == 0 {
		return time.Time{}, true
	}
	if o.str&(1<<f) != 0 {
		t, err := time.Parse(time.RFC3339Nano, o.field(s, f))
		return t, err == nil
	}
	digits := o.field(s, f)
	if ms, ok := smallInt(digits); ok {
		return time.UnixMilli(ms), true
	}
	ms, err := strconv.ParseInt(digits, 10, 64)
	return time.UnixMilli(ms), err == nil
}

// smallInt reads s if it is an optional '-' and 1 to 18 decimal digits, as strconv.ParseInt
// does (18 digits never overflow int64); ok is false for anything else, which ParseInt then
// decides.
func smallInt[T ~string | ~[]byte](s T) (n int64, ok bool) {
	digits := s
	if len(s) > 0 && s[0] == '-' {
		digits = s[1:]
	}
	if len(digits) == 0 || len(digits) > 18 {
		return 0, false
	}
	for i := range len(digits) {
		c := digits[i] - '0'
		if c > 9 {
			return 0, false
		}
		n = n*10 + int64(c)
	}
	if len(digits) < len(s) {
		n = -n
	}
	return n, true
}

// skipSpace returns the index of the first byte at or after i that is not JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && b[i] <= ' ' && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// Classes of a byte inside a JSON string (stringClass), for scanString: a union of the
// classes of a string's bytes is 0 for a string of token bytes only (printable ASCII but '"',
// '\\' and ':'), has notToken for one checkToken must read rune by rune and wide for one that
// may not be valid UTF-8.
const (
	notToken  = 1               // ' ', ':', DEL and every byte of 0x80 and above
	wide      = 2               // 0x80 and above: part of a multi-byte character
	quoteByte = 4               // '"', the end of the string
	stopByte  = 8               // '\\' or a control character: an escape, or not JSON
	inString  = notToken | wide // the classes a string may hold
)

var stringClass = func() (t [256]uint8) {
	for c := range t {
		switch {
		case c == '"':
			t[c] = quoteByte
		case c == '\\' || c < ' ':
			t[c] = stopByte
		case c >= 0x80:
			t[c] = notToken | wide
		case c == ' ' || c == ':' || c == 0x7f:
			t[c] = notToken
		}
	}
	return t
}()

// scanString reads the JSON string starting at b[i] if it holds no escape and no control
// character: its contents are b[start:end] and its closing quote b[end]; end is -1 otherwise.
// class is the union of its bytes' classes.
func scanString(b []byte, i int) (start, end int, class uint8) {
	if i >= len(b) || b[i] != '"' {
		return 0, -1, 0
	}
	for j := i + 1; j < len(b); j++ {
		c := stringClass[b[j]]
		if c&^inString == 0 {
			class |= c
			continue
		}
		if c == quoteByte {
			return i + 1, j, class
		}
		return 0, -1, 0
	}
	return 0, -1, 0
}

// scanInt returns the end of the JSON integer (-?(0|[1-9][0-9]*)) starting at b[i], or i if
// there is none. What follows it is the caller's to check: a fraction or an exponent is not
// a delimiter, so the caller gives up.
func scanInt(b []byte, i int) int {
	j := i
	if j < len(b) && b[j] == '-' {
		j++
	}
	switch {
	case j == len(b) || b[j] < '0' || b[j] > '9':
		return i
	case b[j] == '0':
		return j + 1
	}
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	return j
}
