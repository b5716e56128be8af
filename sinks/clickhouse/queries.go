package clickhouse

// The analysts' queries over topk_history, as docs/contract.md shows them. They run in the
// database of the history (clickhouse-client --database rankstream) and take their
// parameters through clickhouse-go's client-side `?` binding, which every server version
// understands. A snapshot's window belongs to the UTC day of its window_end. FINAL shows each
// (stream, window_end, rank) once, with its latest version, however often it was written.

// QueryTopItemsOfDay lists the items of a stream's snapshots on one day, by the largest count
// each reached in a window of that day (peak_count), then by item; with each item's best rank
// and the number of windows it appeared in. Parameters: stream, day (a Date, a DateTime or a
// 'YYYY-MM-DD' string), the number of items.
const QueryTopItemsOfDay = `SELECT item, max(count) AS peak_count, min(rank) AS best_rank, count() AS windows
FROM topk_history FINAL
WHERE stream = ? AND toDate(window_end) = toDate(?)
GROUP BY item
ORDER BY peak_count DESC, item
LIMIT ?`

// QueryItemRankOverTime lists an item's rank and count in every window of a stream whose end
// lies in [from, to), oldest first; windows where the item was not reported have no row.
// Parameters: stream, item, from, to (DateTimes).
const QueryItemRankOverTime = `SELECT window_end, rank, count
FROM topk_history FINAL
WHERE stream = ? AND item = ? AND window_end >= ? AND window_end < ?
ORDER BY window_end`

// QueryEnteredTop10 lists the items that were in the Top-10 of a stream on a day but in no
// Top-10 of the day before, with the end of the first window of the day that had them in the
// Top-10 (entered_at), their best rank and largest count that day; by entered_at, then best
// rank. Parameters: stream, day, stream, day (the same two values twice).
const QueryEnteredTop10 = `SELECT item, min(window_end) AS entered_at, min(rank) AS best_rank, max(count) AS peak_count
FROM topk_history FINAL
WHERE stream = ? AND toDate(window_end) = toDate(?) AND rank <= 10
  AND item NOT IN (
    SELECT item FROM topk_history FINAL
    WHERE stream = ? AND toDate(window_end) = toDate(?) - 1 AND rank <= 10)
GROUP BY item
ORDER BY entered_at, best_rank, item`

// The analysts' queries over user_daily_steps. A day is the user's local calendar day. FINAL
// shows each (user_id, day) once, with its largest value. The filters before FINAL are on the
// key (user_id, day) only, which every version of a row shares; the region, which a later
// version may change, is filtered after FINAL.

// QueryUserMonth lists a user's days in one month, oldest first: the day, the steps, the
// region the user was ranked in ("" for none) and when the value was reached. Parameters:
// user id, any day of the month (a Date, a DateTime or a 'YYYY-MM-DD' string).
const QueryUserMonth = `SELECT day, steps, region, updated_at
FROM user_daily_steps FINAL
WHERE user_id = ? AND toStartOfMonth(day) = toStartOfMonth(toDate(?))
ORDER BY day`

// QueryRegionDays gives, for every day in [from, to) with users ranked in a region, the
// number of those users, their median steps and the threshold of their top 1% (the 99th
// percentile: a user with at least that many steps is in the top 1%), both exact
// (quantileExact: the value at index floor(q × users) of the sorted steps, so for an even
// count the upper of the two middle values). Parameters: from, to (Dates), region.
const QueryRegionDays = `SELECT day, count() AS users, quantileExact(0.5)(steps) AS median_steps,
  quantileExact(0.99)(steps) AS top1_threshold
FROM (
  SELECT day, steps, region FROM user_daily_steps FINAL
  WHERE day >= toDate(?) AND day < toDate(?))
WHERE region = ?
GROUP BY day
ORDER BY day`
