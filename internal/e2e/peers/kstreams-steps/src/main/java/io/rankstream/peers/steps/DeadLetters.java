package io.rankstream.peers.steps;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * The dead letter of a rejected record, as topics.NewDeadLetter builds it: the original key
 * and value (cut to their bounds, with the original size and SHA-256 in headers when cut) and
 * headers naming the source record and the reason.
 */
public final class DeadLetters {
    private DeadLetters() {}

    static final int MAX_VALUE_BYTES = 1 << 20;
    static final int MAX_KEY_BYTES = 1 << 10;
    static final int MAX_REASON_BYTES = 1 << 10;

    public record DeadLetter(byte[] key, byte[] value, Headers headers) {}

    public static DeadLetter of(String topic, int partition, long offset, byte[] key, byte[] value, String reason) {
        Headers h = new RecordHeaders();
        h.add("rankstream-source-topic", utf8(topic));
        h.add("rankstream-source-partition", utf8(Integer.toString(partition)));
        h.add("rankstream-source-offset", utf8(Long.toString(offset)));
        h.add("rankstream-reason", utf8(StepReports.shorten(reason, MAX_REASON_BYTES)));
        if (value != null && value.length > MAX_VALUE_BYTES) {
            h.add("rankstream-original-value-bytes", utf8(Integer.toString(value.length)));
            h.add("rankstream-original-value-sha256", utf8(sha256(value)));
            value = Arrays.copyOf(value, MAX_VALUE_BYTES);
        }
        if (key.length > MAX_KEY_BYTES) {
            h.add("rankstream-original-key-bytes", utf8(Integer.toString(key.length)));
            h.add("rankstream-original-key-sha256", utf8(sha256(key)));
            key = Arrays.copyOf(key, MAX_KEY_BYTES);
        }
        return new DeadLetter(key, value, h);
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String sha256(byte[] b) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("BUG: no SHA-256", e);
        }
    }
}
