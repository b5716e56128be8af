package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/topics"
)

// answer is what a request gets: a status, a JSON body and maybe a Retry-After.
type answer struct {
	code       int
	body       any
	retryAfter string
}

func fail(code int, format string, args ...any) answer {
	return answer{code: code, body: map[string]string{"error": fmt.Sprintf(format, args...)}}
}

// elementError is why one element of an array was refused.
type elementError struct {
	Index int    `json:"index"`
	Error string `json:"error"`
}

// handler serves one route: authenticate, read the body, validate every element, reserve the
// in-flight bytes (unless Kafka is failing: see breaker), take the users' tokens, produce, and
// answer 202 only once Kafka acknowledged every record. It is all or nothing: a request with one bad element is refused
// whole and nothing of it reaches Kafka, so a client corrects it and sends it again whole.
func (g *Gateway) handler(rt route) http.Handler {
	topic := string(g.cfg.Kafka.Names.Stream(rt.stream))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		name, ok := g.cfg.Keys.check(bearer(r))
		var a answer
		if !ok {
			g.authLog.Log(r.Context(), g.log, slog.LevelWarn, "gateway: request without a valid API key", "route", rt.pattern, "remote", r.RemoteAddr)
			a = fail(http.StatusUnauthorized, "missing or unknown API key (Authorization: Bearer <key>)")
			w.Header().Set("WWW-Authenticate", `Bearer realm="rankstream"`)
			name = "-"
		} else {
			ctx, cancel := context.WithTimeout(r.Context(), g.cfg.RequestTimeout)
			a = g.serve(ctx, rt, topic, name, w, r)
			cancel()
		}
		if a.retryAfter != "" {
			w.Header().Set("Retry-After", a.retryAfter)
		}
		obs.WriteJSON(w, a.code, a.body)
		code := strconv.Itoa(a.code)
		obs.ObserveHTTP(rt.pattern, code, time.Since(start))
		obs.GatewayRequests.WithLabelValues(name, code).Inc()
	})
}

func (g *Gateway) serve(ctx context.Context, rt route, topic, key string, w http.ResponseWriter, r *http.Request) answer {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, g.cfg.MaxBody))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return fail(http.StatusRequestEntityTooLarge, "body: over the limit of %d bytes", g.cfg.MaxBody)
		}
		return fail(http.StatusBadRequest, "body: %v", err)
	}
	elems, array, a := split(body)
	if a.code != 0 {
		return a
	}
	now := time.Now()
	recs := make([]record, 0, len(elems))
	var bad []elementError
	for i, e := range elems {
		n := len(recs)
		if recs, err = rt.decode(g, e, now, recs); err != nil {
			bad = append(bad, elementError{i, reason(err)})
		}
		for j := n; j < len(recs); j++ {
			recs[j].elem = i
		}
	}
	if len(bad) > 0 {
		g.badLog.Log(r.Context(), g.log, slog.LevelWarn, "gateway: request refused", "route", rt.pattern, "key", key, "element", bad[0].Index, "reason", bad[0].Error, "invalid_elements", len(bad))
	}
	switch {
	case len(bad) > 0 && !array:
		return fail(http.StatusBadRequest, "%s", bad[0].Error)
	case len(bad) > 0:
		return answer{code: http.StatusBadRequest, body: map[string]any{
			"error":  fmt.Sprintf("element %d: %s (%d of %d elements invalid; none accepted)", bad[0].Index, bad[0].Error, len(bad), len(elems)),
			"errors": bad,
		}}
	case len(recs) > MaxElements: // several score updates of many operations each
		return fail(http.StatusRequestEntityTooLarge, "body: more than %d records (operations) in one request", MaxElements)
	}

	leave, ok := g.breaker.enter()
	if !ok {
		return g.shed(r, rt, key, errKafkaDown)
	}
	defer leave()
	// The bytes first: a request shed for want of them must not cost its users a token.
	var cost int64
	for _, rec := range recs {
		cost += rec.cost()
	}
	if !g.budget.acquire(cost) {
		return g.shed(r, rt, key, errInFlight)
	}
	users := make([]string, 0, len(recs))
	seen := make(map[string]bool, len(recs))
	for _, rec := range recs {
		if u := string(rt.stream) + ":" + rec.user; rec.user != "" && !seen[u] {
			seen[u] = true
			users = append(users, u)
		}
	}
	if wait, ok := g.limiter.take(users, now); !ok {
		g.budget.release(cost)
		a := fail(http.StatusTooManyRequests, "over the rate of %g requests a second per user (burst %d); retry later", g.cfg.UserRate, g.cfg.UserBurst)
		a.retryAfter = strconv.Itoa(int(math.Ceil(wait.Seconds())))
		return a
	}
	recIDs, err := g.produce(ctx, topic, recs, now)
	if err == nil || r.Context().Err() == nil { // a client that went away says nothing of Kafka
		if g.breaker.record(err == nil) {
			if err != nil {
				g.log.Warn("gateway: kafka is not acknowledging; shedding all requests but a few that probe it", "probes", cap(g.breaker.probes), "err", err)
			} else {
				g.log.Info("gateway: kafka acknowledges again")
			}
		}
	}
	if err != nil {
		return g.shed(r, rt, key, err)
	}
	obs.GatewayRecords.WithLabelValues(topic).Add(float64(len(recs)))
	ids := make([]string, len(elems)) // an element's id is its first record's
	for i := len(recs) - 1; i >= 0; i-- {
		ids[recs[i].elem] = recIDs[i]
	}
	if g.log.Enabled(ctx, slog.LevelDebug) {
		g.log.Debug("gateway: accepted", "route", rt.pattern, "key", key, "records", len(recs), "request_ids", ids)
	}
	if array {
		return answer{code: http.StatusAccepted, body: map[string][]string{"request_ids": ids}}
	}
	return answer{code: http.StatusAccepted, body: map[string]string{"request_id": ids[0]}}
}

// shed answers 503 with a jittered Retry-After: the request's records were not all
// acknowledged by Kafka (err says why).
func (g *Gateway) shed(r *http.Request, rt route, key string, err error) answer {
	reason := "kafka"
	switch {
	case errors.Is(err, errInFlight):
		reason = "in_flight"
	case errors.Is(err, errKafkaDown):
		reason = "kafka_down"
	}
	obs.GatewayShed.WithLabelValues(reason).Inc()
	if r.Context().Err() == nil { // a client that went away needs no log line
		g.shedLog.Log(r.Context(), g.log, slog.LevelWarn, "gateway: request shed", "route", rt.pattern, "key", key, "reason", reason, "err", err)
	}
	a := fail(http.StatusServiceUnavailable, "%v; nothing of this request may be counted as accepted: retry it whole", err)
	a.retryAfter = g.retryAfter()
	return a
}

// split returns a body's elements: the elements of a JSON array (1 to MaxElements), or the
// body itself (a value of the topic, to be validated by its decoder).
func split(body []byte) (elems [][]byte, array bool, a answer) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, false, fail(http.StatusBadRequest, "body: empty")
	}
	if body[0] != '[' {
		return [][]byte{body}, false, answer{}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if _, err := dec.Token(); err != nil {
		return nil, true, fail(http.StatusBadRequest, "body: %v", err)
	}
	for dec.More() {
		if len(elems) == MaxElements {
			return nil, true, fail(http.StatusRequestEntityTooLarge, "body: more than %d elements", MaxElements)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, true, fail(http.StatusBadRequest, "body: element %d: %v", len(elems), err)
		}
		elems = append(elems, raw)
	}
	if _, err := dec.Token(); err != nil {
		return nil, true, fail(http.StatusBadRequest, "body: %v", err)
	}
	if len(bytes.TrimSpace(body[dec.InputOffset():])) > 0 {
		return nil, true, fail(http.StatusBadRequest, "body: data after the array")
	}
	if len(elems) == 0 {
		return nil, true, fail(http.StatusBadRequest, "body: an empty array")
	}
	return elems, true, answer{}
}

// Why a request is shed before it reaches Kafka.
var (
	errInFlight  = errors.New("kafka is not keeping up (in-flight bytes at their bound)")
	errKafkaDown = errors.New("kafka is not acknowledging (the last requests failed)")
)

// produce hands recs to Kafka, stamped with now (the time they were validated at), and waits
// until Kafka acknowledged them all, returning their request ids; or until one failed or ctx
// ended. Their bytes, reserved in the budget by the caller, are given back as Kafka answers
// each of them, even after produce returned: a record already sent cannot be taken back from
// an idempotent producer.
func (g *Gateway) produce(ctx context.Context, topic string, recs []record, now time.Time) ([]string, error) {
	ids := make([]string, len(recs))
	done := make(chan error, len(recs))
	for i, rec := range recs {
		size := rec.cost()
		g.cl.TryProduce(ctx, &kgo.Record{Topic: topic, Key: rec.key, Value: rec.value, Timestamp: now}, func(kr *kgo.Record, err error) {
			g.budget.release(size)
			if err == nil {
				ids[i] = rec.id
				if ids[i] == "" {
					ids[i] = fmt.Sprintf("%s/%d/%d", kr.Topic, kr.Partition, kr.Offset)
				}
			}
			done <- err
		})
	}
	for range recs {
		select {
		case err := <-done:
			if err != nil {
				return nil, fmt.Errorf("kafka did not acknowledge: %w", err)
			}
		case <-ctx.Done():
			return nil, fmt.Errorf("kafka did not acknowledge within %s", g.cfg.RequestTimeout)
		}
	}
	return ids, nil
}

// reason is the short reason of a validation error (topics.InvalidError's, bounded in
// length like the dead-letter topic's reasons).
func reason(err error) string {
	if ie, ok := errors.AsType[*topics.InvalidError](err); ok {
		return ie.Reason
	}
	return err.Error()
}
