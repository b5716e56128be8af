package topics

import (
	"github.com/segmentio/encoding/json"
	"time"
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

// DecodeStepReport decodes and validates one steps.reported record. recordTime is the Kafka
// record's timestamp: retention and skew are measured against it, not the wall clock, so a
// replay decides the same. It returns the report and its zone, or an error wrapping
// ErrInvalid that says why.
func DecodeStepReport(key string, value []byte, recordTime time.Time, rules StepRules) (*StepReport, *time.Location, error) {
	if len(value) > MaxValueBytes {
		return nil, nil, invalid("value: %d bytes, over the limit of %d", len(value), MaxValueBytes)
	}
	r := new(StepReport)
	if err := json.Unmarshal(value, r); err != nil {
		return nil, nil, invalid("json: %v", err)
	}
	if err := checkID("request_id", r.RequestID); err != nil {
		return nil, nil, err
	}
	if err := checkID("user_id", r.UserID); err != nil {
		return nil, nil, err
	}
	if key != r.UserID {
		return nil, nil, invalid("key %q does not match user_id %q", key, r.UserID)
	}
	if r.DeviceID != "" {
		if err := checkToken("device_id", r.DeviceID, MaxIDBytes); err != nil {
			return nil, nil, err
		}
	}
	if r.Region != "" {
		if err := checkToken("region", r.Region, MaxRegionBytes); err != nil {
			return nil, nil, err
		}
	}
	switch {
	case r.Steps < 0:
		return nil, nil, invalid("steps: negative (%d)", r.Steps)
	case r.Steps > rules.MaxSteps:
		return nil, nil, invalid("steps: %d is over the plausible maximum of %d", r.Steps, rules.MaxSteps)
	}
	if r.TS.IsZero() {
		return nil, nil, invalid("ts: missing")
	}
	loc, err := LoadZone(r.TZ)
	if err != nil {
		return nil, nil, err
	}
	if r.TS.Before(recordTime.Add(-rules.Retention)) {
		return nil, nil, invalid("ts: %s is older than the retention of %s before the record time %s",
			r.TS.UTC().Format(time.RFC3339), rules.Retention, recordTime.UTC().Format(time.RFC3339))
	}
	if r.TS.After(recordTime.Add(rules.FutureSkew)) {
		return nil, nil, invalid("ts: %s is more than %s after the record time %s",
			r.TS.UTC().Format(time.RFC3339), rules.FutureSkew, recordTime.UTC().Format(time.RFC3339))
	}
	return r, loc, nil
}
