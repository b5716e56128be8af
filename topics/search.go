package topics

import (
	"time"

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
func DecodeSearchQuery(key string, value []byte, recordTime time.Time) (q *SearchQuery, term string, err error) {
	return decodeSearchQuery(key, value, recordTime, true)
}

// decodeSearchQuery is DecodeSearchQuery; with scan it first tries scanSearchQuery, which
// decodes the common shape of a query in a fraction of the JSON decoder's time and leaves
// anything else to the decoder, so that both ways give the same queries and the same reasons
// (FuzzSearchQueryScanMatchesDecoder).
func decodeSearchQuery(key string, value []byte, recordTime time.Time, scan bool) (q *SearchQuery, term string, err error) {
	if err := checkValueBytes(value); err != nil {
		return nil, "", err
	}
	q = new(SearchQuery)
	flat := scan && scanSearchQuery(value, q) // a flat object is never too deep
	if !flat {
		if err := checkDepth(value); err != nil {
			return nil, "", err
		}
	}
	if err := checkKey(key); err != nil {
		return nil, "", err
	}
	if !flat {
		if err := json.Unmarshal(value, q); err != nil {
			return nil, "", invalid("json: %v", err)
		}
	}
	if q.TS.IsZero() {
		return nil, "", invalid("ts: missing")
	}
	if err := checkTime(q.TS.Time, recordTime, SearchMaxAge, SearchFutureSkew); err != nil {
		return nil, "", err
	}
	if q.UserID != "" {
		if err := checkID("user_id", q.UserID); err != nil {
			return nil, "", err
		}
	}
	if q.Query == "" {
		return nil, "", invalid("query: missing")
	}
	if err := checkText("query", q.Query); err != nil {
		return nil, "", err
	}
	term = Normalize(q.Query)
	switch {
	case term == "":
		return nil, "", invalid("query: empty after normalisation")
	case len(term) > MaxQueryBytes:
		return nil, "", invalid("query: %d bytes after normalisation, over the limit of %d", len(term), MaxQueryBytes)
	}
	return q, term, nil
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
// the field names exactly as written in SearchQuery, strings without escapes, ts an integer
// that fits int64 or an RFC 3339 string that parses). For anything else it returns false and
// leaves q untouched: the JSON decoder then decides, with its reasons. b must be valid UTF-8.
// The strings of q share one copy of b.
func scanSearchQuery(b []byte, q *SearchQuery) bool {
	var o flatObject
	if !o.scan(b, searchField, 1<<fieldQueryTS, 1<<fieldQuery|1<<fieldQueryTS|1<<fieldQueryUserID) {
		return false
	}
	s := string(b)
	ts, ok := o.time(s, fieldQueryTS)
	if !ok {
		return false
	}
	*q = SearchQuery{Query: o.field(s, fieldQuery), TS: Timestamp{ts}, UserID: o.field(s, fieldQueryUserID)}
	return true
}
