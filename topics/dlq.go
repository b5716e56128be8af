package topics

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/lovoo/goka"
)

// Dead-letter header names. A dead-letter record keeps the original key and value bytes, cut to
// MaxDeadLetterKeyBytes and MaxDeadLetterValueBytes; the original's size and SHA-256 are in the
// headers only when it was cut. A tombstone (null value) stays a null value.
const (
	HeaderSourceTopic     = "rankstream-source-topic"
	HeaderSourcePartition = "rankstream-source-partition"
	HeaderSourceOffset    = "rankstream-source-offset"
	HeaderReason          = "rankstream-reason"
	// HeaderValueBytes and HeaderValueSHA256 give the original value's size (decimal) and
	// SHA-256 (lower-case hex) when the dead letter holds only its first MaxDeadLetterValueBytes.
	HeaderValueBytes  = "rankstream-original-value-bytes"
	HeaderValueSHA256 = "rankstream-original-value-sha256"
	// HeaderKeyBytes and HeaderKeySHA256: the same for a key cut to MaxDeadLetterKeyBytes.
	HeaderKeyBytes  = "rankstream-original-key-bytes"
	HeaderKeySHA256 = "rankstream-original-key-sha256"
)

// Bounds of a dead-letter record. A record the broker accepted can be far larger than any topic
// limit once decompressed (brokers check a batch's compressed size: a 20 MB repetitive value
// passes a 1 MiB limit with snappy), so what the processors produce is bounded here, well below
// MaxProduceBytes: a dead letter is at most about 1 MiB + 3 KiB, compressed or not.
const (
	// MaxDeadLetterValueBytes is the largest value a dead letter keeps whole.
	MaxDeadLetterValueBytes = 1 << 20
	// MaxDeadLetterKeyBytes is the largest key a dead letter keeps whole.
	MaxDeadLetterKeyBytes = 1 << 10
	// MaxReasonBytes bounds the reason header (reasons quote parts of the record).
	MaxReasonBytes = 1 << 10
)

// DeadLetter is what a processor writes to the dead-letter topic for a rejected record.
type DeadLetter struct {
	Key     string
	Value   []byte // nil for a tombstone
	Headers goka.Headers
}

// NewDeadLetter builds the dead letter of the record at topic/partition/offset: its key and
// value, cut to their bounds (with the original size and digest in headers), and the reason,
// cut to MaxReasonBytes.
func NewDeadLetter(topic string, partition int32, offset int64, key string, value []byte, reason string) DeadLetter {
	h := goka.Headers{
		HeaderSourceTopic:     []byte(topic),
		HeaderSourcePartition: []byte(strconv.FormatInt(int64(partition), 10)),
		HeaderSourceOffset:    []byte(strconv.FormatInt(offset, 10)),
		HeaderReason:          []byte(shorten(strings.ToValidUTF8(reason, "\uFFFD"), MaxReasonBytes)),
	}
	if len(value) > MaxDeadLetterValueBytes {
		sum := sha256.Sum256(value)
		h[HeaderValueBytes] = []byte(strconv.Itoa(len(value)))
		h[HeaderValueSHA256] = []byte(hex.EncodeToString(sum[:]))
		value = bytes.Clone(value[:MaxDeadLetterValueBytes]) // not the whole record's array, in flight
	}
	if len(key) > MaxDeadLetterKeyBytes {
		sum := sha256.Sum256([]byte(key))
		h[HeaderKeyBytes] = []byte(strconv.Itoa(len(key)))
		h[HeaderKeySHA256] = []byte(hex.EncodeToString(sum[:]))
		key = strings.Clone(key[:MaxDeadLetterKeyBytes])
	}
	return DeadLetter{Key: key, Value: value, Headers: h}
}

// shorten cuts s to at most max bytes of valid UTF-8, marking the cut.
func shorten(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const mark = "… (cut)"
	return strings.ToValidUTF8(s[:max-len(mark)], "") + mark
}

// DeadLetterInfo is what the headers of a dead letter say.
type DeadLetterInfo struct {
	SourceTopic     string
	SourcePartition int32
	SourceOffset    int64
	Reason          string
	// ValueBytes is the original value's size when the dead letter holds only a prefix of it
	// (-1: the value is whole); ValueSHA256 is its digest then.
	ValueBytes  int64
	ValueSHA256 [sha256.Size]byte
	// KeyBytes and KeySHA256: the same for the key.
	KeyBytes  int64
	KeySHA256 [sha256.Size]byte
}

// ErrDeadLetterHeaders is wrapped by ParseDeadLetter's errors.
var ErrDeadLetterHeaders = errors.New("dead-letter headers")

// ParseDeadLetter reads the headers of a dead-letter record (the contract above).
func ParseDeadLetter(h map[string][]byte) (DeadLetterInfo, error) {
	info := DeadLetterInfo{ValueBytes: -1, KeyBytes: -1}
	fail := func(format string, args ...any) (DeadLetterInfo, error) {
		return DeadLetterInfo{}, fmt.Errorf("%w: %s", ErrDeadLetterHeaders, fmt.Sprintf(format, args...))
	}
	topic, ok := h[HeaderSourceTopic]
	if !ok || len(topic) == 0 {
		return fail("%s missing", HeaderSourceTopic)
	}
	reason, ok := h[HeaderReason]
	if !ok || len(reason) == 0 || len(reason) > MaxReasonBytes || !utf8.Valid(reason) {
		return fail("%s missing, too long or not UTF-8", HeaderReason)
	}
	info.SourceTopic, info.Reason = string(topic), string(reason)
	p, err := strconv.ParseInt(string(h[HeaderSourcePartition]), 10, 32)
	if err != nil || p < 0 {
		return fail("%s: %q is not a partition", HeaderSourcePartition, h[HeaderSourcePartition])
	}
	info.SourcePartition = int32(p)
	if info.SourceOffset, err = strconv.ParseInt(string(h[HeaderSourceOffset]), 10, 64); err != nil || info.SourceOffset < 0 {
		return fail("%s: %q is not an offset", HeaderSourceOffset, h[HeaderSourceOffset])
	}
	for _, c := range []struct {
		sizeHeader, sumHeader string
		limit                 int64
		size                  *int64
		sum                   *[sha256.Size]byte
	}{
		{HeaderValueBytes, HeaderValueSHA256, MaxDeadLetterValueBytes, &info.ValueBytes, &info.ValueSHA256},
		{HeaderKeyBytes, HeaderKeySHA256, MaxDeadLetterKeyBytes, &info.KeyBytes, &info.KeySHA256},
	} {
		size, hasSize := h[c.sizeHeader]
		sum, hasSum := h[c.sumHeader]
		if !hasSize && !hasSum {
			continue
		}
		n, err := strconv.ParseInt(string(size), 10, 64)
		if err != nil || n <= c.limit {
			return fail("%s: %q is not a size over %d", c.sizeHeader, size, c.limit)
		}
		if len(sum) != 2*sha256.Size {
			return fail("%s: %d characters, want %d", c.sumHeader, len(sum), 2*sha256.Size)
		}
		if _, err := hex.Decode(c.sum[:], sum); err != nil {
			return fail("%s: %v", c.sumHeader, err)
		}
		*c.size = n
	}
	return info, nil
}

// DeadLetterClass is the bounded class of a dead letter's reason, for metrics: the field an
// invalid record broke (the first word of InvalidError.Reason: ts, steps, user_id, json,
// value, key, ...), as the validation code names them and never the record; "other" for any
// other failure (a malformed loop record, a user past the regions of a day).
func DeadLetterClass(reason error) string {
	var inv *InvalidError
	if !errors.As(reason, &inv) {
		return "other"
	}
	field, _, _ := strings.Cut(inv.Reason, ":")
	field, _, _ = strings.Cut(field, " ")
	if field == "" || len(field) > 32 || strings.Trim(field, "abcdefghijklmnopqrstuvwxyz_") != "" {
		return "other"
	}
	return field
}
