// Package friends is the processor family of friends boards: the goka group
// "friends" (processor.go), which keeps each user's side of their friendships in its table
// (restored from its changelog after a crash or rebalance), carries every op to the other
// user of the pair through its loop topic, and hands each pair's state to a Sink, which
// commits the record once it is stored; and the user's state with its pure rules (state.go:
// a last-writer-wins op per pair, removal winning ties, bounded to MaxFriends friends and
// MaxRemoved remembered removals, with a versioned binary codec for the group table).
//
// It imports topics and internal plumbing (board, kafka, obs); never a sink, a Redis client
// or another processor family.
package friends
