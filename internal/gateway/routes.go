package gateway

import (
	"encoding/json"
	"time"

	"github.com/lovoo/goka"

	"github.com/rankstream/rankstream/topics"
)

// route is one write endpoint: the topic its records go to and how one element of its body (a
// JSON value of the topic, or an operation that becomes several records) is validated and keyed.
// Adding an endpoint is one entry of routes: POST /v1/scores will be {"POST /v1/scores",
// topics.ScoresUpdated, decodeScores}, decodeScores appending one record per operation.
type route struct {
	pattern string
	stream  goka.Stream
	// decode validates the element raw as the topic's processor will, at the record time now
	// (the timestamp the records are produced with, so that the processor decides the same),
	// and appends its records to out. Its error wraps topics.ErrInvalid.
	decode func(g *Gateway, raw []byte, now time.Time, out []record) ([]record, error)
}

var routes = []route{
	{"POST /v1/steps", topics.StepsReported, decodeStep},
	{"POST /v1/search", topics.SearchQueries, decodeSearch},
}

// record is one record to produce.
type record struct {
	key, value []byte
	// id is the request id answered for the record; "" answers the record's place in Kafka
	// (topic/partition/offset) once acknowledged.
	id string
	// user is the rate-limited user ("" for none).
	user string
}

// cost is what the record counts in the in-flight bytes.
func (r record) cost() int64 { return int64(len(r.key) + len(r.value) + recordOverhead) }

// decodeStep: a steps.reported value, keyed by its user id, with the rules of the steps
// processor (topics.DecodeStepReport, with the gateway's --max-steps, --retention and
// --future-skew).
func decodeStep(g *Gateway, raw []byte, now time.Time, out []record) ([]record, error) {
	// The key is the user id; a value that does not say it gets DecodeStepReport's reason.
	// (encoding/json refuses nesting deeper than 10,000 before DecodeStepReport refuses what
	// is deeper than topics.MaxJSONDepth; both take the last of a repeated field.)
	var head struct {
		UserID string `json:"user_id"`
	}
	_ = json.Unmarshal(raw, &head)
	r, _, err := topics.DecodeStepReport(head.UserID, raw, now, g.cfg.StepRules)
	if err != nil {
		return out, err
	}
	return append(out, record{key: []byte(r.UserID), value: raw, id: r.RequestID, user: r.UserID}), nil
}

// decodeSearch: a search.queries value (topics.DecodeSearchQuery), keyed by its user id when
// it names one (the key is only checked for length and UTF-8, which a valid user id passes), and
// without a key otherwise. A query carries no request id: the answer names its place in Kafka.
// Queries without a user id are not rate-limited per user.
func decodeSearch(_ *Gateway, raw []byte, now time.Time, out []record) ([]record, error) {
	q, _, err := topics.DecodeSearchQuery("", raw, now)
	if err != nil {
		return out, err
	}
	r := record{value: raw, user: q.UserID}
	if q.UserID != "" {
		r.key = []byte(q.UserID)
	}
	return append(out, r), nil
}
