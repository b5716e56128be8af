package topics

import (
	"errors"
	"testing"
)

// TestDuplicateFieldIsCheckedAsTheDecoderKeepsIt: a field given twice makes the scan give up,
// and the JSON decoder keeps the last value; the scan's flags of the first (an id of token
// bytes only, printable text) must not spare the last its checks. Before the scan reset them,
// a step report's second request_id "a b" was accepted.
func TestDuplicateFieldIsCheckedAsTheDecoderKeepsIt(t *testing.T) {
	steps := []string{
		`{"request_id":"ok","request_id":"a b","user_id":"u1","steps":5,"ts":1796040000000,"tz":"UTC"}`,
		`{"request_id":"r1","user_id":"u1","device_id":"d1","device_id":"d:1","steps":5,"ts":1796040000000,"tz":"UTC"}`,
	}
	for _, v := range steps {
		if _, _, err := DecodeStepReport("u1", []byte(v), searchRecordTime, DefaultStepRules); !errors.Is(err, ErrInvalid) {
			t.Errorf("accepted %s", v)
		}
	}
	queries := []string{
		`{"query":"x","user_id":"u1","user_id":"u 1","ts":1796040000000}`,
		`{"query":"ok","query":"a\u0000","ts":1796040000000}`,
	}
	for _, v := range queries {
		if _, _, err := DecodeSearchQuery("u1", []byte(v), searchRecordTime); !errors.Is(err, ErrInvalid) {
			t.Errorf("accepted %s", v)
		}
	}
}
