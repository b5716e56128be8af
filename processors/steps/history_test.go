package steps

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/board"
)

// recorder is a HistoryStore keeping what it was given; Check refuses days with no steps.
type recorder struct{ written [][]HistoryDay }

func (r *recorder) Check(d *HistoryDay) error {
	if d.Steps == 0 {
		return errors.New("no steps")
	}
	return nil
}
func (r *recorder) WriteDays(_ context.Context, days []HistoryDay) error {
	r.written = append(r.written, slices.Clone(days))
	return nil
}
func (r *recorder) Retryable(error) bool { return false }

// TestHistoryBatch: a batch keeps the latest value of each user-day of the states it reads,
// leaves out the days as last written, skips tombstones, and refuses corrupt states and days
// the store cannot take (keeping the rest of the state).
func TestHistoryBatch(t *testing.T) {
	rec := &recorder{}
	b := &historyBatch{store: rec, pending: map[dayKey]HistoryDay{}, written: map[dayKey]HistoryDay{}}
	const d1, d2 = board.Day(20261129), board.Day(20261130)
	state := func(days ...DayState) *kgo.Record {
		v, err := (&State{Days: days}).MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return &kgo.Record{Key: []byte("u1"), Value: v}
	}
	add := func(r *kgo.Record) error {
		t.Helper()
		return b.Add(r)
	}
	write := func() []HistoryDay {
		t.Helper()
		if err := b.Write(context.Background()); err != nil {
			t.Fatal(err)
		}
		b.Reset()
		got := rec.written[len(rec.written)-1]
		slices.SortFunc(got, func(x, y HistoryDay) int { return int(x.Day - y.Day) })
		return got
	}
	if err := add(state(DayState{Day: d1, Steps: 10, ReachedMs: 1})); err != nil {
		t.Fatal(err)
	}
	if err := add(state(DayState{Day: d1, Steps: 20, ReachedMs: 2}, DayState{Day: d2, Steps: 5, ReachedMs: 3, Region: "eu"})); err != nil {
		t.Fatal(err)
	}
	if err := add(&kgo.Record{Key: []byte("u1")}); err != nil { // a tombstone changes nothing
		t.Fatal(err)
	}
	if b.Len() != 2 {
		t.Fatalf("%d days pending, want 2", b.Len())
	}
	want := []HistoryDay{{"u1", d1, 20, 2, ""}, {"u1", d2, 5, 3, "eu"}}
	if got := write(); !slices.Equal(got, want) {
		t.Fatalf("wrote %+v, want %+v", got, want)
	}
	// The same state again: nothing to write; then d2 grows: only d2.
	if err := add(state(DayState{Day: d1, Steps: 20, ReachedMs: 2}, DayState{Day: d2, Steps: 5, ReachedMs: 3, Region: "eu"})); err != nil || b.Len() != 0 {
		t.Fatalf("the state as written: %v, %d days pending", err, b.Len())
	}
	if err := add(state(DayState{Day: d1, Steps: 20, ReachedMs: 2}, DayState{Day: d2, Steps: 7, ReachedMs: 4, Region: "eu"})); err != nil {
		t.Fatal(err)
	}
	if got, want := write(), []HistoryDay{{"u1", d2, 7, 4, "eu"}}; !slices.Equal(got, want) {
		t.Fatalf("wrote %+v, want %+v", got, want)
	}
	// An older state read again (a redelivery) then the written one: nothing left to write.
	if err := add(state(DayState{Day: d1, Steps: 10, ReachedMs: 1})); err != nil || b.Len() != 1 {
		t.Fatalf("an older state: %v, %d days pending", err, b.Len())
	}
	if err := add(state(DayState{Day: d1, Steps: 20, ReachedMs: 2}, DayState{Day: d2, Steps: 7, ReachedMs: 4, Region: "eu"})); err != nil || b.Len() != 0 {
		t.Fatalf("the written state after an older one: %v, %d days pending", err, b.Len())
	}
	if err := add(&kgo.Record{Key: []byte("u1"), Value: []byte{0xff, 1, 2}}); !errors.Is(err, ErrCorruptState) {
		t.Fatalf("a corrupt state: %v, want ErrCorruptState", err)
	}
	if err := add(state(DayState{Day: d1, Steps: 0}, DayState{Day: d2, Steps: 9, ReachedMs: 5})); err == nil || b.Len() != 1 {
		t.Fatalf("a day the store refuses: %v, %d days pending (want an error and the other day)", err, b.Len())
	}
}
