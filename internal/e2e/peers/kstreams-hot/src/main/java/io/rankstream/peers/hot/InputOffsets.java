package io.rankstream.peers.hot;

import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;

/**
 * What the input partitions hold, read from the broker every second by a daemon thread (one
 * Admin client per process): each partition's log start and end offsets (read_committed) and
 * the application's committed offset. Route decides from it whether its partition has data it
 * has not read: an input partition is idle when it has had none for the idle time, not when
 * Kafka Streams has not polled it (the consumer gives no fairness across partitions: on a slow
 * machine it fed two of eight input partitions for a minute while the others had 49k records
 * each).
 */
final class InputOffsets {
    /** One reading: the wall-clock time it started and the offsets then. */
    record Reading(long at, Map<Integer, Long> start, Map<Integer, Long> end, Map<Integer, Long> committed) {
        /**
         * Whether the partition had no record at or after the position of a reader that read
         * up to lastRead (-1: nothing yet, it starts at the committed offset or the log start).
         */
        boolean caughtUp(int partition, long lastRead) {
            Long e = end.get(partition);
            if (e == null) {
                return false;
            }
            long position = lastRead >= 0 ? lastRead + 1 : committed.getOrDefault(partition, start.getOrDefault(partition, 0L));
            return position >= e;
        }
    }

    private final Admin admin;
    private final String topic;
    private final int partitions;
    private final String group;
    private volatile Reading last;

    InputOffsets(String brokers, String topic, int partitions, String group) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, brokers);
        this.admin = Admin.create(p);
        this.topic = topic;
        this.partitions = partitions;
        this.group = group;
        Thread t = new Thread(this::loop, "kstreams-hot-input-offsets");
        t.setDaemon(true);
        t.start();
    }

    /** The latest complete reading, null before the first. */
    Reading last() {
        return last;
    }

    private void loop() {
        while (true) {
            try {
                last = read();
                Thread.sleep(1000);
            } catch (InterruptedException e) {
                return;
            } catch (Exception e) {
                // Route sees no newer reading and decides nothing: a partition stays as it was.
                System.err.println("kstreams-hot: reading the input's offsets: " + e);
                try {
                    Thread.sleep(1000);
                } catch (InterruptedException ie) {
                    return;
                }
            }
        }
    }

    private Reading read() throws Exception {
        long at = System.currentTimeMillis();
        Map<TopicPartition, OffsetSpec> earliest = new HashMap<>();
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        for (int i = 0; i < partitions; i++) {
            earliest.put(new TopicPartition(topic, i), OffsetSpec.earliest());
            latest.put(new TopicPartition(topic, i), OffsetSpec.latest());
        }
        ListOffsetsOptions committedOnly = new ListOffsetsOptions(IsolationLevel.READ_COMMITTED);
        Map<TopicPartition, ListOffsetsResultInfo> s = admin.listOffsets(earliest, committedOnly).all().get(10, TimeUnit.SECONDS);
        Map<TopicPartition, ListOffsetsResultInfo> e = admin.listOffsets(latest, committedOnly).all().get(10, TimeUnit.SECONDS);
        Map<TopicPartition, OffsetAndMetadata> c = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(10, TimeUnit.SECONDS);
        Map<Integer, Long> start = new HashMap<>();
        Map<Integer, Long> end = new HashMap<>();
        Map<Integer, Long> committed = new HashMap<>();
        s.forEach((tp, info) -> start.put(tp.partition(), info.offset()));
        e.forEach((tp, info) -> end.put(tp.partition(), info.offset()));
        c.forEach((tp, om) -> {
            if (om != null && tp.topic().equals(topic)) {
                committed.put(tp.partition(), om.offset());
            }
        });
        return new Reading(at, start, end, committed);
    }
}
