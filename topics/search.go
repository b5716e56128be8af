package topics

import (
	"strings"
	"unicode/utf8"

	"github.com/segmentio/encoding/json"
)

// MaxQueryBytes bounds a search query after normalisation; longer ones are dead-lettered.
const MaxQueryBytes = 256

// DecodeSearchQuery decodes and validates one search.queries record and returns it with its
// term: the query normalised by Normalize, which is what hot search counts. q.Query keeps the
// query as it was sent.
//
// A record is rejected, with an error wrapping ErrInvalid that says why, when the value is over
// MaxValueBytes, not valid UTF-8 or not a JSON object; when ts is missing or malformed; or when
// the query is missing, contains U+FFFD (what a JSON decoder makes of a lone surrogate escape such as
// "\udc00"), is empty after normalisation or longer than MaxQueryBytes after it. ts is not
// compared with any clock: the windows decide what is too late.
func DecodeSearchQuery(value []byte) (q *SearchQuery, term string, err error) {
	if len(value) > MaxValueBytes {
		return nil, "", invalid("value: %d bytes, over the limit of %d", len(value), MaxValueBytes)
	}
	// JSON decoders replace invalid UTF-8 by U+FFFD silently: check the bytes first.
	if !utf8.Valid(value) {
		return nil, "", invalid("value: not valid UTF-8")
	}
	q = new(SearchQuery)
	if err := json.Unmarshal(value, q); err != nil {
		return nil, "", invalid("json: %v", err)
	}
	if q.TS.IsZero() {
		return nil, "", invalid("ts: missing")
	}
	if q.Query == "" {
		return nil, "", invalid("query: missing")
	}
	if strings.ContainsRune(q.Query, utf8.RuneError) {
		return nil, "", invalid("query: not valid UTF-8 (contains U+FFFD, e.g. from a lone surrogate escape)")
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
