package topics

import (
	"bytes"
	"strconv"
	"time"

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
// for every record, and a pointer would cost an allocation each time.
func DecodeStepReport(key string, value []byte, recordTime time.Time, rules StepRules) (StepReport, *time.Location, error) {
	return decodeStepReport(key, value, recordTime, rules, true)
}

// decodeStepReport is DecodeStepReport; with scan it first tries scanStepWire, which decodes
// the common shape of a report in a fraction of the JSON decoder's time and leaves anything
// else to the decoder, so that both ways give the same reports and the same reasons
// (FuzzStepReportScanMatchesDecoder).
func decodeStepReport(key string, value []byte, recordTime time.Time, rules StepRules, scan bool) (StepReport, *time.Location, error) {
	if err := checkValueBytes(value); err != nil {
		return StepReport{}, nil, err
	}
	var w stepWire
	flat := scan && scanStepWire(value, &w) // a flat object is never too deep
	if !flat {
		if err := checkDepth(value); err != nil {
			return StepReport{}, nil, err
		}
	}
	if err := checkKey(key); err != nil {
		return StepReport{}, nil, err
	}
	if !flat {
		var jw stepWire // on the heap (the decoder keeps a pointer), so only on this path
		if err := json.Unmarshal(value, &jw); err != nil {
			return StepReport{}, nil, invalid("json: %v", err)
		}
		w = jw
	}
	if err := checkID("request_id", w.RequestID); err != nil {
		return StepReport{}, nil, err
	}
	if err := checkID("user_id", w.UserID); err != nil {
		return StepReport{}, nil, err
	}
	if key != w.UserID {
		return StepReport{}, nil, invalid("key %q does not match user_id %q", key, w.UserID)
	}
	if w.DeviceID != "" {
		if err := checkToken("device_id", w.DeviceID, MaxIDBytes); err != nil {
			return StepReport{}, nil, err
		}
	}
	if w.Region != "" {
		if err := checkToken("region", w.Region, MaxRegionBytes); err != nil {
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

// scanStepWire decodes b into w if b is a step report of the common shape: one object whose
// keys are the wire's field names exactly as written in stepWire (each at most once), whose
// strings hold no escape, steps an integer and ts an integer that fits int64 or an RFC 3339
// string that parses, with JSON white space anywhere between the tokens. For anything else it
// returns false and leaves w untouched: the JSON decoder then decides, with its reasons. b
// must be valid UTF-8. The strings of w share one copy of b.
func scanStepWire(b []byte, w *stepWire) bool {
	var span [numStepFields][2]int
	var seen uint
	tsString := false
	i := skipSpace(b, 0)
	if i == len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		i++
	} else {
		for {
			ks, ke := scanString(b, i)
			if ke < 0 {
				return false
			}
			f := stepField(b[ks:ke])
			if f < 0 || seen&(1<<f) != 0 {
				return false
			}
			seen |= 1 << f
			if i = skipSpace(b, ke+1); i == len(b) || b[i] != ':' {
				return false
			}
			if i = skipSpace(b, i+1); i == len(b) {
				return false
			}
			if b[i] == '"' {
				vs, ve := scanString(b, i)
				if ve < 0 || f == fieldSteps {
					return false
				}
				span[f] = [2]int{vs, ve}
				tsString = tsString || f == fieldTS
				i = ve + 1
			} else {
				e := scanInt(b, i)
				if e == i || f != fieldSteps && f != fieldTS {
					return false
				}
				span[f] = [2]int{i, e}
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
			i++
			break
		}
	}
	if skipSpace(b, i) != len(b) {
		return false
	}
	s := string(b)
	field := func(f int) string { return s[span[f][0]:span[f][1]] }
	var ts time.Time
	if seen&(1<<fieldTS) != 0 {
		var err error
		if tsString {
			ts, err = time.Parse(time.RFC3339Nano, field(fieldTS))
		} else {
			var ms int64
			ms, err = strconv.ParseInt(field(fieldTS), 10, 64)
			ts = time.UnixMilli(ms)
		}
		if err != nil {
			return false
		}
	}
	*w = stepWire{RequestID: field(fieldRequestID), UserID: field(fieldUserID), DeviceID: field(fieldDeviceID),
		TS: Timestamp{ts}, TZ: field(fieldTZ), Region: field(fieldRegion)}
	if seen&(1<<fieldSteps) != 0 {
		w.Steps = b[span[fieldSteps][0]:span[fieldSteps][1]]
	}
	return true
}

// skipSpace returns the index of the first byte at or after i that is not JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanString reads the JSON string starting at b[i] if it holds no escape and no control
// character: its contents are b[start:end] and its closing quote b[end]; end is -1 otherwise.
func scanString(b []byte, i int) (start, end int) {
	if i >= len(b) || b[i] != '"' {
		return 0, -1
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return i + 1, j
		case c == '\\' || c < ' ':
			return 0, -1
		}
	}
	return 0, -1
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

// count reads a required JSON integer in [0, max] written plainly: digits only, no sign,
// fraction or exponent (the JSON grammar already forbids leading zeros).
func count(field string, raw json.RawMessage, max int64) (int64, error) {
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
