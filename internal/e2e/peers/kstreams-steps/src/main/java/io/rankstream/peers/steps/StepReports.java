package io.rankstream.peers.steps;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.DateTimeException;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Decoding and validation of one steps.reported record: a port of topics.DecodeStepReport
 * (topics/steps.go, topics/validate.go, topics/timestamp.go), with the same checks in the same
 * order and the same reasons where the reason does not quote a JSON decoder's own message.
 * Retention and future skew are decided against the record's Kafka timestamp, never the clock.
 */
final class StepReports {
    private StepReports() {}

    static final int MAX_VALUE_BYTES = 64 << 10;
    static final int MAX_ID_BYTES = 128;
    static final int MAX_REGION_BYTES = 64;
    static final int MAX_JSON_DEPTH = 32;

    /** topics.DefaultStepRules. */
    record Rules(long maxSteps, long retentionMs, long futureSkewMs) {
        static final Rules DEFAULT = new Rules(200_000, 7 * 24 * Days.HOUR_MS, 5 * 60_000L);
    }

    /** A valid report: what the merge and the sink need. */
    record Valid(String requestId, String userId, long steps, long tsMs, ZoneId zone, String region) {}

    /** A rejected record; its message is the dead letter's reason. */
    static final class InvalidException extends Exception {
        InvalidException(String reason) {
            super("invalid event: " + reason, null, false, false);
        }
    }

    private static InvalidException invalid(String format, Object... args) {
        return new InvalidException(String.format(format, args));
    }

    private static final JsonFactory JSON = new JsonFactory();

    static Valid decode(byte[] key, byte[] value, long recordTimeMs, Rules rules) throws InvalidException {
        checkValue(value);
        String k = checkKey(key);
        Wire w = parse(value);
        checkId("request_id", w.requestId);
        checkId("user_id", w.userId);
        if (!k.equals(w.userId)) {
            throw invalid("key %s does not match user_id %s", quote(k), quote(w.userId));
        }
        if (!w.deviceId.isEmpty()) {
            checkToken("device_id", w.deviceId, MAX_ID_BYTES);
        }
        if (!w.region.isEmpty()) {
            checkToken("region", w.region, MAX_REGION_BYTES);
        }
        long steps = count("steps", w.steps, rules.maxSteps());
        if (!w.hasTs) {
            throw invalid("ts: missing");
        }
        ZoneId zone = loadZone(w.tz);
        checkTime(w.tsMs, w.tsSubMs, recordTimeMs, rules.retentionMs(), rules.futureSkewMs());
        return new Valid(w.requestId, w.userId, steps, w.tsMs, zone, w.region);
    }

    // --- JSON ---------------------------------------------------------------------------------

    /** stepWire: steps stays raw, so that missing, null and misshapen are told apart from 0. */
    private static final class Wire {
        String requestId = "";
        String userId = "";
        String deviceId = "";
        String tz = "";
        String region = "";
        String steps = ""; // the raw JSON value ("" when missing)
        boolean hasTs;
        long tsMs; // floor of the instant in epoch milliseconds
        boolean tsSubMs; // the instant lies strictly after tsMs
    }

    /**
     * Like Go's json.Unmarshal into stepWire: an object (or null), keys matched case-insensitively,
     * the last duplicate wins, null leaves a string field as it was, unknown fields are skipped,
     * nothing may follow the value.
     */
    private static Wire parse(byte[] value) throws InvalidException {
        Wire w = new Wire();
        try (JsonParser p = JSON.createParser(value)) {
            JsonToken t = p.nextToken();
            if (t == JsonToken.START_OBJECT) {
                while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
                    String name = p.currentName();
                    t = p.nextToken();
                    if (name.equalsIgnoreCase("request_id")) {
                        w.requestId = string(p, t, name, w.requestId);
                    } else if (name.equalsIgnoreCase("user_id")) {
                        w.userId = string(p, t, name, w.userId);
                    } else if (name.equalsIgnoreCase("device_id")) {
                        w.deviceId = string(p, t, name, w.deviceId);
                    } else if (name.equalsIgnoreCase("tz")) {
                        w.tz = string(p, t, name, w.tz);
                    } else if (name.equalsIgnoreCase("region")) {
                        w.region = string(p, t, name, w.region);
                    } else if (name.equalsIgnoreCase("steps")) {
                        w.steps = raw(p, t);
                    } else if (name.equalsIgnoreCase("ts")) {
                        timestamp(p, t, w);
                    } else {
                        p.skipChildren();
                    }
                }
            } else if (t != JsonToken.VALUE_NULL) {
                throw invalid("json: cannot unmarshal %s into a step report", t);
            }
            if (p.nextToken() != null) {
                throw invalid("json: invalid character after top-level value");
            }
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw invalid("json: %s", e.getOriginalMessage());
        } catch (IOException e) {
            throw invalid("json: %s", e.getMessage());
        }
        return w;
    }

    private static String string(JsonParser p, JsonToken t, String field, String old) throws IOException, InvalidException {
        if (t == JsonToken.VALUE_STRING) {
            return p.getText();
        }
        if (t == JsonToken.VALUE_NULL) {
            return old;
        }
        p.skipChildren();
        throw invalid("json: cannot unmarshal %s into field %s of type string", t, field);
    }

    private static String raw(JsonParser p, JsonToken t) throws IOException {
        switch (t) {
            case VALUE_STRING:
                return "\"" + p.getText() + "\"";
            case START_OBJECT:
            case START_ARRAY:
                String open = t == JsonToken.START_OBJECT ? "{" : "[";
                p.skipChildren();
                return open + "…";
            default:
                return p.getText(); // numbers as written, true, false, null
        }
    }

    private static void timestamp(JsonParser p, JsonToken t, Wire w) throws IOException, InvalidException {
        switch (t) {
            case VALUE_NULL:
                w.hasTs = false;
                return;
            case VALUE_STRING:
                parseRfc3339(p.getText(), w);
                return;
            case VALUE_NUMBER_INT:
                try {
                    w.tsMs = Long.parseLong(p.getText());
                } catch (NumberFormatException e) {
                    throw invalid("json: timestamp %s is neither an RFC 3339 string nor integer epoch milliseconds", p.getText());
                }
                w.tsSubMs = false;
                w.hasTs = w.tsMs != ZERO_TIME_MS; // Go's zero time.Time counts as missing
                return;
            default:
                p.skipChildren();
                throw invalid("json: timestamp %s is neither an RFC 3339 string nor integer epoch milliseconds", t);
        }
    }

    /** Go's zero time.Time, 0001-01-01T00:00:00Z, in epoch milliseconds. */
    private static final long ZERO_TIME_MS = -62_135_596_800_000L;

    private static final Pattern RFC3339 = Pattern.compile(
        "(\\d{4})-(\\d{2})-(\\d{2})T(\\d{2}):(\\d{2}):(\\d{2})(?:\\.(\\d{1,9}))?(?:(Z)|([+-])(\\d{2}):(\\d{2}))");

    /** time.Parse(time.RFC3339Nano, s): a full date and time with an offset or Z. */
    private static void parseRfc3339(String s, Wire w) throws InvalidException {
        Matcher m = RFC3339.matcher(s);
        if (!m.matches()) {
            throw invalid("json: timestamp %s is not RFC 3339 with an offset", quote(s));
        }
        try {
            int offsetSecs = 0;
            if (m.group(8) == null) {
                int oh = Integer.parseInt(m.group(10));
                int om = Integer.parseInt(m.group(11));
                if (oh > 23 || om > 59) {
                    throw new DateTimeException("offset out of range");
                }
                offsetSecs = (oh * 3600 + om * 60) * (m.group(9).equals("-") ? -1 : 1);
            }
            LocalDateTime ldt = LocalDateTime.of(LocalDate.of(Integer.parseInt(m.group(1)),
                    Integer.parseInt(m.group(2)), Integer.parseInt(m.group(3))),
                java.time.LocalTime.of(Integer.parseInt(m.group(4)), Integer.parseInt(m.group(5)),
                    Integer.parseInt(m.group(6))));
            long secs = ldt.toEpochSecond(ZoneOffset.UTC) - offsetSecs;
            long nanos = 0;
            if (m.group(7) != null) {
                String f = (m.group(7) + "000000000").substring(0, 9);
                nanos = Long.parseLong(f);
            }
            w.tsMs = secs * 1000 + nanos / 1_000_000;
            w.tsSubMs = nanos % 1_000_000 != 0;
            w.hasTs = !(secs * 1000 == ZERO_TIME_MS && nanos == 0);
        } catch (DateTimeException e) {
            throw invalid("json: timestamp %s is not RFC 3339 with an offset: %s", quote(s), e.getMessage());
        }
    }

    // --- field checks -------------------------------------------------------------------------

    private static long count(String field, String raw, long max) throws InvalidException {
        raw = raw.strip();
        if (raw.isEmpty()) {
            throw invalid("%s: missing", field);
        }
        if (raw.equals("null")) {
            throw invalid("%s: null, want an integer", field);
        }
        char c = raw.charAt(0);
        if (c == '-') {
            throw invalid("%s: negative (%s)", field, shorten(raw, 32));
        }
        if (c < '0' || c > '9') {
            throw invalid("%s: %s, want an integer", field, shorten(raw, 32));
        }
        if (raw.indexOf('.') >= 0 || raw.indexOf('e') >= 0 || raw.indexOf('E') >= 0) {
            throw invalid("%s: %s is not an integer", field, shorten(raw, 32));
        }
        long n;
        try {
            n = Long.parseLong(raw);
        } catch (NumberFormatException e) {
            n = Long.MAX_VALUE;
        }
        if (n > max) {
            throw invalid("%s: %s is over the plausible maximum of %d", field, shorten(raw, 32), max);
        }
        return n;
    }

    private static void checkTime(long tsMs, boolean subMs, long recordMs, long maxAgeMs, long skewMs) throws InvalidException {
        if (tsMs < recordMs - maxAgeMs) {
            throw invalid("ts: %s is older than the retention of %s before the record time %s",
                formatTime(tsMs), goDuration(maxAgeMs), formatTime(recordMs));
        }
        if (tsMs > recordMs + skewMs || tsMs == recordMs + skewMs && subMs) {
            throw invalid("ts: %s is more than %s after the record time %s",
                formatTime(tsMs), goDuration(skewMs), formatTime(recordMs));
        }
    }

    private static String formatTime(long ms) {
        java.time.Instant t = java.time.Instant.ofEpochMilli(Math.floorDiv(ms, 1000) * 1000);
        int y = t.atOffset(ZoneOffset.UTC).getYear();
        if (y < 0 || y > 9999) {
            return ms + " ms";
        }
        return java.time.format.DateTimeFormatter.ISO_INSTANT.format(t);
    }

    /** Go's time.Duration.String for whole hours and minutes, as in the default rules. */
    private static String goDuration(long ms) {
        long h = ms / Days.HOUR_MS;
        long m = ms % Days.HOUR_MS / 60_000;
        long s = ms % 60_000 / 1000;
        return (h > 0 ? h + "h" : "") + (h > 0 || m > 0 ? m + "m" : "") + s + "s";
    }

    private static void checkId(String field, String id) throws InvalidException {
        if (id.isEmpty()) {
            throw invalid("%s: missing", field);
        }
        checkToken(field, id, MAX_ID_BYTES);
    }

    /**
     * checkToken: at most max bytes of UTF-8 without white space, control or format characters,
     * U+FFFD (or a lone surrogate, which Go's decoder turns into U+FFFD) or ':'.
     */
    private static void checkToken(String field, String s, int max) throws InvalidException {
        int bytes = utf8Length(s);
        if (bytes > max) {
            throw invalid("%s: %d bytes, longer than %d", field, bytes, max);
        }
        for (int i = 0; i < s.length(); ) {
            int c = s.codePointAt(i);
            if (c < 0x80) {
                if (c == ':' || c <= ' ' || c == 0x7f) {
                    throw invalid("%s: contains %s", field, goRune(c));
                }
            } else {
                int type = Character.getType(c);
                if (Character.isSpaceChar(c) || type == Character.CONTROL || type == Character.FORMAT
                        || type == Character.SURROGATE || c == 0xFFFD) {
                    throw invalid("%s: contains %s", field, goRune(type == Character.SURROGATE ? 0xFFFD : c));
                }
            }
            i += Character.charCount(c);
        }
    }

    private static String goRune(int c) {
        return String.format("U+%04X", c);
    }

    private static int utf8Length(String s) {
        int n = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                n++;
            } else if (c < 0x800) {
                n += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                n += 4;
                i++;
            } else {
                n += 3;
            }
        }
        return n;
    }

    private static String checkKey(byte[] key) throws InvalidException {
        if (key.length > MAX_ID_BYTES) {
            throw invalid("key: %d bytes, longer than %d", key.length, MAX_ID_BYTES);
        }
        if (!validUtf8(key)) {
            throw invalid("key: not valid UTF-8");
        }
        return new String(key, StandardCharsets.UTF_8);
    }

    private static void checkValue(byte[] value) throws InvalidException {
        if (value == null) {
            throw invalid("value: null (a tombstone)");
        }
        if (value.length > MAX_VALUE_BYTES) {
            throw invalid("value: %d bytes, over the limit of %d", value.length, MAX_VALUE_BYTES);
        }
        if (!validUtf8(value)) {
            throw invalid("value: not valid UTF-8");
        }
        if (!shallow(value, MAX_JSON_DEPTH)) {
            throw invalid("value: JSON nested deeper than %d", MAX_JSON_DEPTH);
        }
    }

    /** Go's utf8.Valid: no overlong forms, no surrogates, nothing above U+10FFFF. */
    static boolean validUtf8(byte[] b) {
        int i = 0;
        int n = b.length;
        while (i < n) {
            int c = b[i] & 0xff;
            if (c < 0x80) {
                i++;
                continue;
            }
            int need;
            int lo = 0x80;
            int hi = 0xBF;
            if (c >= 0xC2 && c <= 0xDF) {
                need = 1;
            } else if (c >= 0xE0 && c <= 0xEF) {
                need = 2;
                if (c == 0xE0) {
                    lo = 0xA0;
                } else if (c == 0xED) {
                    hi = 0x9F;
                }
            } else if (c >= 0xF0 && c <= 0xF4) {
                need = 3;
                if (c == 0xF0) {
                    lo = 0x90;
                } else if (c == 0xF4) {
                    hi = 0x8F;
                }
            } else {
                return false;
            }
            if (i + need >= n) {
                return false;
            }
            int c1 = b[i + 1] & 0xff;
            if (c1 < lo || c1 > hi) {
                return false;
            }
            for (int k = 2; k <= need; k++) {
                int ck = b[i + k] & 0xff;
                if (ck < 0x80 || ck > 0xBF) {
                    return false;
                }
            }
            i += need + 1;
        }
        return true;
    }

    /** shallow: arrays and objects nest at most max deep (strings skipped). */
    private static boolean shallow(byte[] b, int max) {
        int depth = 0;
        boolean inString = false;
        boolean escaped = false;
        for (byte x : b) {
            char c = (char) (x & 0xff);
            if (inString) {
                if (escaped) {
                    escaped = false;
                } else if (c == '\\') {
                    escaped = true;
                } else if (c == '"') {
                    inString = false;
                }
            } else if (c == '"') {
                inString = true;
            } else if (c == '[' || c == '{') {
                if (++depth > max) {
                    return false;
                }
            } else if (c == ']' || c == '}') {
                depth--;
            }
        }
        return true;
    }

    private static final ConcurrentHashMap<String, ZoneId> ZONES = new ConcurrentHashMap<>();
    private static final Set<String> IANA = ZoneId.getAvailableZoneIds();

    /**
     * LoadZone: an IANA zone name. "" and "Local" are refused (a user's day must not depend on
     * the machine), and so are Java's offset forms ("+01:00", "UTC+1"), which Go does not know.
     */
    private static ZoneId loadZone(String name) throws InvalidException {
        ZoneId z = ZONES.get(name);
        if (z != null) {
            return z;
        }
        if (name.isEmpty()) {
            throw invalid("tz: missing");
        }
        if (name.equals("Local") || name.length() > 64 || !IANA.contains(name)) {
            throw invalid("tz: unknown zone %s", quote(name));
        }
        z = ZoneId.of(name);
        ZONES.put(name, z);
        return z;
    }

    static String quote(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    /** shorten: at most max bytes of valid UTF-8, marking the cut. */
    static String shorten(String s, int max) {
        byte[] u = s.getBytes(StandardCharsets.UTF_8);
        if (u.length <= max) {
            return s;
        }
        String mark = "… (cut)";
        int keep = max - mark.getBytes(StandardCharsets.UTF_8).length;
        while (keep > 0 && (u[keep] & 0xC0) == 0x80) {
            keep--; // do not cut inside a character
        }
        return new String(u, 0, keep, StandardCharsets.UTF_8) + mark;
    }
}
