package io.rankstream.peers.hot;

import java.net.URI;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Branched;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Repartitioned;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.state.Stores;

/**
 * The Kafka Streams peer of `rankstream process`'s hot-search job (groups hot and hot-merge):
 * a window of --window-ms sliding every --slide-ms, its Top-K published to Redis. Usage:
 *
 * <pre>
 * java [-Xmx..] -jar kstreams-hot.jar --brokers HOST:PORT --redis redis://HOST:PORT/DB
 *     --input TOPIC --dlq TOPIC --input-partitions N --application-id ID --state-dir DIR
 *     [--threads N] [--k 100] [--window-ms 3600000] [--slide-ms 5000] [--lateness-ms 2000]
 *     [--lookahead-ms 600000] [--idle-ms 30000] [--guarantee exactly_once_v2]
 *     [--history-key kstreams:hot:search:windows] [--redis-timeout-ms 30000]
 * </pre>
 *
 * Three sub-topologies: Route (validate, normalise, key by term, watermark and idle markers; dead
 * letters), Count (per-term tumbling buckets in a windowed RocksDB store, a running window per
 * partition, its Top-K when the watermark closes a window), Merge (all partitions' Top-Ks of a
 * window into its snapshot, to Redis). See ../README.md for why. It prints "running" once Kafka
 * Streams reached RUNNING, and stops cleanly on SIGTERM.
 */
public final class HotPeer {
    private HotPeer() {}

    public static void main(String[] argv) throws InterruptedException {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel",
            System.getProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn"));
        System.setProperty("org.slf4j.simpleLogger.log.redis.clients.jedis.Jedis", "error");
        Map<String, String> a = parse(argv);
        String input = need(a, "input");
        String dlq = need(a, "dlq");
        int inputPartitions = Integer.parseInt(need(a, "input-partitions"));
        int threads = Integer.parseInt(a.getOrDefault("threads", Integer.toString(Runtime.getRuntime().availableProcessors())));
        long windowMs = Long.parseLong(a.getOrDefault("window-ms", "3600000"));
        long slideMs = Long.parseLong(a.getOrDefault("slide-ms", "5000"));
        long latenessMs = Long.parseLong(a.getOrDefault("lateness-ms", "2000"));
        long lookaheadMs = Long.parseLong(a.getOrDefault("lookahead-ms", "600000"));
        int k = Integer.parseInt(a.getOrDefault("k", "100"));
        Count.Config cfg = new Count.Config(inputPartitions, k, windowMs, slideMs, latenessMs, lookaheadMs);
        long idleMs = Long.parseLong(a.getOrDefault("idle-ms", "30000"));
        URI redis = URI.create(need(a, "redis"));
        int redisTimeoutMs = Integer.parseInt(a.getOrDefault("redis-timeout-ms", "30000"));
        String historyKey = a.getOrDefault("history-key", "kstreams:hot:search:windows");

        String app = need(a, "application-id");
        String brokers = need(a, "brokers");
        InputOffsets offsets = new InputOffsets(brokers, input, inputPartitions, app);

        StreamsBuilder b = new StreamsBuilder();
        // The buckets: slide-long tumbling windows per term, kept for the window, the lookahead
        // (terms dated ahead of the watermark) and a slide of margin.
        b.addStateStore(Stores.windowStoreBuilder(
            Stores.persistentWindowStore(Count.BUCKETS, Duration.ofMillis(windowMs + lookaheadMs + 2 * slideMs),
                Duration.ofMillis(slideMs), false),
            Serdes.String(), Serdes.Long()));
        b.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(Count.META), Serdes.String(), Serdes.Long()));
        b.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(Merge.PENDING), Serdes.String(), Serdes.ByteArray()));

        KStream<byte[], byte[]> routed = b.stream(input, Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()).withName("search.queries"))
            .process(() -> new Route(slideMs, latenessMs, idleMs, offsets), Named.as("route"));
        routed.split(Named.as("routed-"))
            .branch((key, v) -> v[0] == Loop.DEAD || v[0] == Loop.DEAD_NULL, Branched.<byte[], byte[]>withConsumer(dead -> dead
                .mapValues(v -> v[0] == Loop.DEAD_NULL ? null : Arrays.copyOfRange(v, 1, v.length), Named.as("dead-letter"))
                .to(dlq, Produced.with(Serdes.ByteArray(), Serdes.ByteArray()))).withName("dead"))
            .defaultBranch(Branched.<byte[], byte[]>withConsumer(terms -> terms
                .repartition(Repartitioned.with(Serdes.ByteArray(), Serdes.ByteArray()).withName("terms")
                    .withNumberOfPartitions(inputPartitions).withStreamPartitioner(Loop.PARTITIONER))
                .process(() -> new Count(cfg), Named.as("count"), Count.BUCKETS, Count.META)
                // One partition: a window's partials meet in one task, and windows are published
                // in the order of their ends (the merge is a few hundred items every slide).
                .repartition(Repartitioned.with(Serdes.ByteArray(), Serdes.ByteArray()).withName("partials")
                    .withNumberOfPartitions(1))
                .process(() -> new Merge(inputPartitions, k, windowMs, redis, redisTimeoutMs, "hot:search:latest", historyKey),
                    Named.as("merge"), Merge.PENDING)).withName("terms"));

        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, app);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, brokers);
        p.put(StreamsConfig.STATE_DIR_CONFIG, need(a, "state-dir"));
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, threads);
        // Exact counts across crashes: a replayed query must not be counted twice.
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, a.getOrDefault("guarantee", StreamsConfig.EXACTLY_ONCE_V2));
        p.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "classic");
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        p.put(StreamsConfig.producerPrefix(ProducerConfig.MAX_REQUEST_SIZE_CONFIG), (2 << 20) - (2 << 20) / 128);
        p.put(StreamsConfig.producerPrefix(ProducerConfig.COMPRESSION_TYPE_CONFIG), "lz4");

        KafkaStreams streams = new KafkaStreams(b.build(), p);
        CountDownLatch stopped = new CountDownLatch(1);
        int[] exit = {0};
        streams.setUncaughtExceptionHandler(e -> {
            System.err.println("kstreams-hot: stream thread failed: " + e);
            e.printStackTrace();
            exit[0] = 1;
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        streams.setStateListener((now, before) -> {
            if (now == KafkaStreams.State.RUNNING && before == KafkaStreams.State.REBALANCING) {
                System.out.println("running");
                System.out.flush();
            }
            if (now == KafkaStreams.State.NOT_RUNNING || now == KafkaStreams.State.ERROR) {
                stopped.countDown();
            }
        });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> streams.close(Duration.ofSeconds(30))));
        streams.start();
        stopped.await();
        streams.close(Duration.ofSeconds(30));
        System.exit(exit[0]);
    }

    private static Map<String, String> parse(String[] argv) {
        Map<String, String> a = new HashMap<>();
        for (int i = 0; i < argv.length; i++) {
            if (!argv[i].startsWith("--") || i + 1 >= argv.length) {
                usage("bad argument " + argv[i]);
            }
            a.put(argv[i].substring(2), argv[++i]);
        }
        return a;
    }

    private static String need(Map<String, String> a, String name) {
        String v = a.get(name);
        if (v == null || v.isEmpty()) {
            usage("--" + name + " is required");
        }
        return v;
    }

    private static void usage(String why) {
        System.err.println("kstreams-hot: " + why);
        System.err.println("usage: java -jar kstreams-hot.jar --brokers HOST:PORT --redis redis://HOST:PORT/DB"
            + " --input TOPIC --dlq TOPIC --input-partitions N --application-id ID --state-dir DIR [--threads N] [--k 100]"
            + " [--window-ms 3600000] [--slide-ms 5000] [--lateness-ms 2000] [--lookahead-ms 600000] [--idle-ms 30000]"
            + " [--guarantee exactly_once_v2] [--history-key kstreams:hot:search:windows] [--redis-timeout-ms 30000]");
        System.exit(2);
    }
}
