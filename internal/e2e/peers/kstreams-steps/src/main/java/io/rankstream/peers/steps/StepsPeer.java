package io.rankstream.peers.steps;

import java.net.URI;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.BytesDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.state.Stores;

/**
 * The Kafka Streams peer of `rankstream process`'s steps job. Usage:
 *
 * <pre>
 * java [-Xmx..] -jar kstreams-steps.jar --brokers HOST:PORT --redis redis://HOST:PORT/DB
 *     --input TOPIC --dlq TOPIC --application-id ID --state-dir DIR
 *     [--threads N] [--flush-ms 500] [--max-batch 20000] [--caching true] [--redis-timeout-ms 30000]
 * </pre>
 *
 * It prints "running" once Kafka Streams reached RUNNING, and stops cleanly on SIGTERM.
 */
public final class StepsPeer {
    private StepsPeer() {}

    public static void main(String[] argv) throws InterruptedException {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel",
            System.getProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn"));
        // Jedis warns on every connection that it speaks RESP2, which is what we want.
        System.setProperty("org.slf4j.simpleLogger.log.redis.clients.jedis.Jedis", "error");
        Map<String, String> a = parse(argv);
        String brokers = need(a, "brokers");
        URI redis = URI.create(need(a, "redis"));
        String input = need(a, "input");
        String dlq = need(a, "dlq");
        long flushMs = Long.parseLong(a.getOrDefault("flush-ms", "500"));
        int maxBatch = Integer.parseInt(a.getOrDefault("max-batch", "20000"));
        int threads = Integer.parseInt(a.getOrDefault("threads", Integer.toString(Runtime.getRuntime().availableProcessors())));
        boolean caching = Boolean.parseBoolean(a.getOrDefault("caching", "true"));
        int redisTimeoutMs = Integer.parseInt(a.getOrDefault("redis-timeout-ms", "30000"));
        StepReports.Rules rules = StepReports.Rules.DEFAULT;

        // One Redis sink (connection and coalescing buffer) per stream thread: every task of a
        // thread runs on it, so no locking, and a commit of the thread follows one flush.
        List<RedisSink> all = new CopyOnWriteArrayList<>();
        ThreadLocal<RedisSink> perThread = ThreadLocal.withInitial(() -> {
            RedisSink s = new RedisSink(redis, redisTimeoutMs, rules.retentionMs(), 60_000);
            all.add(s);
            return s;
        });
        Supplier<RedisSink> sinks = perThread::get;

        Topology t = new Topology();
        t.addSource("steps.reported", new BytesDeserializer(), new ByteArrayDeserializer(), input);
        t.addProcessor("steps", () -> new StepsProcessor(rules, sinks, flushMs, maxBatch), "steps.reported");
        var state = Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(StepsProcessor.STATE_STORE),
            Serdes.Bytes(), Serdes.ByteArray());
        t.addStateStore(caching ? state.withCachingEnabled() : state.withCachingDisabled(), "steps");
        t.addStateStore(SinkFlushStore.builder(sinks), "steps");
        t.addSink(StepsProcessor.DLQ_SINK, dlq, new ByteArraySerializer(), new ByteArraySerializer(), "steps");

        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, need(a, "application-id"));
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, brokers);
        p.put(StreamsConfig.STATE_DIR_CONFIG, need(a, "state-dir"));
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, threads);
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
        // Commits follow the punctuator's Redis flush (context.commit()); the periodic commit
        // is pushed out of the way, see SinkFlushStore for the commits Streams makes itself.
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 24 * 3_600_000L);
        p.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "classic");
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        // A dead letter may carry a value of up to 1 MiB plus headers (topics.MaxProduceBytes).
        p.put(StreamsConfig.producerPrefix(ProducerConfig.MAX_REQUEST_SIZE_CONFIG), (2 << 20) - (2 << 20) / 128);
        p.put(StreamsConfig.producerPrefix(ProducerConfig.COMPRESSION_TYPE_CONFIG), "lz4");

        KafkaStreams streams = new KafkaStreams(t, p);
        CountDownLatch stopped = new CountDownLatch(1);
        int[] exit = {0};
        streams.setUncaughtExceptionHandler(e -> {
            System.err.println("kstreams-steps: stream thread failed: " + e);
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
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            streams.close(Duration.ofSeconds(30));
            all.forEach(RedisSink::close);
        }));
        streams.start();
        stopped.await();
        streams.close(Duration.ofSeconds(30));
        all.forEach(RedisSink::close);
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
        System.err.println("kstreams-steps: " + why);
        System.err.println("usage: java -jar kstreams-steps.jar --brokers HOST:PORT --redis redis://HOST:PORT/DB"
            + " --input TOPIC --dlq TOPIC --application-id ID --state-dir DIR"
            + " [--threads N] [--flush-ms 500] [--max-batch 20000] [--caching true] [--redis-timeout-ms 30000]");
        System.exit(2);
    }
}
