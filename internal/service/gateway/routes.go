package gateway

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/lovoo/goka"

	"github.com/rankstream/rankstream/topics"
)

// route is one write endpoint: the topic its records go to and how one element of its body (a
// JSON value of the topic, or an operation that becomes several records) is validated and keyed.
// Adding an endpoint is one entry of routes.
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
	{"POST /v1/scores", topics.ScoresUpdated, decodeScores},
}

// record is one record to produce.
type record struct {
	key, value []byte
	// id is the request id answered for the record; "" answers the record's place in Kafka
	// (topic/partition/offset) once acknowledged.
	id string
	// user is the rate-limited user ("" for none).
	user string
	// elem is the index of the body's element the record comes from.
	elem int
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

// scoresRequest is an UpdateRank request: operations on members' scores on one board, each
// becoming one scores.updated record.
type scoresRequest struct {
	RequestID  string          `json:"request_id"`
	Board      string          `json:"board"`
	Scope      string          `json:"scope"`
	TS         json.RawMessage `json:"ts"`
	Operations []struct {
		Member string          `json:"member"`
		Score  json.RawMessage `json:"score"`
		Op     string          `json:"op"`
	} `json:"operations"`
}

// scoreValue is a scores.updated value as the gateway writes it.
type scoreValue struct {
	RequestID string          `json:"request_id"`
	Board     string          `json:"board"`
	Member    string          `json:"member"`
	Op        string          `json:"op"`
	Score     json.RawMessage `json:"score,omitempty"`
	TS        json.RawMessage `json:"ts"`
	Scope     string          `json:"scope,omitempty"`
}

// maxScoreRequestID bounds an UpdateRank's request id: an operation's id appends "/" and its
// index (at most MaxElements-1) and must stay a valid id.
var maxScoreRequestID = topics.MaxIDBytes - len("/"+strconv.Itoa(MaxElements-1))

// ScoreOpID is the request id of the operation at index i of an UpdateRank request whose
// request id is requestID: requestID + "/" + i in decimal. The same request sent again
// gives its operations the same ids, so the scores processor applies each once (the ids of
// two requests never collide: the text after the last "/" is the index).
func ScoreOpID(requestID string, i int) string { return requestID + "/" + strconv.Itoa(i) }

// decodeScores: an UpdateRank request, each of its operations one scores.updated value keyed
// by its member, with request id ScoreOpID(request_id, index), the request's board, scope and
// ts (the time it was validated at, in epoch milliseconds, when it gives none), checked with
// the rules of the scores processor (topics.DecodeScoreOp with the gateway's score rules, then
// topics.ScoreOpBoard against the boards file). One invalid operation refuses the request
// whole. A member's bucket is per board: "user" is board/member.
func decodeScores(g *Gateway, raw []byte, now time.Time, out []record) ([]record, error) {
	var req scoresRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		return out, &topics.InvalidError{Reason: fmt.Sprintf("json: %v", err)}
	}
	if err := topics.CheckID("request_id", req.RequestID); err != nil {
		return out, err
	}
	if len(req.RequestID) > maxScoreRequestID {
		return out, &topics.InvalidError{Reason: fmt.Sprintf("request_id: %d bytes, longer than %d (each operation's id appends /<index>)", len(req.RequestID), maxScoreRequestID)}
	}
	if len(req.Operations) == 0 {
		return out, &topics.InvalidError{Reason: "operations: missing or empty"}
	}
	ts := req.TS
	if len(ts) == 0 || string(ts) == "null" {
		ts = strconv.AppendInt(nil, now.UnixMilli(), 10)
	}
	start := len(out)
	for i, op := range req.Operations {
		v := scoreValue{RequestID: ScoreOpID(req.RequestID, i), Board: req.Board, Member: op.Member, Op: op.Op,
			Score: op.Score, TS: ts, Scope: req.Scope}
		value, err := json.Marshal(v)
		if topics.IsOperatorOp(op.Op) { // a member must not release or unban itself
			err = &topics.InvalidError{Reason: fmt.Sprintf("op: %q is an operator's op (rankstream ban), not a client's", op.Op)}
		}
		if err == nil {
			var o *topics.ScoreOp
			if o, err = topics.DecodeScoreOp(op.Member, value, now, g.cfg.ScoreRules); err == nil {
				_, err = topics.ScoreOpBoard(o, g.boards, now)
			}
		}
		if err != nil {
			return out[:start], &topics.InvalidError{Reason: fmt.Sprintf("operations[%d]: %s", i, reason(err))}
		}
		out = append(out, record{key: []byte(op.Member), value: value, id: req.RequestID, user: req.Board + "/" + op.Member})
	}
	return out, nil
}
