// Package replay is `rankstream replay`: it moves a processor group (and what its family
// says goes with it) back to earlier offsets, after refusing while the group has live
// members, prints the plan, clears what the family's replay clears and, with Follow, shows
// the progress until the processors caught up.
//
// What a replay moves is each family's (processors/<family>: a kafka.Replay); this package
// only lists the groups the command knows and carries the plan out through
// internal/platform/kafka. It imports no store and no other service.
package replay
