// Package board holds the pure rules of exact leaderboards shared by the processors, the Redis
// sink and the read API: calendar days, the composite score that packs a score and the time it
// was reached into one exact float64, and the update a processor hands to a board's store
// (StepUpdate). Key names belong to the store that writes and reads them (sinks/redis).
//
// It imports only the standard library.
package board
