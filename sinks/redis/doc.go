// Package redis is rankstream's serving store. It owns every Redis key of the contract
// (keys.go), every script, and both sides of each key: the writers (StepsWriter: merged step
// values and the steps boards, through pipelines, idempotently, acknowledging each record only
// once it is stored so that Kafka offsets are committed after; HotWriter: the hot-search
// snapshot, which never goes back in time; BoardWriter: the score boards, exact over the whole
// score range, sharded, with absolute writes; ScoresWriter: the scores processor's updates into
// BoardWriter, through the same asynchronous layer as StepsWriter; FriendsWriter: the friends
// processor's pairs into the sets friends:{user}, through that layer too) and the Reader the read API answers from. It
// works on a single server and on a Redis Cluster.
//
// It imports go-redis, topics and internal plumbing (board, obs, backoff); never goka, a Kafka
// client, a processor or ClickHouse.
package redis
