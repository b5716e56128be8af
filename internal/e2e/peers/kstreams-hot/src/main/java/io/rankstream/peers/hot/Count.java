package io.rankstream.peers.hot;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.WindowStore;

/**
 * Stage 2, one task per partition of the terms repartition topic (each term lives in exactly
 * one): counts each term per slide-long tumbling bucket in a windowed RocksDB store
 * (BUCKETS, changelogged), and keeps the running count of the current window per term in memory
 * (rebuilt from the buckets when the task starts), with its order. When the watermark passes a
 * window end, the bucket that completes the window is added, the one that left it subtracted,
 * and the partition's Top-K of that window is sent to the merge. The watermark and window
 * rules are those of our group hot (processors/hot/rules.go) but for idleness: each input
 * partition's markers give its watermark; windows close up to the smallest one less the
 * lateness, rounded down to the slide; an input partition holds nothing back from its idle
 * marker (Route sends it once the partition has had nothing left to read for the idle time) to
 * its next watermark marker, and everything back until it sent one or the other; the first
 * window ends at the first slide boundary not before any input partition's first watermark; a
 * term dated before the end of the last window emitted is late: dropped and counted in the
 * next partial's dropped; a watermark that jumps emits the windows up to the reach of the
 * events held (window + lookahead), then only the newest.
 */
final class Count implements Processor<byte[], byte[], byte[], byte[]> {
    static final String BUCKETS = "buckets";
    static final String META = "meta";

    private final Config cfg;
    private ProcessorContext<byte[], byte[]> ctx;
    private WindowStore<String, Long> buckets;
    private KeyValueStore<String, Long> meta;
    private int partition;

    // The current window's counts and their order (RANK), from the buckets.
    private final Map<String, Long> counts = new HashMap<>();
    private final TreeSet<Loop.Item> ranked = new TreeSet<>(Loop.RANK);
    // The view of the input partitions (also in META): watermarks, first watermarks, and those
    // idle since their last watermark.
    private final Map<Integer, Long> marks = new HashMap<>();
    private final Map<Integer, Long> first = new HashMap<>();
    private final Set<Integer> idle = new HashSet<>();
    private long last; // end of the last window emitted, 0: none
    private long dropped; // since the last partial

    record Config(int inputPartitions, int k, long windowMs, long slideMs, long latenessMs, long lookaheadMs) {}

    Count(Config cfg) {
        this.cfg = cfg;
    }

    @Override
    public void init(ProcessorContext<byte[], byte[]> context) {
        ctx = context;
        buckets = context.getStateStore(BUCKETS);
        meta = context.getStateStore(META);
        partition = context.taskId().partition();
        try (KeyValueIterator<String, Long> it = meta.all()) {
            while (it.hasNext()) {
                KeyValue<String, Long> kv = it.next();
                if (kv.key.startsWith("mark/")) {
                    marks.put(Integer.parseInt(kv.key.substring(5)), kv.value);
                } else if (kv.key.startsWith("first/")) {
                    first.put(Integer.parseInt(kv.key.substring(6)), kv.value);
                } else if (kv.key.startsWith("idle/")) {
                    idle.add(Integer.parseInt(kv.key.substring(5)));
                }
            }
        }
        last = orZero(meta.get("last"));
        dropped = orZero(meta.get("dropped"));
        if (last != 0) {
            rebuild(last);
        }
    }

    private static long orZero(Long v) {
        return v == null ? 0 : v;
    }

    @Override
    public void process(Record<byte[], byte[]> rec) {
        ByteBuffer v = ByteBuffer.wrap(rec.value());
        byte kind = v.get();
        if (kind == Loop.IDLE) {
            int p = v.getInt();
            if (idle.add(p)) {
                meta.put("idle/" + p, 1L);
            }
            closeWindows();
            return;
        }
        if (kind == Loop.MARK) {
            int p = v.getInt();
            long ms = v.getLong();
            if (!first.containsKey(p)) {
                first.put(p, ms);
                meta.put("first/" + p, ms);
            }
            Long old = marks.get(p);
            if (old == null || ms > old) {
                marks.put(p, ms);
                meta.put("mark/" + p, ms);
            }
            if (idle.remove(p)) {
                meta.delete("idle/" + p);
            }
            closeWindows();
            return;
        }
        long ms = v.getLong();
        if (last != 0 && ms < last) {
            dropped++;
            meta.put("dropped", dropped);
            return;
        }
        String term = new String(rec.key(), StandardCharsets.UTF_8);
        long start = Math.floorDiv(ms, cfg.slideMs) * cfg.slideMs;
        Long n = buckets.fetch(term, start);
        buckets.put(term, n == null ? 1 : n + 1, start);
    }

    /** Emits every window the watermarks let close. */
    private void closeWindows() {
        long low = -1;
        for (int p = 0; p < cfg.inputPartitions; p++) {
            if (idle.contains(p)) {
                continue;
            }
            Long ms = marks.get(p);
            if (ms == null) {
                return; // an input partition not heard from holds the windows back
            }
            low = low < 0 ? ms : Math.min(low, ms);
        }
        if (low < 0) {
            return;
        }
        long target = Math.floorDiv(low - cfg.latenessMs, cfg.slideMs) * cfg.slideMs;
        if (last == 0) {
            long origin = 0;
            for (int p : marks.keySet()) {
                origin = Math.max(origin, first.get(p));
            }
            long firstEnd = Math.floorDiv(origin + cfg.slideMs - 1, cfg.slideMs) * cfg.slideMs;
            if (target < firstEnd) {
                return;
            }
            rebuild(firstEnd);
            emit(firstEnd);
        }
        long reach = last + cfg.slideMs + cfg.lookaheadMs + cfg.windowMs;
        while (last + cfg.slideMs <= Math.min(target, reach)) {
            long end = last + cfg.slideMs;
            fold(end - cfg.slideMs, 1);
            fold(end - cfg.slideMs - cfg.windowMs, -1);
            emit(end);
        }
        if (target > reach) {
            rebuild(target);
            emit(target);
        }
    }

    /** The counts of the window ending at end, from its buckets. */
    private void rebuild(long end) {
        counts.clear();
        ranked.clear();
        try (KeyValueIterator<Windowed<String>, Long> it = buckets.fetchAll(end - cfg.windowMs, end - cfg.slideMs)) {
            while (it.hasNext()) {
                KeyValue<Windowed<String>, Long> kv = it.next();
                add(kv.key.key(), kv.value);
            }
        }
    }

    /** Adds (sign 1) or subtracts (-1) the bucket starting at start. */
    private void fold(long start, int sign) {
        try (KeyValueIterator<Windowed<String>, Long> it = buckets.fetchAll(start, start)) {
            while (it.hasNext()) {
                KeyValue<Windowed<String>, Long> kv = it.next();
                add(kv.key.key(), sign * kv.value);
            }
        }
    }

    private void add(String term, long delta) {
        Long old = counts.get(term);
        long now = (old == null ? 0 : old) + delta;
        if (old != null) {
            ranked.remove(new Loop.Item(term, old));
        }
        if (now > 0) {
            counts.put(term, now);
            ranked.add(new Loop.Item(term, now));
        } else {
            counts.remove(term);
        }
    }

    private void emit(long end) {
        List<Loop.Item> top = new ArrayList<>(cfg.k);
        Iterator<Loop.Item> it = ranked.iterator();
        while (it.hasNext() && top.size() < cfg.k) {
            top.add(it.next());
        }
        byte[] v = new Loop.Partial(partition, end, dropped, top).encode();
        ctx.forward(new Record<>(Long.toString(end).getBytes(StandardCharsets.UTF_8), v, end));
        last = end;
        dropped = 0;
        meta.put("last", last);
        meta.put("dropped", 0L);
    }
}
