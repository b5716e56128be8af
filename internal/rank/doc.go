// Package rank holds the pure logic of exact leaderboards shared by the processors, the Redis
// sink and the query service: calendar days, the Redis key names of the contract, and the
// composite score that packs a score and the time it was reached into one exact float64.
//
// It imports only the standard library.
package rank
