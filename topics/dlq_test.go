package topics

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestNewDeadLetter(t *testing.T) {
	big := bytes.Repeat([]byte("abcdefgh"), 3_000_000/8) // 3 MB, what snappy lets through a 1 MiB topic
	tests := []struct {
		name       string
		key        string
		value      []byte
		reason     string
		cutValue   bool
		cutKey     bool
		wantReason string
	}{
		{"small", "u1", []byte(`{"x":1}`), "json: bad", false, false, "json: bad"},
		{"tombstone", "u1", nil, "value: null (a tombstone)", false, false, "value: null (a tombstone)"},
		{"value at the bound", "u1", big[:MaxDeadLetterValueBytes], "r", false, false, "r"},
		{"value over the bound", "u1", big[:MaxDeadLetterValueBytes+1], "r", true, false, "r"},
		{"3 MB value", "u1", big, "r", true, false, "r"},
		{"1 MB key", strings.Repeat("k", 1_000_000), []byte("v"), "r", false, true, "r"},
		{"long reason", "u1", []byte("v"), strings.Repeat("é", MaxReasonBytes), false, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dl := NewDeadLetter("steps.reported", 3, 42, tt.key, tt.value, tt.reason)
			info, err := ParseDeadLetter(dl.Headers)
			if err != nil {
				t.Fatal(err)
			}
			if info.SourceTopic != "steps.reported" || info.SourcePartition != 3 || info.SourceOffset != 42 {
				t.Fatalf("source %+v", info)
			}
			if (tt.value == nil) != (dl.Value == nil) {
				t.Fatalf("tombstone %v became %v", tt.value == nil, dl.Value == nil)
			}
			checkCut(t, "value", tt.value, dl.Value, tt.cutValue, MaxDeadLetterValueBytes, info.ValueBytes, info.ValueSHA256)
			checkCut(t, "key", []byte(tt.key), []byte(dl.Key), tt.cutKey, MaxDeadLetterKeyBytes, info.KeyBytes, info.KeySHA256)
			if len(info.Reason) > MaxReasonBytes || !utf8.ValidString(info.Reason) {
				t.Fatalf("reason of %d bytes, valid UTF-8 %v", len(info.Reason), utf8.ValidString(info.Reason))
			}
			if tt.wantReason != "" && info.Reason != tt.wantReason {
				t.Fatalf("reason %q, want %q", info.Reason, tt.wantReason)
			}
			if size := len(dl.Key) + len(dl.Value) + headerBytes(dl.Headers); size > MaxProduceBytes-1024 {
				t.Fatalf("dead letter of %d bytes, over the producer's limit %d less the record overhead", size, MaxProduceBytes)
			}
		})
	}
}

func headerBytes(h map[string][]byte) int {
	n := 0
	for k, v := range h {
		n += len(k) + len(v)
	}
	return n
}

func checkCut(t *testing.T, what string, orig, got []byte, cut bool, limit int, size int64, sum [sha256.Size]byte) {
	t.Helper()
	if !cut {
		if !bytes.Equal(got, orig) || size != -1 {
			t.Fatalf("%s of %d bytes not kept whole: %d bytes, size header %d", what, len(orig), len(got), size)
		}
		return
	}
	if len(got) != limit || !bytes.HasPrefix(orig, got) {
		t.Fatalf("%s: %d bytes kept, want the first %d", what, len(got), limit)
	}
	if size != int64(len(orig)) || sum != sha256.Sum256(orig) {
		t.Fatalf("%s: size %d and digest %x in headers, want %d and %x", what, size, sum, len(orig), sha256.Sum256(orig))
	}
}

func TestParseDeadLetterRejects(t *testing.T) {
	good := NewDeadLetter("t", 1, 2, "k", bytes.Repeat([]byte("v"), MaxDeadLetterValueBytes+1), "r").Headers
	for name, change := range map[string]func(h map[string][]byte){
		"no topic":             func(h map[string][]byte) { delete(h, HeaderSourceTopic) },
		"no reason":            func(h map[string][]byte) { delete(h, HeaderReason) },
		"reason not UTF-8":     func(h map[string][]byte) { h[HeaderReason] = []byte("\xff") },
		"negative partition":   func(h map[string][]byte) { h[HeaderSourcePartition] = []byte("-1") },
		"partition over int32": func(h map[string][]byte) { h[HeaderSourcePartition] = []byte("2147483648") },
		"offset not a number":  func(h map[string][]byte) { h[HeaderSourceOffset] = []byte("1e3") },
		"size without digest":  func(h map[string][]byte) { delete(h, HeaderValueSHA256) },
		"digest without size":  func(h map[string][]byte) { delete(h, HeaderValueBytes) },
		"size within the bound": func(h map[string][]byte) {
			h[HeaderValueBytes] = []byte("1048576")
		},
		"short digest": func(h map[string][]byte) { h[HeaderValueSHA256] = h[HeaderValueSHA256][:10] },
		"digest not hex": func(h map[string][]byte) {
			h[HeaderValueSHA256] = bytes.Repeat([]byte("z"), 64)
		},
	} {
		h := map[string][]byte{}
		for k, v := range good {
			h[k] = v
		}
		change(h)
		if _, err := ParseDeadLetter(h); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// FuzzDeadLetter: any record makes a dead letter within the bounds whose headers parse back
// to its source, size and digest; and ParseDeadLetter never panics on any headers.
func FuzzDeadLetter(f *testing.F) {
	f.Add("steps.reported", int32(0), int64(0), "u1", []byte(`{}`), "json: x", false, 0)
	f.Add("search.queries", int32(7), int64(1<<40), "", []byte(nil), "value: null (a tombstone)", true, 0)
	f.Add("t", int32(1), int64(2), "k", []byte("v"), strings.Repeat("ü", 600), false, 1030)
	f.Fuzz(func(t *testing.T, topic string, partition int32, offset int64, key string, value []byte, reason string, tombstone bool, grow int) {
		if tombstone {
			value = nil
		} else if grow > 0 { // around the bound
			value = append(value, make([]byte, MaxDeadLetterValueBytes-1024+grow%2048)...)
		}
		dl := NewDeadLetter(topic, partition, offset, key, value, reason)
		if len(dl.Value) > MaxDeadLetterValueBytes || len(dl.Key) > MaxDeadLetterKeyBytes || (value == nil) != (dl.Value == nil) {
			t.Fatalf("dead letter of key %d and value %d bytes (tombstone %v)", len(dl.Key), len(dl.Value), dl.Value == nil)
		}
		info, err := ParseDeadLetter(dl.Headers)
		valid := topic != "" && reason != "" && partition >= 0 && offset >= 0
		if valid != (err == nil) {
			t.Fatalf("parse: %v (record valid %v)", err, valid)
		}
		if err != nil {
			return
		}
		if len(info.Reason) > MaxReasonBytes || !utf8.ValidString(info.Reason) {
			t.Fatalf("reason header of %d bytes, valid UTF-8 %v", len(info.Reason), utf8.ValidString(info.Reason))
		}
		if info.SourceTopic != topic || info.SourcePartition != partition || info.SourceOffset != offset ||
			len(reason) <= MaxReasonBytes && utf8.ValidString(reason) && info.Reason != reason {
			t.Fatalf("parsed %+v from a dead letter of %q/%d/%d %q", info, topic, partition, offset, reason)
		}
		checkCut(t, "value", value, dl.Value, len(value) > MaxDeadLetterValueBytes, MaxDeadLetterValueBytes, info.ValueBytes, info.ValueSHA256)
		checkCut(t, "key", []byte(key), []byte(dl.Key), len(key) > MaxDeadLetterKeyBytes, MaxDeadLetterKeyBytes, info.KeyBytes, info.KeySHA256)
		// Headers as a hostile writer may set them: never a panic.
		h := map[string][]byte{}
		for k, v := range dl.Headers {
			h[k] = v
		}
		h[HeaderValueBytes], h[HeaderKeySHA256] = []byte(reason), value
		_, _ = ParseDeadLetter(h)
	})
}

// The reason label of rankstream_dead_lettered_total: the field a decoder names, never a part
// of the record.
func TestDeadLetterClass(t *testing.T) {
	rec := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	ok := `"request_id":"r1","user_id":"u1","device_id":"d","tz":"UTC"`
	for _, tt := range []struct {
		key, value, want string
	}{
		{"u1", `not json`, "json"},
		{"u1", `{` + ok + `,"steps":-5,"ts":"2026-11-30T11:00:00Z"}`, "steps"},
		{"u1", `{` + ok + `,"steps":5,"ts":"2020-01-01T00:00:00Z"}`, "ts"},
		{"u1", `{` + ok + `,"steps":5}`, "ts"},
		{"u 1", `{` + ok + `,"steps":5,"ts":"2026-11-30T11:00:00Z"}`, "key"},
		{"u2", `{` + ok + `,"steps":5,"ts":"2026-11-30T11:00:00Z"}`, "key"},
		{"u1", `{"request_id":"r1","user_id":"u1","device_id":"d","tz":"Mars/Olympus","steps":5,"ts":"2026-11-30T11:00:00Z"}`, "tz"},
	} {
		_, _, err := DecodeStepReport(tt.key, []byte(tt.value), rec, DefaultStepRules)
		if err == nil {
			t.Fatalf("DecodeStepReport(%q, %s) accepted it", tt.key, tt.value)
		}
		if got := DeadLetterClass(err); got != tt.want {
			t.Errorf("DeadLetterClass(%v) = %q, want %q", err, got, tt.want)
		}
	}
	for _, err := range []error{errors.New("anything"), fmt.Errorf("hot: %w", ErrBadHotLoopRecord),
		&InvalidError{Reason: "Käse: x"}, &InvalidError{Reason: ""}} {
		if got := DeadLetterClass(err); got != "other" {
			t.Errorf("DeadLetterClass(%v) = %q, want other", err, got)
		}
	}
}
