package kafka

import "github.com/lovoo/goka"

// Replay is what a replay of one processor family moves back and clears; each family
// describes its own (steps.Replay, hot.Replay) and `rankstream replay` carries it out with
// PlanReset, CommitReset, Purge and Clear.
type Replay struct {
	// Offsets are the groups' offsets on the topics they read that go back to the target.
	Offsets []GroupTopic
	// Purge are the groups' offsets on topics of their own that the replay writes again from
	// what Offsets re-reads (a repartition topic, the partials a merge reads): their records
	// are deleted and the offsets go to their ends, so that nothing of the previous run is
	// read again and each replay leaves one copy, not one more.
	Purge []GroupTopic
	// Clear are compacted topics emptied once the offsets moved: state the replay must rebuild
	// rather than reuse (a group table kept is reused, as when a process restarts).
	Clear []goka.Stream
	// StartOnly, when set, says why this family replays only from the start.
	StartOnly string
}

// GroupTopic is one group's offsets on one topic.
type GroupTopic struct {
	Group goka.Group
	Topic goka.Stream
}
