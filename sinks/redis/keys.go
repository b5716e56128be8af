package redis

import "github.com/rankstream/rankstream/board"

// Redis key names of the contract (see docs/contract.md). Ids are validated by package topics to
// contain no ':' or spaces, so they are embedded unescaped.

// StepKey is the String holding a user's merged steps for a local day.
func StepKey(d board.Day, user string) string { return "step:" + d.String() + ":" + user }

// StepsGlobalBoard is the daily steps board of every user.
func StepsGlobalBoard(d board.Day) string { return "rank:steps:global:" + d.String() }

// StepsRegionBoard is the daily steps board of one region.
func StepsRegionBoard(region string, d board.Day) string {
	return "rank:steps:region:" + region + ":" + d.String()
}

// HotKey is the String holding the JSON of a Top-K stream's latest snapshot, e.g.
// hot:search:latest. Stream names hold no ':', braces or spaces (topics checks them).
func HotKey(stream string) string { return "hot:" + stream + ":latest" }

// HotZSetKey is the ZSET mirror of HotKey (item → count), for clients that prefer ZREVRANGE.
// Its hash tag is HotKey, so in a Redis Cluster both keys live in one slot and a script can
// replace them together.
func HotZSetKey(stream string) string { return "{" + HotKey(stream) + "}:z" }
