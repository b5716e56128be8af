package api

import (
	"net/http"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// The board responses are written by hand-written appenders instead of encoding/json: the
// reflection and time.Time's MarshalJSON (which re-compacts its own output) were most of a
// board read's CPU. The output is byte for byte what json.NewEncoder(w).Encode(v) writes for
// the same value (HTML-escaped strings, RFC 3339 times with trimmed fractions, a trailing
// newline), which TestFastJSONMatchesEncodingJSON checks on random values. Field order is the
// structs' declaration order (see their json tags).

// jsonAppender is a response that writes its own JSON.
type jsonAppender interface {
	appendJSON(b []byte) []byte
}

// bufPool holds response buffers; a buffer that grew beyond maxPooledBuf is left to the GC.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

const maxPooledBuf = 64 << 10

// The header values of every JSON answer, shared (net/http copies a handler's header before
// writing it, and an append to a full slice copies it).
var (
	jsonContentType = []string{"application/json"}
	noStore         = []string{"no-store"}
)

// writeJSON writes v with the status code and the headers of obs.WriteJSON.
func writeJSON(w http.ResponseWriter, code int, v jsonAppender) {
	bp := bufPool.Get().(*[]byte)
	b := append(v.appendJSON((*bp)[:0]), '\n')
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["Cache-Control"] = noStore
	h["Content-Length"] = []string{strconv.Itoa(len(b))}
	w.WriteHeader(code)
	_, _ = w.Write(b)
	if cap(b) <= maxPooledBuf {
		*bp = b[:0]
		bufPool.Put(bp)
	}
}

func (e *Entry) appendJSON(b []byte) []byte {
	b = append(b, `{"rank":`...)
	b = strconv.AppendInt(b, e.Rank, 10)
	b = append(b, `,"member":`...)
	b = appendString(b, e.Member)
	b = append(b, `,"score":`...)
	b = strconv.AppendInt(b, e.Score, 10)
	b = append(b, `,"reached_at":`...)
	b = appendTime(b, e.ReachedAt)
	return append(b, '}')
}

func appendEntries(b []byte, es []Entry) []byte {
	if es == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range es {
		if i > 0 {
			b = append(b, ',')
		}
		b = es[i].appendJSON(b)
	}
	return append(b, ']')
}

func (p Page) appendJSON(b []byte) []byte {
	b = appendStepsHead(b, p.Board, p.Day, p.Region)
	return append(p.staleness.appendJSON(appendPage(b, p.Total, p.Offset, p.Items, p.itemsJSON)), '}')
}

func (s Standing) appendJSON(b []byte) []byte {
	b = appendStepsHead(b, s.Board, s.Day, s.Region)
	return append(s.staleness.appendJSON(appendStanding(b, s.Member, s.Above, s.Below, s.Total)), '}')
}

// appendStepsHead writes the fields board, day and region (when not empty) of the steps
// board's responses.
func appendStepsHead(b []byte, board, day, region string) []byte {
	b = append(b, `{"board":`...)
	b = appendString(b, board)
	b = append(b, `,"day":`...)
	b = appendString(b, day)
	if region != "" {
		b = append(b, `,"region":`...)
		b = appendString(b, region)
	}
	return b
}

// appendHead writes the fields board, period, scope and period_end of the generic responses.
func appendHead(b []byte, board, period, scope string, end *time.Time) []byte {
	b = append(b, `{"board":`...)
	b = appendString(b, board)
	b = append(b, `,"period":`...)
	b = appendString(b, period)
	b = append(b, `,"scope":`...)
	b = appendString(b, scope)
	b = append(b, `,"period_end":`...)
	if end == nil {
		return append(b, "null"...)
	}
	return appendTime(b, *end)
}

// appendPage writes the fields total, offset and items of a page (steps or generic board):
// itemsJSON when not nil (items already written), else items.
func appendPage(b []byte, total int64, offset int, items []Entry, itemsJSON []byte) []byte {
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, total, 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, int64(offset), 10)
	b = append(b, `,"items":`...)
	if itemsJSON != nil {
		b = append(b, '[')
		b = append(b, itemsJSON...)
		return append(b, ']')
	}
	return appendEntries(b, items)
}

// encodedRows is a board's rows with each one's JSON object written once, kept beside a hot
// board's cached Top-100: a page cut from it copies its rows' bytes instead of writing them
// again for every request.
type encodedRows struct {
	json []byte // the objects, comma-separated
	ends []int  // ends[i]: where row i's object ends in json
}

func encodeRows(rows []Entry) *encodedRows {
	e := &encodedRows{json: make([]byte, 0, 96*len(rows)), ends: make([]int, len(rows))}
	for i := range rows {
		if i > 0 {
			e.json = append(e.json, ',')
		}
		e.json = rows[i].appendJSON(e.json)
		e.ends[i] = len(e.json)
	}
	return e
}

// items returns the comma-separated objects of rows lo..hi-1 (shared: never written), never
// nil.
func (e *encodedRows) items(lo, hi int) []byte {
	if lo >= hi {
		return []byte{}
	}
	start := 0
	if lo > 0 {
		start = e.ends[lo-1] + 1
	}
	return e.json[start:e.ends[hi-1]:e.ends[hi-1]]
}

// appendStanding writes the fields member, above, below and total of a member's standing
// (steps or generic board).
func appendStanding(b []byte, member Entry, above, below []Entry, total int64) []byte {
	b = append(b, `,"member":`...)
	b = member.appendJSON(b)
	b = append(b, `,"above":`...)
	b = appendEntries(b, above)
	b = append(b, `,"below":`...)
	b = appendEntries(b, below)
	b = append(b, `,"total":`...)
	return strconv.AppendInt(b, total, 10)
}

func (p BoardPage) appendJSON(b []byte) []byte {
	b = appendHead(b, p.Board, p.Period, p.Scope, p.PeriodEnd)
	return append(p.staleness.appendJSON(appendPage(b, p.Total, p.Offset, p.Items, p.itemsJSON)), '}')
}

func (s BoardStanding) appendJSON(b []byte) []byte {
	b = appendHead(b, s.Board, s.Period, s.Scope, s.PeriodEnd)
	return append(s.staleness.appendJSON(appendStanding(b, s.Member, s.Above, s.Below, s.Total)), '}')
}

// appendJSON writes the fields stale and stale_age_ms, both only on a stale answer (without
// the object's braces: the last fields of the object it is in).
func (s staleness) appendJSON(b []byte) []byte {
	if s.Stale {
		b = append(b, `,"stale":true`...)
	}
	if s.StaleAgeMs != nil {
		b = append(b, `,"stale_age_ms":`...)
		b = strconv.AppendInt(b, *s.StaleAgeMs, 10)
	}
	return b
}

// appendTime writes t as time.Time's MarshalJSON does: RFC 3339 with the fraction's trailing
// zeros trimmed. The years it refuses (outside [0, 9999]) are beyond any reach time a board
// holds before the year 10000.
func appendTime(b []byte, t time.Time) []byte {
	if t.Location() != time.UTC || t.Nanosecond()%int(time.Millisecond) != 0 {
		return appendTimeGeneral(b, t)
	}
	// The board times: UTC, whole milliseconds (a third of a top-100 answer's encoding went
	// to the general formatter, and most of the rest to t.Date and t.Clock): the civil date
	// from the days since 1970 (civilDate), the clock from the seconds of the day, every
	// field's two digits at once from a table, into one array appended once.
	sec := t.Unix()
	days, secOfDay := sec/86400, int(sec%86400)
	if secOfDay < 0 {
		days, secOfDay = days-1, secOfDay+86400
	}
	year, month, day := civilDate(days)
	if year < 0 || year > 9999 {
		return appendTimeGeneral(b, t)
	}
	var s [26]byte // "YYYY-MM-DDTHH:MM:SS.mmmZ" and its quotes
	s[0] = '"'
	put2(s[1:], int(year/100))
	put2(s[3:], int(year%100))
	s[5] = '-'
	put2(s[6:], month)
	s[8] = '-'
	put2(s[9:], day)
	s[11] = 'T'
	put2(s[12:], secOfDay/3600)
	s[14] = ':'
	put2(s[15:], secOfDay/60%60)
	s[17] = ':'
	put2(s[18:], secOfDay%60)
	n := 20
	if ms := t.Nanosecond() / int(time.Millisecond); ms != 0 {
		s[20] = '.'
		s[21] = byte('0' + ms/100)
		put2(s[22:], ms%100)
		n = 24
		for s[n-1] == '0' { // trailing zeros trimmed, as RFC3339Nano does
			n--
		}
	}
	s[n], s[n+1] = 'Z', '"'
	return append(b, s[:n+2]...)
}

// put2 writes v (in [0, 99]) as two decimal digits at s[0:2].
func put2(s []byte, v int) {
	const pairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
		"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
		"8081828384858687888990919293949596979899"
	s[0], s[1] = pairs[2*v], pairs[2*v+1]
}

// appendTimeGeneral is appendTime by the general formatter.
func appendTimeGeneral(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// civilDate is the proleptic Gregorian date of the day days after 1970-01-01 (negative:
// before), by Howard Hinnant's days_from_civil inverse (exact for every int64 day count of a
// time.Time).
func civilDate(days int64) (year int64, month, day int) {
	z := days + 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097                                  // [0, 146096]
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // [0, 399]
	doy := doe - (365*yoe + yoe/4 - yoe/100)               // [0, 365]
	mp := (5*doy + 2) / 153                                // [0, 11], from March
	day = int(doy - (153*mp+2)/5 + 1)
	month = int(mp + 3)
	if mp >= 10 {
		month = int(mp - 9)
	}
	year = yoe + era*400
	if month <= 2 {
		year++
	}
	return year, month, day
}

// plainJSON tells the bytes that appendString copies as they are: ASCII but for control
// characters, '"', '\\' and the HTML characters <, > and &.
var plainJSON = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendString writes s as a JSON string exactly as encoding/json does with HTML escaping on
// (its default, and json.Encoder's): <, > and & as \u003c..., control characters escaped,
// invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if plainJSON[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
