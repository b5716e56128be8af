package io.rankstream.peers.steps;

import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;
import net.jpountz.xxhash.XXHash64;
import net.jpountz.xxhash.XXHashFactory;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The steps processor (processors/steps/processor.go): decode and validate, merge into the
 * user's state in the RocksDB store, hand the day's merged value to the thread's Redis sink;
 * an invalid record goes to the dead-letter topic with its reason.
 */
final class StepsProcessor implements Processor<Bytes, byte[], byte[], byte[]> {
    static final String STATE_STORE = "steps-state";
    static final String DLQ_SINK = "dlq";
    private static final Logger LOG = LoggerFactory.getLogger(StepsProcessor.class);
    private static final XXHash64 XXH = XXHashFactory.fastestJavaInstance().hash64();
    private static final byte[] NO_KEY = new byte[0];

    private final StepReports.Rules rules;
    private final Supplier<RedisSink> sinks;
    private final long flushMs;
    private final int maxBatch;
    private ProcessorContext<byte[], byte[]> ctx;
    private KeyValueStore<Bytes, byte[]> store;
    private long lastDeadLetterLog;

    StepsProcessor(StepReports.Rules rules, Supplier<RedisSink> sinks, long flushMs, int maxBatch) {
        this.rules = rules;
        this.sinks = sinks;
        this.flushMs = flushMs;
        this.maxBatch = maxBatch;
    }

    @Override
    public void init(ProcessorContext<byte[], byte[]> context) {
        ctx = context;
        store = context.getStateStore(STATE_STORE);
        // Every task's punctuator flushes the whole thread's sink (the first one that fires does
        // the work), then asks for a commit, which commits every task of the thread.
        context.schedule(Duration.ofMillis(flushMs), PunctuationType.WALL_CLOCK_TIME, now -> flushAndCommit());
    }

    private void flushAndCommit() {
        RedisSink sink = sinks.get();
        if (sink.records() > 0) {
            sink.flush();
            ctx.commit();
        }
    }

    @Override
    public void process(Record<Bytes, byte[]> rec) {
        RedisSink sink = sinks.get();
        byte[] key = rec.key() == null ? NO_KEY : rec.key().get();
        StepReports.Valid r;
        try {
            r = StepReports.decode(key, rec.value(), rec.timestamp(), rules);
        } catch (StepReports.InvalidException e) {
            deadLetter(rec, key, e.getMessage());
            sink.skip();
            return;
        }
        Bytes k = rec.key();
        byte[] stored = store.get(k);
        State s = stored == null ? new State() : State.decode(stored);
        int oldest = Days.dayOfUtc(rec.timestamp() - rules.retentionMs() - 48 * Days.HOUR_MS);
        byte[] id = r.requestId().getBytes(java.nio.charset.StandardCharsets.UTF_8);
        State.Result res;
        try {
            res = s.apply(new State.Report(XXH.hash(id, 0, id.length, 0), Days.dayOf(r.tsMs(), r.zone()),
                r.steps(), r.tsMs(), r.region()), oldest);
        } catch (State.TooManyRegionsException e) {
            deadLetter(rec, key, e.getMessage());
            sink.skip();
            return;
        }
        // Write back whatever changed, a stale report's request id included.
        if (res.changed()) {
            store.put(k, s.encode());
        }
        // Every valid record re-sends its day's whole effect, as ours does (a redelivery after
        // a crash must still write what the state already holds).
        State.DayState d = res.day();
        sink.submit(new RedisSink.Update(r.userId(), d.day, d.steps, d.reachedMs, d.region, List.copyOf(d.left)));
        if (sink.size() >= maxBatch) {
            sink.flush();
            ctx.commit();
        }
    }

    private void deadLetter(Record<Bytes, byte[]> rec, byte[] key, String reason) {
        RecordMetadata m = ctx.recordMetadata().orElseThrow();
        DeadLetters.DeadLetter dl = DeadLetters.of(m.topic(), m.partition(), m.offset(), key, rec.value(), reason);
        ctx.forward(new Record<>(dl.key(), dl.value(), rec.timestamp(), dl.headers()), DLQ_SINK);
        long now = System.currentTimeMillis();
        if (now - lastDeadLetterLog >= 1000) {
            lastDeadLetterLog = now;
            LOG.warn("record dead-lettered: topic {} partition {} offset {}: {}", m.topic(), m.partition(), m.offset(), reason);
        }
    }
}
