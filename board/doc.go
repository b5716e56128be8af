// Package board holds the pure rules of exact leaderboards shared by the processors, the Redis
// sink and the read API: calendar days, board definitions (Board, checked from a Spec: name,
// periods, zone, seasons, retention, shards), the periods of a board and the windows
// [start, end) they cut in its zone (CalendarWindow, Board.Window), the composite score that
// packs a score and the time it was reached into one exact float64, and the updates a
// processor hands to a board's store (StepUpdate). Key names belong to the store that writes
// and reads them (sinks/redis); the boards file's format belongs to internal/platform/boardsfile.
//
// It imports only the standard library.
package board
