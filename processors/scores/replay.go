package scores

import (
	"github.com/lovoo/goka"

	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/topics"
)

// Replay is what a replay of the scores group (stopped) moves: its offsets on the score ops.
// Its table stays, and must: the ops topic keeps 14 days while a total board or a long period
// keeps what older ops made, so a cleared table would lose it. With the table kept, an op
// replayed is one of
//
//   - applied before: its request id is remembered, so it is a duplicate, changes nothing and
//     re-sends the member's entries on the periods it names as the table holds them now (the
//     latest state, absolute writes): a board never goes back to an older value during the
//     replay, and a flushed Redis is written again;
//   - applied before, its id forgotten since (past MaxRequests ids of the member on the board,
//     or older than the board's retention): its ts is at or before the board's floor, so it is
//     refused with ErrForgotten (dead-lettered again, never applied twice) and re-sends the
//     entries as a duplicate does;
//   - never applied (dead-lettered as naming a board the boards file did not declare then):
//     applied now, from the entries the table holds for that board (none) — this is how a
//     board added to the boards file is built from the retained ops (`--to-time T`: the ops
//     since T);
//   - refused before for the op or its record time alone: refused again, the same way.
//
// So a replay from any target leaves the boards of the first run as they were (a flushed
// Redis comes back from `--to-start`, except entries whose every op left the topic's
// retention: `rankstream reconcile --repair` rewrites those from the table) and builds the
// boards added since. The table's changelog only gets the states that changed (new boards'),
// which the group scores-totals writes to the history store as it follows; to write that
// history again, replay scores-totals (TotalsReplay).
func Replay(n topics.Names) kafka.Replay {
	return kafka.Replay{Offsets: []kafka.GroupTopic{{Group: n.Group(Group), Topic: n.Stream(topics.ScoresUpdated)}}}
}

// TotalsReplay is what a replay of the totals writer (stopped) moves: its offsets on the
// scores group's table, so that it writes every member's entries the table holds again. Rows
// are versioned by their changelog offset, so the store keeps one visible row per board,
// period and member, the latest (entries pruned from the table stay as written).
func TotalsReplay(n topics.Names) kafka.Replay {
	return kafka.Replay{Offsets: []kafka.GroupTopic{{Group: n.Group(TotalsGroup), Topic: goka.Stream(n.Table(Group))}}}
}
