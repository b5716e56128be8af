package topics

import (
	"bytes"
	"strconv"
	"time"
	"unsafe"

	"github.com/segmentio/encoding/json"
)

// StepRules are the checks a step report must pass, with their defaults in DefaultStepRules.
type StepRules struct {
	// MaxSteps is the largest plausible daily count; more is dead-lettered as absurd.
	MaxSteps int64
	// Retention: reports whose ts is older than the record's Kafka timestamp minus Retention
	// are dead-lettered.
	Retention time.Duration
	// FutureSkew: reports whose ts is later than the record's Kafka timestamp plus FutureSkew
	// are dead-lettered.
	FutureSkew time.Duration
}

// DefaultStepRules: 200,000 steps (about 150 km walked), 7 days of retention, 5 minutes of
// clock skew.
var DefaultStepRules = StepRules{MaxSteps: 200_000, Retention: 7 * 24 * time.Hour, FutureSkew: 5 * time.Minute}

// stepWire is a step report as it is decoded: steps stays raw, so that a missing, null or
// misshapen count is told apart from 0.
type stepWire struct {
	RequestID string          `json:"request_id"`
	UserID    string          `json:"user_id"`
	DeviceID  string          `json:"device_id"`
	Steps     json.RawMessage `json:"steps"`
	TS        Timestamp       `json:"ts"`
	TZ        string          `json:"tz"`
	Region    string          `json:"region"`
}

// DecodeStepReport decodes and validates one steps.reported record. recordTime is the Kafka
// record's timestamp: retention and skew are measured against it, not the wall clock, so a
// replay decides the same. It returns the report and its zone, or an error wrapping
// ErrInvalid that says why. The report is returned by value: the steps processor calls this
// for every record, and a pointer would cost an allocation each time. For the same reason the
// strings of a report of the common shape share value's memory instead of copying it: value
// must not change while the report is used, and a string kept keeps all of value in memory.
func DecodeStepReport(key string, value []byte, recordTime time.Time, rules StepRules) (StepReport, *time.Location, error) {
	return decodeStepReport(key, value, recordTime, rules, true)
}

// decodeStepReport is DecodeStepReport; with scan it first tries scanStepWire, which decodes
// the common shape of a report in a fraction of the JSON decoder's time and leaves anything
// else to the decoder, so that both ways give the same reports and the same reasons
// (FuzzStepReportScanMatchesDecoder). The scan also tells which checks the bytes it read pass
// already: a value of ASCII strings is valid UTF-8, and a string of token bytes only passes
// checkToken but for its length.
func decodeStepReport(key string, value []byte, recordTime time.Time, rules StepRules, scan bool) (StepReport, *time.Location, error) {
	if err := checkValueSize(value); err != nil {
		return StepReport{}, nil, err
	}
	var w stepWire
	var o flatObject
	flat := scan && scanStepWire(value, &o, &w)
	if !flat || o.wideStr {
		if err := checkUTF8(value); err != nil {
			return StepReport{}, nil, err
		}
	}
	if !flat { // a flat object is never too deep
		if err := checkDepth(value); err != nil {
			return StepReport{}, nil, err
		}
	}
	// A key equal to a user_id of token bytes only is ASCII, so it passes checkKey if short.
	if !flat || o.plain&(1<<fieldUserID) == 0 || key != w.UserID || len(key) > MaxIDBytes {
		if err := checkKey(key); err != nil {
			return StepReport{}, nil, err
		}
	}
	if !flat {
		var jw stepWire // on the heap (the decoder keeps a pointer), so only on this path
		if err := json.Unmarshal(value, &jw); err != nil {
			return StepReport{}, nil, invalid("json: %v", err)
		}
		w = jw
	}
	plain := func(f int) bool { return o.plain&(1<<f) != 0 } // o is zero unless flat
	if err := checkIDPlain("request_id", w.RequestID, plain(fieldRequestID)); err != nil {
		return StepReport{}, nil, err
	}
	if err := checkIDPlain("user_id", w.UserID, plain(fieldUserID)); err != nil {
		return StepReport{}, nil, err
	}
	if key != w.UserID {
		return StepReport{}, nil, invalid("key %q does not match user_id %q", key, w.UserID)
	}
	if w.DeviceID != "" {
		if err := checkTokenPlain("device_id", w.DeviceID, MaxIDBytes, plain(fieldDeviceID)); err != nil {
			return StepReport{}, nil, err
		}
	}
	if w.Region != "" {
		if err := checkTokenPlain("region", w.Region, MaxRegionBytes, plain(fieldRegion)); err != nil {
			return StepReport{}, nil, err
		}
	}
	steps, err := count("steps", w.Steps, rules.MaxSteps)
	if err != nil {
		return StepReport{}, nil, err
	}
	if w.TS.IsZero() {
		return StepReport{}, nil, invalid("ts: missing")
	}
	loc, err := LoadZone(w.TZ)
	if err != nil {
		return StepReport{}, nil, err
	}
	if err := checkTime(w.TS.Time, recordTime, rules.Retention, rules.FutureSkew); err != nil {
		return StepReport{}, nil, err
	}
	return StepReport{RequestID: w.RequestID, UserID: w.UserID, DeviceID: w.DeviceID, Steps: steps,
		TS: w.TS, TZ: w.TZ, Region: w.Region}, loc, nil
}

// The fields scanStepWire knows, by their index in its spans.
const (
	fieldRequestID = iota
	fieldUserID
	fieldDeviceID
	fieldSteps
	fieldTS
	fieldTZ
	fieldRegion
	numStepFields
)

func stepField(name []byte) int {
	switch string(name) {
	case "request_id":
		return fieldRequestID
	case "user_id":
		return fieldUserID
	case "device_id":
		return fieldDeviceID
	case "steps":
		return fieldSteps
	case "ts":
		return fieldTS
	case "tz":
		return fieldTZ
	case "region":
		return fieldRegion
	}
	return -1
}

// scanStepWire decodes b into w if b is a step report of the common shape (o.scan: the wire's
// field names exactly as written in stepWire, strings without escapes, steps an integer, ts
// an integer that fits int64 or an RFC 3339 string that parses). For anything else it returns
// false and leaves w untouched: the JSON decoder then decides, with its reasons. The strings
// of w share b's memory; they are valid UTF-8 unless o.wideStr.
func scanStepWire(b []byte, o *flatObject, w *stepWire) bool {
	const ints = 1<<fieldSteps | 1<<fieldTS
	if !o.scan(b, stepField, ints, (1<<numStepFields-1)&^(1<<fieldSteps)) {
		return false
	}
	s := unsafe.String(unsafe.SliceData(b), len(b))
	ts, ok := o.time(s, fieldTS)
	if !ok {
		return false
	}
	*w = stepWire{RequestID: o.field(s, fieldRequestID), UserID: o.field(s, fieldUserID), DeviceID: o.field(s, fieldDeviceID),
		TS: Timestamp{ts}, TZ: o.field(s, fieldTZ), Region: o.field(s, fieldRegion)}
	if o.seen&(1<<fieldSteps) != 0 {
		w.Steps = b[o.span[fieldSteps][0]:o.span[fieldSteps][1]]
	}
	return true
}

// count reads a required JSON integer in [0, max] written plainly: digits only, no sign,
// fraction or exponent (the JSON grammar already forbids leading zeros).
func count(field string, raw json.RawMessage, max int64) (int64, error) {
	if n, ok := smallInt(raw); ok && raw[0] != '-' && n <= max { // the common case, checked at once
		return n, nil
	}
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0:
		return 0, invalid("%s: missing", field)
	case string(raw) == "null":
		return 0, invalid("%s: null, want an integer", field)
	case raw[0] == '-':
		return 0, invalid("%s: negative (%s)", field, shorten(string(raw), 32))
	case raw[0] < '0' || raw[0] > '9':
		return 0, invalid("%s: %s, want an integer", field, shorten(string(raw), 32))
	case bytes.ContainsAny(raw, ".eE"):
		return 0, invalid("%s: %s is not an integer", field, shorten(string(raw), 32))
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || n > max {
		return 0, invalid("%s: %s is over the plausible maximum of %d", field, shorten(string(raw), 32), max)
	}
	return n, nil
}

// checkTime bounds an event time by the record's Kafka timestamp.
func checkTime(ts, recordTime time.Time, maxAge, futureSkew time.Duration) error {
	if ts.Before(recordTime.Add(-maxAge)) {
		return invalid("ts: %s is older than the retention of %s before the record time %s",
			formatTime(ts), maxAge, formatTime(recordTime))
	}
	if ts.After(recordTime.Add(futureSkew)) {
		return invalid("ts: %s is more than %s after the record time %s",
			formatTime(ts), futureSkew, formatTime(recordTime))
	}
	return nil
}

// formatTime writes any time.Time, including years outside 0000-9999.
func formatTime(t time.Time) string {
	if y := t.Year(); y < 0 || y > 9999 {
		return strconv.FormatInt(t.UnixMilli(), 10) + " ms"
	}
	return t.UTC().Format(time.RFC3339)
}
