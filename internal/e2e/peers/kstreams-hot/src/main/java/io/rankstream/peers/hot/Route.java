package io.rankstream.peers.hot;

import io.rankstream.peers.steps.DeadLetters;
import io.rankstream.peers.steps.StepReports.InvalidException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;

/**
 * Stage 1, one task per input partition: validates and normalises each query (SearchQueries),
 * sends the invalid ones to the dead-letter branch and the valid ones, keyed by their term and
 * dated by their event time, to the terms repartition topic. Like our group hot, it also sends
 * every partition of that topic a watermark marker (this input partition's newest event time)
 * before its first term and whenever the window end its watermark allows (newest event time
 * less the lateness, rounded down to the slide) moves. And it decides when its input partition
 * is idle: once the partition has had no record left to read (its end offset reached,
 * InputOffsets) for the idle time, it sends every terms partition an idle marker, and its next
 * query a watermark marker first. A partition that Kafka Streams has not polled, or is reading
 * behind, is never idle: it holds the windows back until it has caught up.
 */
final class Route implements Processor<byte[], byte[], byte[], byte[]> {
    private static final byte[] NO_KEY = new byte[0];

    private final long slideMs;
    private final long latenessMs;
    private final long idleMs;
    private final InputOffsets offsets;
    private ProcessorContext<byte[], byte[]> ctx;
    private long newest = Long.MIN_VALUE; // of this task's input partition; none yet
    private long lastRead = -1; // offset of the last record read; none yet
    private long lastReadAt; // when (wall clock)
    private long quietSince = -1; // since when (a reading's time) nothing was left to read; -1: there was
    private boolean idle; // the idle marker was sent and no query since

    Route(long slideMs, long latenessMs, long idleMs, InputOffsets offsets) {
        this.slideMs = slideMs;
        this.latenessMs = latenessMs;
        this.idleMs = idleMs;
        this.offsets = offsets;
    }

    @Override
    public void init(ProcessorContext<byte[], byte[]> context) {
        this.ctx = context;
        context.schedule(Duration.ofSeconds(1), PunctuationType.WALL_CLOCK_TIME, now -> checkIdle());
    }

    /**
     * Sends the idle marker once every reading of the input's offsets for the idle time found
     * this partition read to its end, with no record read in between.
     */
    private void checkIdle() {
        InputOffsets.Reading r = offsets.last();
        if (idle || r == null || r.at() <= lastReadAt) {
            return; // already sent, or no reading since the last record
        }
        int p = ctx.taskId().partition();
        if (!r.caughtUp(p, lastRead)) {
            quietSince = -1;
            return;
        }
        if (quietSince < 0) {
            quietSince = r.at();
        }
        if (r.at() - quietSince >= idleMs) {
            ctx.forward(new Record<>(NO_KEY, Loop.idle(p), ctx.currentSystemTimeMs()));
            idle = true;
        }
    }

    @Override
    public void process(Record<byte[], byte[]> rec) {
        RecordMetadata m = ctx.recordMetadata().orElseThrow();
        lastRead = m.offset();
        lastReadAt = ctx.currentSystemTimeMs();
        quietSince = -1;
        byte[] key = rec.key() == null ? NO_KEY : rec.key();
        SearchQueries.Valid q;
        try {
            q = SearchQueries.decode(key, rec.value(), rec.timestamp());
        } catch (InvalidException e) {
            DeadLetters.DeadLetter dl = DeadLetters.of(m.topic(), m.partition(), m.offset(), key, rec.value(), e.getMessage());
            byte[] v = dl.value() == null ? new byte[] {Loop.DEAD_NULL} : prefixed(Loop.DEAD, dl.value());
            ctx.forward(new Record<>(dl.key(), v, rec.timestamp(), dl.headers()));
            return;
        }
        if (idle || newest == Long.MIN_VALUE || q.tsMs() > newest && allows(q.tsMs()) != allows(newest)) {
            ctx.forward(new Record<>(NO_KEY, Loop.mark(m.partition(), Math.max(newest, q.tsMs())), rec.timestamp()));
            idle = false;
        }
        newest = Math.max(newest, q.tsMs());
        ctx.forward(new Record<>(q.term().getBytes(StandardCharsets.UTF_8), Loop.term(q.tsMs()), q.tsMs()));
    }

    private long allows(long ms) {
        return Math.floorDiv(ms - latenessMs, slideMs);
    }

    private static byte[] prefixed(byte kind, byte[] v) {
        byte[] out = new byte[v.length + 1];
        out[0] = kind;
        System.arraycopy(v, 0, out, 1, v.length);
        return out;
    }
}
