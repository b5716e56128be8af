package kafka

import "github.com/lovoo/goka"

// Replay is what a replay of one processor family moves back and clears; each family
// describes its own (steps.Replay, hot.Replay) and `rankstream replay` carries it out with
// PlanReset, CommitReset and Clear.
type Replay struct {
	// Offsets are the groups' offsets on the topics they read that go back to the target.
	Offsets []GroupTopic
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
