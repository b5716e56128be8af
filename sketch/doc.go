// Package sketch finds the heavy hitters of a stream over an event-time
// sliding window, in memory fixed by configuration whatever the number of
// distinct items: the engine behind hot search. It imports only the standard
// library (its hash is its own, see Hash); it must not import Kafka, goka,
// Redis or ClickHouse clients, nor any text policy (queries are normalised by
// package topics before they get here).
//
// # Model
//
// Event time is cut into slots of one slide (default 5 s). A Window covers
// the slots of [end − window, end), where end is the last watermark given to
// Advance rounded down to the slide; TopK describes that window. Events at
// or after end are kept for the windows to come, up to the lookahead
// (default 1 min) ahead of it; later ones are dropped and counted. Events
// before the window's start are late: dropped and counted (LateDrop, the
// default), or counted into the oldest slot (LateOldest). Advancing one slide
// forgets exactly the slot that leaves. The window never reads a clock, so
// a replay of the same events and watermarks in the same order gives
// byte-identical states and results.
//
// # Design
//
// Up to Candidates items (default 512) are counted exactly, per slot, from
// the event at which they became candidates, and a min-heap orders them by
// their upper bound. Every event of any other item goes into a Count-Min
// Sketch with conservative update. The sketch is kept as one sketch per
// block of slots (default: 12 blocks of 5 min) plus their counter-wise sum;
// each block is updated conservatively on its own, so that when a block
// leaves the window it is subtracted exactly and the sum still never
// under-counts (conservative update applied to the sum would not survive the
// subtraction). The sum may still hold up to one block of events that
// already left the window.
//
// An item that is not a candidate becomes one when the sketch's estimate of
// its earlier events reaches the smallest upper bound in the heap; it
// replaces that candidate, whose exact counts go back into the sketch (one
// conservative update per block), so that the sketch again holds all its
// events. While an item is a candidate the sketch holds exactly its events
// from before its admission (and others' by collision): its estimate bounds
// them. The bound is tightened whenever a block expires, by the sketch's
// estimate and by the per-block estimates of the blocks up to the admission
// slot, and dropped once the newest slot at admission has left the window.
// Keeping candidates out of the sketch makes their events cheap and keeps
// the heavy hitters from inflating the other items' estimates (as in the
// Augmented Sketch of Roy, Khan and Alonso, 2016).
//
// # Guarantees
//
// For every item reported by TopK or Count, the true number of its events in
// the window [start, end) lies in [Count − Error, Count]. This always holds:
// it is deterministic, not probabilistic, for any stream, any watermarks and
// any merge, provided AddHash is given h == Hash(item). (Count − Error is the
// exact count since admission; Error bounds the events before it by the
// sketch, which holds them and, with conservative update, never
// under-counts. A late event counted under LateOldest counts as an event of
// the oldest slot.) For an item
// that is not a candidate, Count is the sketch's estimate and Error equals
// Count: the Count-Min Sketch never under-counts.
//
// What is probabilistic is how large Error can be. An item's estimate
// exceeds its true count in the live blocks by at most ε·N with probability
// at least 1 − δ, where ε = e/width, δ = e^−depth and N is the number of
// events in the sketch (at most those of the window, the lookahead and one
// expired block, less the candidates' events). A candidate's Error is at most that overestimate at its
// admission plus its true events before admission; it is zero once the item
// has been a candidate for a whole window, so long-standing heavy hitters are
// counted exactly. With conservative update the typical overestimate is far
// below ε·N (see ACCURACY.md).
//
// TopK returns the K candidates with the largest Count (the upper bound),
// ties broken by item. An item is a candidate after its latest event if the
// sketch's estimate of its earlier events then reached the smallest upper
// bound among the candidates, which is in particular the case when its true
// count before that event did.
//
// # Sizing for a target error
//
// Choose the width for the error and the depth for its probability: for an
// overestimate of at most ε times the events in the window with probability
// 1 − δ, width = ⌈e/ε⌉ and depth = ⌈ln(1/δ)⌉. The defaults, width 8192 and
// depth 4, give ε ≈ 0.033% and δ ≈ 1.8%. Choose Candidates for how far below
// the K-th item a rising item should already be counted exactly: four to five
// times K suffices for Zipf-like streams; more candidates shorten the time an
// item carries an Error but cost memory. Memory is fixed by the options
// (SizeBytes):
//
//	4·width·depth·(blocks kept + 1)           sketch (blocks kept = ⌈slots/block⌉ + 1, with the lookahead's slots)
//	+ 4·candidates·(window + lookahead)/slide  exact per-slot counts
//	+ about 150·candidates                     candidates, heap, table
//	+ the candidates' item strings
//
// The defaults take 3.4 MiB per window (K = 100, 512 candidates, 1 h window,
// 5 s slide, 1 min lookahead, 12 blocks) and reach precision and recall at
// 100 of at least 0.99 on the accuracy report's streams. Doubling the slide
// halves the per-slot counts; more blocks make the sketch forget sooner at
// one sketch each.
//
// # Merging
//
// Windows of the same shape merge (Merge): counters and exact counts add up,
// candidates are the union. Per-partition Top-K lists over disjoint item sets
// merge with MergeTopK, exactly with respect to the partitions' bounds.
//
// # Checkpoints
//
// MarshalBinary encodes the full state (version byte 1, varints with zero
// runs: about 0.8 MB for a default window holding 4M events); UnmarshalBinary validates
// every field and invariant before it changes the receiver, and never panics.
//
// # Performance
//
// Add hashes the item once (AddHash takes the hash), finds its slot through
// a one-slot cache and probes the candidate table. A candidate's event then
// only increments its slot count and its heap key; another item's event
// reads four counters and updates them in two arrays that fit in the CPU's
// second-level cache: 16-bit counters while every aggregate counter is at
// most 65535 (128 KB at the default width), widened to 32 bits exactly when
// one would pass it, and narrowed back when block expiries bring them all
// down to 32767 (counters.go). That is 23 to 33 ns per event on the benchmark machine
// (BENCHMARKS.md), with no allocation except one copy of an item's string
// when it becomes a candidate.
package sketch
