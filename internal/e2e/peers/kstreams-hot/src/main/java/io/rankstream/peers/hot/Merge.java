package io.rankstream.peers.hot;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import redis.clients.jedis.Jedis;

/**
 * Stage 3, one task (the partials topic has one partition): the partials of a window are kept in the
 * PENDING store until every terms partition reported; then their lists, disjoint since each
 * term lives in one partition, are merged exactly into the window's Top-K, written to Redis as
 * our snapshot (docs/contract.md) in hot:search:latest unless a later window is there, and
 * appended to the list historyKey (every window, for the benchmark's comparison). The write is
 * synchronous, retried with backoff for up to a minute, then the stream thread fails: the
 * partial is committed only after Redis acknowledged.
 */
final class Merge implements Processor<byte[], byte[], Void, Void> {
    static final String PENDING = "pending";

    /** Sets KEYS[1] unless it holds a later window; always appends to KEYS[2]. */
    private static final String PUBLISH = """
        local old = redis.call('GET', KEYS[1])
        local set = 1
        if old then
          local e = string.match(old, '"window_end":"([^"]*)"')
          if e and e > ARGV[2] then set = 0 end
        end
        if set == 1 then redis.call('SET', KEYS[1], ARGV[1]) end
        redis.call('RPUSH', KEYS[2], ARGV[1])
        return set
        """;
    private static final DateTimeFormatter TIME =
        DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);
    private static final JsonFactory JSON = new JsonFactory();

    private final int partitions;
    private final int k;
    private final long windowMs;
    private final URI redis;
    private final int timeoutMs;
    private final String latestKey;
    private final String historyKey;
    private KeyValueStore<String, byte[]> pending;
    private Jedis jedis;

    Merge(int partitions, int k, long windowMs, URI redis, int timeoutMs, String latestKey, String historyKey) {
        this.partitions = partitions;
        this.k = k;
        this.windowMs = windowMs;
        this.redis = redis;
        this.timeoutMs = timeoutMs;
        this.latestKey = latestKey;
        this.historyKey = historyKey;
    }

    @Override
    public void init(ProcessorContext<Void, Void> context) {
        pending = context.getStateStore(PENDING);
    }

    @Override
    public void process(Record<byte[], byte[]> rec) {
        String end = new String(rec.key(), StandardCharsets.UTF_8);
        List<Loop.Partial> got = partials(pending.get(end));
        Loop.Partial p = Loop.Partial.decode(rec.value());
        if (got.stream().anyMatch(q -> q.partition() == p.partition())) {
            return; // sent again
        }
        got.add(p);
        if (got.size() < partitions) {
            pending.put(end, join(got));
            return;
        }
        publish(snapshot(p.windowEnd(), got), TIME.format(Instant.ofEpochMilli(p.windowEnd())));
        pending.delete(end);
    }

    private static List<Loop.Partial> partials(byte[] v) {
        List<Loop.Partial> out = new ArrayList<>();
        if (v != null) {
            ByteBuffer b = ByteBuffer.wrap(v);
            while (b.hasRemaining()) {
                byte[] one = new byte[b.getInt()];
                b.get(one);
                out.add(Loop.Partial.decode(one));
            }
        }
        return out;
    }

    private static byte[] join(List<Loop.Partial> ps) {
        List<byte[]> enc = ps.stream().map(Loop.Partial::encode).toList();
        ByteBuffer b = ByteBuffer.allocate(enc.stream().mapToInt(e -> 4 + e.length).sum());
        enc.forEach(e -> b.putInt(e.length).put(e));
        return b.array();
    }

    /** The window's snapshot in our JSON form: exact counts, so every error is 0. */
    private String snapshot(long end, List<Loop.Partial> ps) {
        List<Loop.Item> all = new ArrayList<>();
        long dropped = 0;
        for (Loop.Partial p : ps) {
            all.addAll(p.items());
            dropped += p.dropped();
        }
        all.sort(Loop.RANK);
        ByteArrayOutputStream out = new ByteArrayOutputStream(4096);
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("stream", "search");
            g.writeStringField("window_start", TIME.format(Instant.ofEpochMilli(end - windowMs)));
            g.writeStringField("window_end", TIME.format(Instant.ofEpochMilli(end)));
            g.writeStringField("generated_at", TIME.format(Instant.now()));
            g.writeNumberField("version", end);
            g.writeArrayFieldStart("items");
            for (Loop.Item it : all.subList(0, Math.min(k, all.size()))) {
                g.writeStartObject();
                g.writeStringField("item", it.term());
                g.writeNumberField("count", it.count());
                g.writeNumberField("error", 0);
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeArrayFieldStart("missing_partitions");
            g.writeEndArray();
            g.writeNumberField("dropped", dropped);
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    private void publish(String snap, String end) {
        long backoff = 50;
        long deadline = System.currentTimeMillis() + 60_000;
        while (true) {
            try {
                if (jedis == null) {
                    jedis = new Jedis(redis, timeoutMs);
                }
                jedis.eval(PUBLISH, List.of(latestKey, historyKey), List.of(snap, end));
                return;
            } catch (RuntimeException e) {
                if (jedis != null) {
                    jedis.close();
                    jedis = null;
                }
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("kstreams-hot: Redis write failed for a minute", e);
                }
                System.err.println("kstreams-hot: Redis write failed, retrying in " + backoff + " ms: " + e);
                try {
                    Thread.sleep(backoff);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("kstreams-hot: interrupted", ie);
                }
                backoff = Math.min(backoff * 2, 5_000);
            }
        }
    }

    @Override
    public void close() {
        if (jedis != null) {
            jedis.close();
        }
    }
}
