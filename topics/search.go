package topics

import (
	"time"
	"unsafe"

	"github.com/segmentio/encoding/json"
)

// MaxQueryBytes bounds a search query after normalisation; longer ones are dead-lettered.
const MaxQueryBytes = 256

// Bounds of a search query's ts, measured against the record's Kafka timestamp (not the wall
// clock, so that a replay decides the same). The past bound is the inputs' retention: the
// hot group may be fed a backlog (queries hours or days old, written now), but never more
// than the input keeps. The future bound is the steps' default skew and the hot windows'
// default lookahead: a query later than that could only be counted in a window that is not
// open yet, and would move its partition's watermark ahead of the other queries.
const (
	SearchMaxAge     = DefaultStreamRetention
	SearchFutureSkew = 5 * time.Minute
)

// DecodeSearchQuery decodes and validates one search.queries record and returns it with its
// term: the query normalised by Normalize, which is what hot search counts. q.Query keeps the
// query as it was sent. recordTime is the record's Kafka timestamp.
//
// A record is rejected, with an error wrapping ErrInvalid that says why, when it is a
// tombstone; when the key is over MaxIDBytes or not valid UTF-8; when the value is over
// MaxValueBytes, not valid UTF-8 or not a JSON object; when ts is missing, malformed, older
// than SearchMaxAge or later than SearchFutureSkew against recordTime; when user_id is given
// and not a valid id; or when the query is missing, contains control or format characters
// or U+FFFD (checkText), is empty after normalisation or longer than MaxQueryBytes after it.
//
// For a query of the common shape, q's strings and term share value's memory instead of
// copying it: value must not change while they are used, and a string kept keeps all of
// value in memory.
func DecodeSearchQuery(key string, value []byte, recordTime time.Time) (*SearchQuery, string, error) {
	q := new(SearchQuery)
	term, err := decodeSearchQuery(key, value, recordTime, true, q)
	if err != nil {
		return nil, "", err
	}
	return q, term, nil
}

// DecodeSearchTerm is DecodeSearchQuery for a caller that needs only what hot search counts of
// a query: its term and its event time. The hot group calls it for every query: it allocates
// nothing for a query of the common shape, where DecodeSearchQuery allocates the query.
func DecodeSearchTerm(key string, value []byte, recordTime time.Time) (term string, ts time.Time, err error) {
	var q SearchQuery
	term, err = decodeSearchQuery(key, value, recordTime, true, &q)
	return term, q.TS.Time, err
}

// decodeSearchQuery is DecodeSearchQuery into q; with scan it first tries scanSearchQuery,
// which decodes the common shape of a query in a fraction of the JSON decoder's time and
// leaves anything else to the decoder, so that both ways give the same queries and the same
// reasons (FuzzSearchQueryScanMatchesDecoder). The scan also tells which checks the bytes it
// read pass already: a value of ASCII strings is valid UTF-8, a user id of token bytes only
// passes checkID but for its length, a query of printable ASCII passes checkText.
func decodeSearchQuery(key string, value []byte, recordTime time.Time, scan bool, q *SearchQuery) (term string, err error) {
	if err := checkValueSize(value); err != nil {
		return "", err
	}
	var o flatObject
	flat := scan && scanSearchQuery(value, &o, q)
	if !flat || o.wideStr {
		if err := checkUTF8(value); err != nil {
			return "", err
		}
	}
	if !flat { // a flat object is never too deep
		if err := checkDepth(value); err != nil {
			return "", err
		}
	}
	// A key equal to a user_id of token bytes only is ASCII, so it passes checkKey if short.
	if !flat || o.plain&(1<<fieldQueryUserID) == 0 || key != q.UserID || len(key) > MaxIDBytes {
		if err := checkKey(key); err != nil {
			return "", err
		}
	}
	if !flat {
		jq := new(SearchQuery) // on the heap (the decoder keeps a pointer), so only on this path
		if err := json.Unmarshal(value, jq); err != nil {
			return "", invalid("json: %v", err)
		}
		*q = *jq
	}
	if q.TS.IsZero() {
		return "", invalid("ts: missing")
	}
	if err := checkTime(q.TS.Time, recordTime, SearchMaxAge, SearchFutureSkew); err != nil {
		return "", err
	}
	if q.UserID != "" {
		if err := checkIDPlain("user_id", q.UserID, o.plain&(1<<fieldQueryUserID) != 0); err != nil { // o's flags are zero unless flat
			return "", err
		}
	}
	if q.Query == "" {
		return "", invalid("query: missing")
	}
	if o.printable&(1<<fieldQuery) == 0 {
		if err := checkText("query", q.Query); err != nil {
			return "", err
		}
	}
	term = Normalize(q.Query)
	switch {
	case term == "":
		return "", invalid("query: empty after normalisation")
	case len(term) > MaxQueryBytes:
		return "", invalid("query: %d bytes after normalisation, over the limit of %d", len(term), MaxQueryBytes)
	}
	return term, nil
}

// The fields scanSearchQuery knows, by their index in its flatObject.
const (
	fieldQuery = iota
	fieldQueryTS
	fieldQueryUserID
)

func searchField(name []byte) int {
	switch string(name) {
	case "query":
		return fieldQuery
	case "ts":
		return fieldQueryTS
	case "user_id":
		return fieldQueryUserID
	}
	return -1
}

// scanSearchQuery decodes b into q if b is a search query of the common shape (flatObject.scan:
// the field names exactly as written in SearchQuery, strings without escapes but those of one
// character in the query, ts an integer that fits int64 or an RFC 3339 string that parses).
// For anything else it returns false, leaves q untouched and o's flags zero: the JSON decoder
// then decides, with its reasons. b must be valid UTF-8 for q's strings to be; they share b's memory (but
// a query with escapes).
func scanSearchQuery(b []byte, o *flatObject, q *SearchQuery) bool {
	o.escapes = 1 << fieldQuery // the tabs and newlines of a query typed in a text area
	if !o.scan(b, searchField, 1<<fieldQueryTS, 1<<fieldQuery|1<<fieldQueryTS|1<<fieldQueryUserID) {
		return false
	}
	s := unsafe.String(unsafe.SliceData(b), len(b))
	ts, ok := o.time(s, fieldQueryTS)
	if !ok {
		*o = flatObject{}
		return false
	}
	*q = SearchQuery{Query: o.field(s, fieldQuery), TS: Timestamp{ts}, UserID: o.field(s, fieldQueryUserID)}
	return true
}
