package io.rankstream.peers.hot;

import io.rankstream.peers.steps.DeadLetters;
import io.rankstream.peers.steps.StepReports.InvalidException;
import java.nio.charset.StandardCharsets;
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
 * less the lateness, rounded down to the slide) moves.
 */
final class Route implements Processor<byte[], byte[], byte[], byte[]> {
    private static final byte[] NO_KEY = new byte[0];

    private final long slideMs;
    private final long latenessMs;
    private ProcessorContext<byte[], byte[]> ctx;
    private long newest = Long.MIN_VALUE; // of this task's input partition; none yet

    Route(long slideMs, long latenessMs) {
        this.slideMs = slideMs;
        this.latenessMs = latenessMs;
    }

    @Override
    public void init(ProcessorContext<byte[], byte[]> context) {
        this.ctx = context;
    }

    @Override
    public void process(Record<byte[], byte[]> rec) {
        RecordMetadata m = ctx.recordMetadata().orElseThrow();
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
        if (newest == Long.MIN_VALUE || q.tsMs() > newest && allows(q.tsMs()) != allows(newest)) {
            ctx.forward(new Record<>(NO_KEY, Loop.mark(m.partition(), Math.max(newest, q.tsMs())), rec.timestamp()));
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
