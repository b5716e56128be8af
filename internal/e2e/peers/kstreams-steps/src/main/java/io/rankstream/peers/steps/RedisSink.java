package io.rankstream.peers.steps;

import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.params.ZAddParams;

/**
 * The Redis writes of sinks/redis/steps.go, one instance per stream thread: updates are
 * coalesced per user and day (the best value wins, the regions left are merged) and written in
 * one pipeline per flush: per user-day the set-if-greater script on step:{day}:{user}, per
 * board one ZADD GT of all its members and one EXPIREAT, and a ZREM from every region board the
 * user left. A failed flush is retried with backoff; the caller commits only after flush returned.
 */
final class RedisSink implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RedisSink.class);

    /**
     * The rule of sinks/redis/steps.go's setMax for one key, so that Redis does the same work a
     * key: a raised key is written with its expiry in one SET; a key not raised keeps its value
     * and the expiry it got (a key's expiry depends only on its day).
     */
    static final String SET_MAX = "\n"
        + "local cur = tonumber(redis.call('GET', KEYS[1]) or '-1')\n"
        + "if tonumber(ARGV[1]) > cur then redis.call('SET', KEYS[1], ARGV[1], 'EXAT', ARGV[2]) end\n"
        + "return 0";

    /** rank.StepUpdate: a user's merged state for one local day; every field is absolute. */
    record Update(String user, int day, long steps, long reachedMs, String region, List<String> left) {}

    private record UserDay(String user, int day) {}

    private static final class Pending {
        Update u;
        final List<String> left = new ArrayList<>(0);
    }

    private final URI uri;
    private final int timeoutMs;
    private final long retentionMs;
    private final long giveUpMs;
    private Jedis jedis;
    private String sha;
    private HashMap<UserDay, Pending> days = new HashMap<>();
    private long records;

    /** timeoutMs bounds each Redis call (connect, and the reply of a pipeline). */
    RedisSink(URI uri, int timeoutMs, long retentionMs, long giveUpMs) {
        this.uri = uri;
        this.timeoutMs = timeoutMs;
        this.retentionMs = retentionMs;
        this.giveUpMs = giveUpMs;
    }

    /** Distinct user-days waiting for the next flush. */
    int size() {
        return days.size();
    }

    /** Records handed over since the last flush, valid or dead-lettered. */
    long records() {
        return records;
    }

    /** Counts a record that has nothing to write (it went to the dead-letter topic). */
    void skip() {
        records++;
    }

    void submit(Update u) {
        records++;
        Pending p = days.computeIfAbsent(new UserDay(u.user(), u.day()), k -> new Pending());
        for (String r : u.left()) {
            if (!p.left.contains(r)) {
                p.left.add(r);
            }
        }
        if (p.u == null || better(u, p.u)) {
            p.u = u;
        }
    }

    /** more steps, or as many reached earlier (or at the same time) */
    private static boolean better(Update a, Update b) {
        return a.steps() > b.steps() || a.steps() == b.steps() && a.reachedMs() <= b.reachedMs();
    }

    /**
     * Writes everything submitted so far and returns once Redis acknowledged it. Retries with
     * backoff (50 ms doubling to 5 s); past giveUpMs it throws, and the stream thread dies with
     * its records uncommitted, to be processed again after a restart.
     */
    void flush() {
        if (days.isEmpty()) {
            records = 0;
            return;
        }
        long start = System.currentTimeMillis();
        long wait = 50;
        for (int attempt = 1; ; attempt++) {
            try {
                write();
                days = new HashMap<>(days.size() * 2);
                records = 0;
                return;
            } catch (RuntimeException e) {
                LOG.warn("redis sink: flush of {} user-days failed (attempt {}), retrying in {} ms: {}",
                    days.size(), attempt, wait, e.toString());
                reset();
                if (System.currentTimeMillis() - start + wait > giveUpMs) {
                    throw new IllegalStateException("redis sink: " + days.size() + " user-days not written after "
                        + attempt + " attempts", e);
                }
                try {
                    Thread.sleep(wait);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("redis sink: interrupted while retrying", e);
                }
                wait = Math.min(wait * 2, 5_000);
            }
        }
    }

    private void write() {
        if (jedis == null) {
            jedis = new Jedis(uri, timeoutMs);
            sha = jedis.scriptLoad(SET_MAX);
        }
        Pipeline pipe = jedis.pipelined();
        Map<String, Map<String, Double>> boards = new HashMap<>();
        Map<String, Long> expiry = new HashMap<>();
        for (Pending p : days.values()) {
            Update u = p.u;
            long exp = Math.floorDiv(Days.lastInstantMs(u.day()) + retentionMs, 1000);
            pipe.evalsha(sha, List.of(Days.stepKey(u.day(), u.user())), List.of(Long.toString(u.steps()), Long.toString(exp)));
            double score;
            try {
                score = Days.composite(u.day(), u.steps(), u.reachedMs());
            } catch (IllegalArgumentException e) {
                LOG.error("redis sink: cannot rank update of user {} on {}: {}", u.user(), u.day(), e.getMessage());
                continue;
            }
            String global = Days.globalBoard(u.day());
            boards.computeIfAbsent(global, k -> new HashMap<>()).put(u.user(), score);
            expiry.put(global, exp);
            if (!u.region().isEmpty()) {
                String rb = Days.regionBoard(u.region(), u.day());
                boards.computeIfAbsent(rb, k -> new HashMap<>()).put(u.user(), score);
                expiry.put(rb, exp);
            }
            for (String r : p.left) {
                if (!r.equals(u.region())) {
                    pipe.zrem(Days.regionBoard(r, u.day()), u.user());
                }
            }
        }
        ZAddParams gt = ZAddParams.zAddParams().gt();
        for (Map.Entry<String, Map<String, Double>> b : boards.entrySet()) {
            pipe.zadd(b.getKey(), b.getValue(), gt);
            pipe.expireAt(b.getKey(), expiry.get(b.getKey()));
        }
        for (Object reply : pipe.syncAndReturnAll()) {
            if (reply instanceof JedisDataException e) {
                throw e; // e.g. NOSCRIPT after a Redis restart: reset() reloads the script
            }
        }
    }

    /** Drops the connection after a failure: the next attempt reconnects and reloads the script. */
    private void reset() {
        if (jedis != null) {
            try {
                jedis.close();
            } catch (RuntimeException ignored) {
                // the connection is broken anyway
            }
            jedis = null;
        }
    }

    @Override
    public void close() {
        reset();
    }
}
