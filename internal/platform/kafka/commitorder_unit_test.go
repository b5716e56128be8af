package kafka

import (
	"slices"
	"testing"

	"github.com/IBM/sarama"
)

// markSession records the offsets marked (the only method partCommits calls).
type markSession struct {
	sarama.ConsumerGroupSession
	marks []int64
}

func (s *markSession) MarkOffset(_ string, _ int32, offset int64, _ string) {
	s.marks = append(s.marks, offset)
}

// TestPartCommitsOrder: offsets with gaps (compaction, transaction markers) finishing in any
// order are marked only up to the first unfinished one; a finish reported twice or for an
// offset committed already marks nothing; one never delivered comes after the pending ones.
func TestPartCommitsOrder(t *testing.T) {
	s := &markSession{}
	p := &partCommits{session: s, topic: "t"}
	for _, o := range []int64{3, 4, 7, 8, 20} {
		p.deliver(o)
	}
	for _, step := range []struct {
		finish int64
		marks  []int64 // all marks so far
	}{
		{7, nil},
		{4, nil},
		{3, []int64{8}},
		{3, []int64{8}},
		{2, []int64{8}},
		{20, []int64{8}},
		{8, []int64{8, 21}},
		{25, []int64{8, 21, 26}},
	} {
		p.finished(step.finish, "")
		if !slices.Equal(s.marks, step.marks) {
			t.Fatalf("after finishing %d: marks %v, want %v", step.finish, s.marks, step.marks)
		}
	}
	// The slice is reused from its front: a long run keeps it short.
	for o := int64(100); o < 10_100; o++ {
		p.deliver(o)
		p.finished(o, "")
	}
	if s.marks[len(s.marks)-1] != 10_100 || cap(p.pending) > 64 {
		t.Fatalf("last mark %d, pending capacity %d", s.marks[len(s.marks)-1], cap(p.pending))
	}
}

// BenchmarkPartCommits: a record delivered and finished, with 20,000 waiting before it (the
// steps sink's records waiting for a flush), finished in order as a flush acknowledges them.
func BenchmarkPartCommits(b *testing.B) {
	p := &partCommits{session: &markSession{}, topic: "t"}
	const waiting = 20_000
	for o := range int64(waiting) {
		p.deliver(o)
	}
	next := int64(0)
	for b.Loop() {
		p.deliver(next + waiting)
		p.finished(next, "")
		next++
		if len(p.session.(*markSession).marks) > 1<<16 {
			p.session.(*markSession).marks = p.session.(*markSession).marks[:0]
		}
	}
}
