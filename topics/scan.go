package topics

import (
	"strconv"
	"strings"
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
	// printable: of the strings, those of printable ASCII only (' ' to '~', no escape), which
	// pass checkText as they are.
	printable uint
	// escapes: the fields whose strings may hold JSON's escapes of one character (\" \\ \/ \b
	// \f \n \r \t), set by the caller before scan (none by default); escaped: those whose
	// strings hold one (field unescapes them).
	escapes, escaped uint
	// wideStr tells that a string holds a byte of 0x80 or above: without one, b is ASCII.
	wideStr bool
}

// scan reads b if it is one object whose keys are known field names exactly as written (field
// gives a name's index, -1 for any other name), each at most once, whose values are strings
// without control characters and without escapes but those o.escapes allows (for the fields in
// strs) or JSON integers (for those in ints), with JSON white space anywhere between the
// tokens. It reports false for anything else, and then leaves o zero but for escapes: no flag
// of a field read before the scan gave up may vouch for the value the JSON decoder then takes
// (of a field given twice, the decoder keeps the last). b must be valid UTF-8.
func (o *flatObject) scan(b []byte, field func([]byte) int, ints, strs uint) bool {
	if o.read(b, field, ints, strs) {
		return true
	}
	*o = flatObject{escapes: o.escapes}
	return false
}

// read is scan without the reset of o when it gives up.
func (o *flatObject) read(b []byte, field func([]byte) int, ints, strs uint) bool {
	i := skipSpace(b, 0)
	if i == len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipSpace(b, i+1) == len(b)
	}
	for {
		ks, ke, _ := scanString(b, i, false)
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
			vs, ve, class := scanString(b, i, o.escapes&(1<<f) != 0)
			if ve < 0 || strs&(1<<f) == 0 {
				return false
			}
			o.span[f] = [2]int{vs, ve}
			o.str |= 1 << f
			if class&notToken == 0 {
				o.plain |= 1 << f
			}
			if class&^notToken == 0 {
				o.printable |= 1 << f
			}
			if class&escape != 0 {
				o.escaped |= 1 << f
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

// field returns field f's value in s, the scanned text as a string ("" when absent): a part of
// s, or a new string if it held escapes.
func (o *flatObject) field(s string, f int) string {
	v := s[o.span[f][0]:o.span[f][1]]
	if o.escaped&(1<<f) == 0 {
		return v
	}
	var b strings.Builder
	b.Grow(len(v))
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '\\' { // scanString let only escapes of one character through
			i++
			c = unescape[v[i]]
		}
		b.WriteByte(c)
	}
	return b.String()
}

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
// '\\' and ':'), has notToken for one checkToken must read rune by rune, wide for one that may
// not be valid UTF-8, and is notToken alone for printable ASCII without escapes.
const (
	notToken   = 1                     // ' ', ':', DEL and every byte of 0x80 and above
	wide       = 2                     // 0x80 and above: part of a multi-byte character
	quoteByte  = 4                     // '"', the end of the string
	stopByte   = 8                     // a control character: not JSON
	escapeByte = 16                    // '\\': an escape
	del        = 32                    // DEL, a control character JSON allows unescaped
	escape     = 64                    // in a string's class: it holds an escape (scanString)
	inString   = notToken | wide | del // the classes of the bytes a string may hold as they are
)

var stringClass = func() (t [256]uint8) {
	for c := range t {
		switch {
		case c == '"':
			t[c] = quoteByte
		case c == '\\':
			t[c] = escapeByte
		case c < ' ':
			t[c] = stopByte
		case c >= 0x80:
			t[c] = notToken | wide
		case c == 0x7f:
			t[c] = notToken | del
		case c == ' ' || c == ':':
			t[c] = notToken
		}
	}
	return t
}()

// unescape gives the byte that JSON's escape of one character stands for (0: not one).
var unescape = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// scanString reads the JSON string starting at b[i] if it holds no control character and no
// escape, or, with escapes, no escape but those of one character (unescape; "\u" is left to the
// decoder): its contents are b[start:end] and its closing quote b[end]; end is -1 otherwise.
// class is the union of its bytes' classes, with escape and notToken if it holds an escape.
func scanString(b []byte, i int, escapes bool) (start, end int, class uint8) {
	if i >= len(b) || b[i] != '"' {
		return 0, -1, 0
	}
	for j := i + 1; j < len(b); j++ {
		c := stringClass[b[j]]
		if c&^inString == 0 {
			class |= c
			continue
		}
		switch {
		case c == quoteByte:
			return i + 1, j, class
		case c == escapeByte && escapes && j+1 < len(b) && unescape[b[j+1]] != 0:
			class |= escape | notToken
			j++
			continue
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
