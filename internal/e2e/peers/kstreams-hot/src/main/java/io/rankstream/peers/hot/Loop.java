package io.rankstream.peers.hot;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.streams.processor.StreamPartitioner;

/**
 * The records between the peer's sub-topologies. Stage 1 (Route) writes to the terms
 * repartition topic a term (key: the term, value: TERM and its event time), a watermark
 * marker (empty key, value: MARK, the input partition and its newest event time, sent to every
 * partition) or an idle marker (empty key, value: IDLE and the input partition, sent to every
 * partition), or, to the dead-letter branch, DEAD or DEAD_NULL and the original value. Stage 2
 * (Count) writes a partition's partial Top-K to the partials repartition topic, keyed by the
 * window end.
 */
final class Loop {
    private Loop() {}

    static final byte TERM = 0;
    static final byte MARK = 1;
    static final byte DEAD = 2;
    static final byte DEAD_NULL = 3;
    static final byte IDLE = 4;

    static byte[] term(long ms) {
        return ByteBuffer.allocate(9).put(TERM).putLong(ms).array();
    }

    static byte[] mark(int inputPartition, long ms) {
        return ByteBuffer.allocate(13).put(MARK).putInt(inputPartition).putLong(ms).array();
    }

    static byte[] idle(int inputPartition) {
        return ByteBuffer.allocate(5).put(IDLE).putInt(inputPartition).array();
    }

    /** Terms by their key's murmur2 hash (Kafka's default), markers to every partition. */
    static final StreamPartitioner<byte[], byte[]> PARTITIONER = new StreamPartitioner<>() {
        @Override
        public Optional<Set<Integer>> partitions(String topic, byte[] key, byte[] value, int n) {
            if (value[0] == MARK || value[0] == IDLE) {
                return Optional.of(IntStream.range(0, n).boxed().collect(Collectors.toSet()));
            }
            return Optional.of(Set.of(Utils.toPositive(Utils.murmur2(key)) % n));
        }
    };

    /** One counted term of a partial or a snapshot. */
    record Item(String term, long count) {}

    /**
     * Count descending, then term ascending in code point order, which is the byte order of
     * UTF-8 (Go's string order; Java's String order is that of UTF-16).
     */
    static final Comparator<Item> RANK = (a, b) -> {
        int c = Long.compare(b.count, a.count);
        return c != 0 ? c : compareCodePoints(a.term, b.term);
    };

    static int compareCodePoints(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int x = a.codePointAt(i);
            int y = b.codePointAt(j);
            if (x != y) {
                return Integer.compare(x, y);
            }
            i += Character.charCount(x);
            j += Character.charCount(y);
        }
        return Boolean.compare(i < a.length(), j < b.length());
    }

    /** A partition's partial Top-K of one window. */
    record Partial(int partition, long windowEnd, long dropped, List<Item> items) {
        byte[] encode() {
            int size = 4 + 8 + 8 + 4;
            List<byte[]> terms = new ArrayList<>(items.size());
            for (Item it : items) {
                byte[] t = it.term.getBytes(StandardCharsets.UTF_8);
                terms.add(t);
                size += 8 + 4 + t.length;
            }
            ByteBuffer b = ByteBuffer.allocate(size).putInt(partition).putLong(windowEnd).putLong(dropped).putInt(items.size());
            for (int i = 0; i < items.size(); i++) {
                b.putLong(items.get(i).count).putInt(terms.get(i).length).put(terms.get(i));
            }
            return b.array();
        }

        static Partial decode(byte[] v) {
            ByteBuffer b = ByteBuffer.wrap(v);
            int partition = b.getInt();
            long end = b.getLong();
            long dropped = b.getLong();
            int n = b.getInt();
            List<Item> items = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                long count = b.getLong();
                byte[] t = new byte[b.getInt()];
                b.get(t);
                items.add(new Item(new String(t, StandardCharsets.UTF_8), count));
            }
            return new Partial(partition, end, dropped, items);
        }
    }
}
