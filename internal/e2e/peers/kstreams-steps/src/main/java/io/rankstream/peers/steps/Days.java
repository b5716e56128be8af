package io.rankstream.peers.steps;

import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * Calendar days as yyyymmdd ints and the daily boards' composite score: a port of
 * internal/rank (day.go, composite.go, keys.go).
 */
final class Days {
    private Days() {}

    static final long HOUR_MS = 3_600_000L;
    /** Zones span UTC-12 to UTC+14: a local date covers at most 50 hours of instants. */
    private static final long EARLIEST_OFFSET_MS = 14 * HOUR_MS;
    private static final long DAY_SPAN_MS = 50 * HOUR_MS;
    /** The composite of a daily board: reach times in the 50-hour span at 1 ms need 28 bits. */
    private static final int TIME_BITS = 28;
    private static final long MAX_TICK = (1L << TIME_BITS) - 1;
    private static final long LAST_TICK = DAY_SPAN_MS - 1;
    static final long MAX_SCORE = (1L << (53 - TIME_BITS)) - 1;

    /** rank.DayOf: the calendar date of the instant in the zone. */
    static int dayOf(long epochMs, ZoneId zone) {
        LocalDate d = Instant.ofEpochMilli(epochMs).atZone(zone).toLocalDate();
        return d.getYear() * 10000 + d.getMonthValue() * 100 + d.getDayOfMonth();
    }

    static int dayOfUtc(long epochMs) {
        return dayOf(epochMs, ZoneOffset.UTC);
    }

    /** Day.FirstInstant: the earliest instant whose local date can be day in any zone. */
    static long firstInstantMs(int day) {
        LocalDate d = LocalDate.of(day / 10000, day / 100 % 100, day % 100);
        return d.atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli() - EARLIEST_OFFSET_MS;
    }

    /** Day.LastInstant: the end (exclusive) of the latest instant whose local date can be day. */
    static long lastInstantMs(int day) {
        return firstInstantMs(day) + DAY_SPAN_MS;
    }

    /**
     * DayComposite(day).Encode: score in the high bits, (maxTick - tick) in the low 28, so that
     * more steps rank first and, among equal steps, the earlier reach. Exact below 2^53.
     */
    static double composite(int day, long score, long reachedMs) {
        if (score < 0 || score > MAX_SCORE) {
            throw new IllegalArgumentException("rank: score out of the composite's range: " + score);
        }
        long d = reachedMs - firstInstantMs(day);
        if (d < 0 || d > LAST_TICK) {
            throw new IllegalArgumentException("rank: reach time out of the composite's range: " + reachedMs);
        }
        return (double) (score << TIME_BITS | (MAX_TICK - d));
    }

    static String stepKey(int day, String user) {
        return "step:" + day + ":" + user;
    }

    static String globalBoard(int day) {
        return "rank:steps:global:" + day;
    }

    static String regionBoard(String region, int day) {
        return "rank:steps:region:" + region + ":" + day;
    }
}
