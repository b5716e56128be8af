package topics

import (
	"bytes"
	"encoding/hex"
	"reflect"
	"testing"
)

// The bytes below were produced by processors/hot's encoders (commit 3fcb5a4, before the formats
// moved here; the version 1 checkpoint is the version 2 one without Dropped and Held) and, for
// the terms record (kind 3), by topics.HotLoopTermsWriter when it was introduced: a running
// cluster's loop records and checkpoints must still decode, and records must encode to exactly
// these bytes. The single term record (kind 1) is no longer written but still read. The idle
// marker (kind 4), the version 3 checkpoint (version 2 plus Idle), the live marker and the
// version 4 checkpoint (version 3 plus Live) were written by their encoders when they were
// introduced.
const (
	goldenTerm   = "017b82532ca2010000030000002a00000000000000"
	goldenMarker = "02ffffffffffffffffffffffff0000000000000000"
	goldenLive   = "02ffffffffffffffffffffffff0100000000000000"
	goldenIdle   = "04000000000000000006000000d204000000000000"
	goldenTerms  = "030500000004736e6f77f6899cc5c5682b0c626c61636b20667269646179c5110804736e6f77c811b607"
	goldenCPv4   = "0440e201000000000030f7532ca2010000110000000000000060ea000000000000e803000000000000e093040000000000640000000000000002000000000000000a00000000000000070000006300000000000000030000000000000005000000000000000300000006000000000000000700000008000000000000000000000002000000a03d612ca201000004000000736e6f77f000622ca201000000000000020000000200000005000000020000000000000006000000010203fe"
	goldenCPv3   = "0340e201000000000030f7532ca2010000110000000000000060ea000000000000e803000000000000e093040000000000640000000000000002000000000000000a00000000000000070000006300000000000000030000000000000005000000000000000300000006000000000000000700000008000000000000000000000002000000a03d612ca201000004000000736e6f77f000622ca201000000000000020000000200000005000000010203fe"
	goldenCPv2   = "0240e201000000000030f7532ca2010000110000000000000060ea000000000000e803000000000000e093040000000000640000000000000002000000000000000a00000000000000070000006300000000000000030000000000000005000000000000000300000006000000000000000700000008000000000000000000000002000000a03d612ca201000004000000736e6f77f000622ca201000000000000010203fe"
	goldenCPv1   = "0140e201000000000030f7532ca201000060ea000000000000e803000000000000e093040000000000640000000000000002000000000000000a000000000000000700000063000000000000000300000000000000050000000000000003000000060000000000000007000000080000000000000000000000010203fe"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLoopRecordGoldenBytes: the loop topic's records keep their bytes, the single term records
// of older versions included.
func TestLoopRecordGoldenBytes(t *testing.T) {
	for _, c := range []struct {
		golden string
		rec    HotLoopRecord
	}{
		{goldenTerm, HotLoopRecord{Kind: HotLoopTerm, Ms: 1796040000123, Partition: 3, Offset: 42}},
		{goldenMarker, HotLoopRecord{Kind: HotLoopMarker, Ms: -1, Partition: -1}},
		{goldenLive, HotLoopRecord{Kind: HotLoopMarker, Ms: -1, Partition: -1, Live: true}},
		{goldenIdle, HotLoopRecord{Kind: HotLoopIdle, Partition: 6, Offset: 1234}},
		{goldenTerms, HotLoopRecord{Kind: HotLoopTerms, Partition: 5, Terms: []HotLoopEntry{
			{"snow", 1796040000123, 42}, {"black friday", 1796039999000, 50}, {"snow", 1796040000124, 1000},
		}}},
	} {
		b := unhex(t, c.golden)
		if got := c.rec.Encode(); !bytes.Equal(got, b) {
			t.Errorf("%+v encodes to %x, want %s", c.rec, got, c.golden)
		}
		if got, err := DecodeHotLoopRecord(b); err != nil || !reflect.DeepEqual(got, c.rec) {
			t.Errorf("%s decodes to %+v, %v; want %+v", c.golden, got, err, c.rec)
		}
	}
}

// TestCheckpointGoldenBytes: hot.checkpoints keeps its bytes (version 4), and checkpoints of
// versions 3, 2 and 1 still decode.
func TestCheckpointGoldenBytes(t *testing.T) {
	want := &HotCheckpoint{LoopOffset: 123456, EndMs: 1796040030000, Dropped: 17, Shape: HotShape{60_000, 1000, 300_000, 100},
		Seen: map[int32]int64{7: 99, 0: 10}, Marks: map[int32]int64{3: 6, 0: 5, 7: 8}, First: map[int32]int64{},
		Held: []HotHeldTerm{{1796040900000, "snow"}, {1796040950000, ""}}, Idle: []int32{2, 5}, Live: []int32{0, 6}, Window: []byte{1, 2, 3, 0xfe}}
	b := unhex(t, goldenCPv4)
	if got := want.Encode(); !bytes.Equal(got, b) {
		t.Errorf("checkpoint encodes to\n%x\nwant\n%s", got, goldenCPv4)
	}
	if got, err := DecodeHotCheckpoint(b); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("version 4 golden decodes to %+v, %v; want %+v", got, err, want)
	}
	v3 := *want
	v3.Live = nil
	if got, err := DecodeHotCheckpoint(unhex(t, goldenCPv3)); err != nil || !reflect.DeepEqual(got, &v3) {
		t.Errorf("version 3 golden decodes to %+v, %v; want %+v", got, err, &v3)
	}
	v2 := v3
	v2.Idle = nil
	if got, err := DecodeHotCheckpoint(unhex(t, goldenCPv2)); err != nil || !reflect.DeepEqual(got, &v2) {
		t.Errorf("version 2 golden decodes to %+v, %v; want %+v", got, err, &v2)
	}
	v1 := v2
	v1.Dropped, v1.Held = 0, nil
	if got, err := DecodeHotCheckpoint(unhex(t, goldenCPv1)); err != nil || !reflect.DeepEqual(got, &v1) {
		t.Errorf("version 1 golden decodes to %+v, %v; want %+v", got, err, &v1)
	}
}

// TestPartialGoldenBytes: hot.partials keeps its JSON, as encoding/json wrote it before the codec
// moved to segmentio/encoding/json (HTML characters escaped, a partial without items as null).
func TestPartialGoldenBytes(t *testing.T) {
	for _, c := range []struct {
		golden string
		p      HotPartial
	}{
		{`{"partition":5,"window_start_ms":1796036400000,"window_end_ms":1796040000000,"items":[{"Item":"black friday","Count":892,"Error":0},{"Item":"snow \"storm\" \u003cb\u003e","Count":17,"Error":3},{"Item":"météo","Count":9,"Error":9}],"dropped":2}`,
			HotPartial{Partition: 5, WindowStart: 1796036400000, WindowEnd: 1796040000000, Dropped: 2,
				Items: []PartialItem{{"black friday", 892, 0}, {`snow "storm" <b>`, 17, 3}, {"météo", 9, 9}}}},
		{`{"partition":0,"window_start_ms":1,"window_end_ms":5001,"items":null}`, HotPartial{WindowStart: 1, WindowEnd: 5001}},
	} {
		if got, err := (HotPartialCodec{}).Encode(&c.p); err != nil || string(got) != c.golden {
			t.Errorf("%+v encodes to %s, %v; want %s", c.p, got, err, c.golden)
		}
		if got, err := (HotPartialCodec{}).Decode([]byte(c.golden)); err != nil || !reflect.DeepEqual(got, &c.p) {
			t.Errorf("%s decodes to %+v, %v; want %+v", c.golden, got, err, c.p)
		}
	}
}
