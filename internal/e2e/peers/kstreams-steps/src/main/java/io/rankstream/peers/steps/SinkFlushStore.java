package io.rankstream.peers.steps;

import java.util.Map;
import java.util.function.Supplier;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.internals.CacheFlushListener;
import org.apache.kafka.streams.state.internals.CachedStateStore;

/**
 * A store that holds nothing and flushes the stream thread's Redis sink whenever Kafka Streams
 * is about to commit the task's offsets.
 *
 * <p>Why: the punctuator flushes Redis every 500 ms and only then requests a commit, and the
 * periodic commit is switched off (commit.interval.ms of a day), so in steady state every
 * commit follows a flush. But Kafka Streams also commits on its own: when partitions are
 * revoked in a rebalance and when the application shuts down, in both cases before it closes
 * the processors, so a flush in Processor#close would come after offsets that cover unwritten
 * records. Before every commit, whatever triggers it, StreamTask#prepareCommit flushes the
 * caches of the task's stores (ProcessorStateManager#flushCache); a store that declares itself
 * a CachedStateStore is called there, on the stream thread, before the offsets are committed.
 * That interface is internal to Kafka Streams (stable since 2.x, checked against 4.4.0): it is
 * the only hook that runs before every commit. If the flush fails, the commit fails with it.
 */
final class SinkFlushStore implements StateStore, CachedStateStore<Object, Object> {
    static final String NAME = "redis-sink-flush";

    private final Supplier<RedisSink> sink;
    private boolean open;

    SinkFlushStore(Supplier<RedisSink> sink) {
        this.sink = sink;
    }

    @Override
    public void flushCache() {
        sink.get().flush();
    }

    @Override
    public void clearCache() {}

    @Override
    public boolean setFlushListener(CacheFlushListener<Object, Object> listener, boolean sendOldValues) {
        return false;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public void init(StateStoreContext context, StateStore root) {
        context.register(root, (key, value) -> { });
        open = true;
    }

    @Override
    public void close() {
        open = false;
    }

    @Override
    public boolean persistent() {
        return false;
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    /** Builds one store per task; it keeps no changelog and no cache of its own. */
    static StoreBuilder<SinkFlushStore> builder(Supplier<RedisSink> sink) {
        return new StoreBuilder<>() {
            @Override
            public StoreBuilder<SinkFlushStore> withCachingEnabled() {
                return this;
            }

            @Override
            public StoreBuilder<SinkFlushStore> withCachingDisabled() {
                return this;
            }

            @Override
            public StoreBuilder<SinkFlushStore> withLoggingEnabled(Map<String, String> config) {
                return this;
            }

            @Override
            public StoreBuilder<SinkFlushStore> withLoggingDisabled() {
                return this;
            }

            @Override
            public SinkFlushStore build() {
                return new SinkFlushStore(sink);
            }

            @Override
            public Map<String, String> logConfig() {
                return Map.of();
            }

            @Override
            public boolean loggingEnabled() {
                return false;
            }

            @Override
            public String name() {
                return NAME;
            }
        };
    }
}
