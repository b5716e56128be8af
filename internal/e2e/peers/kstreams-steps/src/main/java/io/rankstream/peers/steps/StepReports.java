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
 * The checks every input shares (value, key, ids, times, Go's JSON semantics) are public: the
 * hot-search peer (../kstreams-hot, compiled with these sources) decodes its queries with them.
 */
public final class StepReports {
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
    public static final class InvalidException extends Exception {
        InvalidException(String reason) {
            super("invalid event: " + reason, null, false, false);
        }
    }

    public static InvalidException invalid(String format, Object... args) {
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
        if (!w.ts.has) {
            throw invalid("ts: missing");
        }
        ZoneId zone = loadZone(w.tz);
        checkTime(w.ts.ms, w.ts.subMs, recordTimeMs, rules.retentionMs(), rules.futureSkewMs());
        return new Valid(w.requestId, w.userId, steps, w.ts.ms, zone, w.region);
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
        final Ts ts = new Ts();
    }

    /** A topics.Timestamp as decoded. */
    public static final class Ts {
        public boolean has;
        public long ms; // floor of the instant in epoch milliseconds
        public boolean subMs; // the instant lies strictly after ms
    }

    /** One field of a JSON object, for parseObject: false when the field is not one of the wire's. */
    public interface Fields {
        boolean field(String name, JsonParser p, JsonToken t, byte[] value) throws IOException, InvalidException;
    }

    /** Like Go's json.Unmarshal into stepWire (parseObject). */
    private static Wire parse(byte[] value) throws InvalidException {
        Wire w = new Wire();
        parseObject(value, "a step report", (name, p, t, v) -> {
            if (is(name, "request_id")) {
                w.requestId = string(p, t, name, w.requestId);
            } else if (is(name, "user_id")) {
                w.userId = string(p, t, name, w.userId);
            } else if (is(name, "device_id")) {
                w.deviceId = string(p, t, name, w.deviceId);
            } else if (is(name, "tz")) {
                w.tz = string(p, t, name, w.tz);
            } else if (is(name, "region")) {
                w.region = string(p, t, name, w.region);
            } else if (is(name, "steps")) {
                w.steps = raw(p, t, v);
            } else if (is(name, "ts")) {
                timestamp(p, t, w.ts);
            } else {
                return false;
            }
            return true;
        });
        return w;
    }

    /**
     * Like Go's json.Unmarshal into a struct (what names it): an object (or null), keys matched
     * case-insensitively (is), the last duplicate wins, null leaves a string field as it was,
     * unknown fields (those fields answers false for) are skipped, nothing may follow the value.
     * fields gets the value with lone surrogate escapes replaced (replaceLoneSurrogates).
     */
    public static void parseObject(byte[] value, String what, Fields fields) throws InvalidException {
        if (value.length >= 3 && (value[0] & 0xff) == 0xEF && (value[1] & 0xff) == 0xBB && (value[2] & 0xff) == 0xBF) {
            throw invalid("json: a byte order mark before the value"); // Jackson would skip it
        }
        byte[] v = replaceLoneSurrogates(value);
        try (JsonParser p = JSON.createParser(v)) {
            JsonToken t = p.nextToken();
            if (t == JsonToken.START_OBJECT) {
                while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
                    String name = p.currentName();
                    t = p.nextToken();
                    if (!fields.field(name, p, t, v)) {
                        p.skipChildren();
                    }
                }
            } else if (t != JsonToken.VALUE_NULL) {
                throw invalid("json: cannot unmarshal %s into %s", t, what);
            }
            if (p.nextToken() != null) {
                throw invalid("json: invalid character after top-level value");
            }
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw invalid("json: %s", e.getOriginalMessage());
        } catch (IOException e) {
            throw invalid("json: %s", e.getMessage());
        }
    }

    /**
     * Whether a JSON key names a field (all lower-case ASCII) as segmentio/encoding/json, our
     * decoder, decides: the exact name, or else the key folded. An ASCII key folds to lower
     * case; any other key folds rune by rune with unicode.SimpleFold (then A-Z to a-z), which
     * turns U+017F (long s) into s and U+212A (Kelvin sign) into k, but also s into U+017F and
     * k into U+212A, so that such a key never matches with a plain s or k in it.
     */
    public static boolean is(String name, String field) {
        boolean ascii = true;
        for (int i = 0; i < name.length() && ascii; i++) {
            ascii = name.charAt(i) < 0x80;
        }
        int j = 0;
        for (int i = 0; i < name.length(); ) {
            int c = name.codePointAt(i);
            i += Character.charCount(c);
            if (c >= 'A' && c <= 'Z') {
                c += 'a' - 'A';
            } else if (!ascii) {
                c = switch (c) {
                    case 0x17F -> 's';
                    case 0x212A -> 'k';
                    case 's' -> 0x17F;
                    case 'k' -> 0x212A;
                    default -> c;
                };
            }
            if (j >= field.length() || c != field.charAt(j++)) {
                return false;
            }
        }
        return j == field.length();
    }

    public static String string(JsonParser p, JsonToken t, String field, String old) throws IOException, InvalidException {
        if (t == JsonToken.VALUE_STRING) {
            return p.getText();
        }
        if (t == JsonToken.VALUE_NULL) {
            return old;
        }
        p.skipChildren();
        throw invalid("json: cannot unmarshal %s into field %s of type string", t, field);
    }

    /** The value as written (Go's json.RawMessage), from the token's first byte to its last. */
    private static String raw(JsonParser p, JsonToken t, byte[] value) throws IOException {
        if (t == JsonToken.VALUE_NUMBER_INT || t == JsonToken.VALUE_NUMBER_FLOAT) {
            return p.getText();
        }
        int from = (int) p.currentTokenLocation().getByteOffset();
        if (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY) {
            p.skipChildren();
        } else {
            p.finishToken();
        }
        int to = (int) p.currentLocation().getByteOffset();
        return new String(value, from, to - from, StandardCharsets.UTF_8);
    }

    /**
     * Go's decoder reads an escaped lone surrogate (backslash u dc00) as U+FFFD, anywhere; Jackson keeps
     * it in a value and refuses it in a key. Rewritten as the escape of U+FFFD before Jackson reads the text,
     * it means what it means to Go everywhere.
     */
    static byte[] replaceLoneSurrogates(byte[] v) {
        byte[] out = null;
        boolean inString = false;
        for (int i = 0; i < v.length; i++) {
            byte c = v[i];
            if (!inString) {
                inString = c == '"';
                continue;
            }
            if (c == '"') {
                inString = false;
            } else if (c == '\\' && i + 1 < v.length) {
                int u = i + 1 < v.length && v[i + 1] == 'u' ? hex4(v, i + 2) : -1;
                if (u >= 0xD800 && u <= 0xDBFF && i + 11 < v.length && v[i + 6] == '\\' && v[i + 7] == 'u'
                        && hex4(v, i + 8) >= 0xDC00 && hex4(v, i + 8) <= 0xDFFF) {
                    i += 11; // a valid pair
                } else if (u >= 0xD800 && u <= 0xDFFF) {
                    if (out == null) {
                        out = v.clone();
                    }
                    out[i + 2] = 'f';
                    out[i + 3] = 'f';
                    out[i + 4] = 'f';
                    out[i + 5] = 'd';
                    i += 5;
                } else {
                    i++; // the escaped character
                }
            }
        }
        return out == null ? v : out;
    }

    private static int hex4(byte[] v, int at) {
        if (at + 4 > v.length) {
            return -1;
        }
        int x = 0;
        for (int k = at; k < at + 4; k++) {
            int d = Character.digit(v[k], 16);
            if (d < 0) {
                return -1;
            }
            x = x << 4 | d;
        }
        return x;
    }

    public static void timestamp(JsonParser p, JsonToken t, Ts w) throws IOException, InvalidException {
        switch (t) {
            case VALUE_NULL:
                w.has = false;
                return;
            case VALUE_STRING:
                parseRfc3339(p.getText(), w);
                return;
            case VALUE_NUMBER_INT:
                try {
                    w.ms = Long.parseLong(p.getText());
                } catch (NumberFormatException e) {
                    throw invalid("json: timestamp %s is neither an RFC 3339 string nor integer epoch milliseconds", p.getText());
                }
                w.subMs = false;
                w.has = w.ms != ZERO_TIME_MS; // Go's zero time.Time counts as missing
                return;
            default:
                p.skipChildren();
                throw invalid("json: timestamp %s is neither an RFC 3339 string nor integer epoch milliseconds", t);
        }
    }

    /** Go's zero time.Time, 0001-01-01T00:00:00Z, in epoch milliseconds. */
    private static final long ZERO_TIME_MS = -62_135_596_800_000L;

    private static final Pattern RFC3339 = Pattern.compile(
        "(\\d{4})-(\\d{2})-(\\d{2})T(\\d{1,2}):(\\d{2}):(\\d{2})(?:[.,](\\d+))?(?:(Z)|([+-])(\\d{2}):(\\d{2}))");

    /**
     * time.Parse(time.RFC3339Nano, s), which is more lenient than RFC 3339: a one-digit hour, a
     * comma before the fraction, any number of fraction digits (cut to nanoseconds), offsets
     * up to 24:60.
     */
    private static void parseRfc3339(String s, Ts w) throws InvalidException {
        Matcher m = RFC3339.matcher(s);
        if (!m.matches()) {
            throw invalid("json: timestamp %s is not RFC 3339 with an offset", quote(s));
        }
        try {
            int offsetSecs = 0;
            if (m.group(8) == null) {
                int oh = Integer.parseInt(m.group(10));
                int om = Integer.parseInt(m.group(11));
                if (oh > 24 || om > 60) {
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
                String f = (m.group(7) + "000000000").substring(0, 9); // cut, as Go does
                nanos = Long.parseLong(f);
            }
            w.ms = secs * 1000 + nanos / 1_000_000;
            w.subMs = nanos % 1_000_000 != 0;
            w.has = !(secs * 1000 == ZERO_TIME_MS && nanos == 0);
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

    public static void checkTime(long tsMs, boolean subMs, long recordMs, long maxAgeMs, long skewMs) throws InvalidException {
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

    public static void checkId(String field, String id) throws InvalidException {
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

    public static int utf8Length(String s) {
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

    public static String checkKey(byte[] key) throws InvalidException {
        if (key.length > MAX_ID_BYTES) {
            throw invalid("key: %d bytes, longer than %d", key.length, MAX_ID_BYTES);
        }
        if (!validUtf8(key)) {
            throw invalid("key: not valid UTF-8");
        }
        return new String(key, StandardCharsets.UTF_8);
    }

    public static void checkValue(byte[] value) throws InvalidException {
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
     * the machine). Go's time.LoadLocation opens the name as a file under /usr/share/zoneinfo,
     * so "America//New_York" and "./UTC" are zones to it, a name with ".." or a leading slash is
     * not, and Java's offset forms ("+01:00", "UTC+1") are not either. The zone sets differ
     * where the databases do: Java's tzdb has SystemV/*, the system's has Factory, right/* (with
     * leap seconds) and, here, America/Coyhaique; posix/X is X; EST, MST and HST are Java's
     * short ids of the same fixed offsets.
     */
    private static ZoneId loadZone(String name) throws InvalidException {
        ZoneId z = ZONES.get(name);
        if (z != null) {
            return z;
        }
        if (name.isEmpty()) {
            throw invalid("tz: missing");
        }
        String file = zoneFile(name);
        if (file == null) {
            throw invalid("tz: unknown zone %s", quote(name));
        }
        z = ZoneId.of(file, ZoneId.SHORT_IDS);
        ZONES.put(name, z);
        return z;
    }

    private static final Set<String> SHORT = Set.of("EST", "MST", "HST");

    /** The zone a name opens as a file, normalised ("a//b/./c" is a/b/c), or null. */
    private static String zoneFile(String name) {
        if (name.equals("Local") || utf8Length(name) > 64 || name.contains("..") || name.charAt(0) == '/'
                || name.charAt(0) == '\\' || name.endsWith("/") || name.endsWith("/.") || name.equals(".")) {
            return null;
        }
        StringBuilder b = new StringBuilder(name.length());
        for (String e : name.split("/")) {
            if (!e.isEmpty() && !e.equals(".")) {
                b.append(b.length() == 0 ? "" : "/").append(e);
            }
        }
        String f = b.toString();
        if (f.startsWith("posix/")) {
            f = f.substring("posix/".length()); // the same zones without leap seconds
        }
        return IANA.contains(f) || SHORT.contains(f) ? f : null;
    }

    /** Go's %q: printable characters as they are, the others escaped. */
    public static String quote(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); ) {
            int c = s.codePointAt(i);
            i += Character.charCount(c);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case 7 -> b.append("\\a");
                case '\b' -> b.append("\\b");
                case '\f' -> b.append("\\f");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                case 11 -> b.append("\\v");
                default -> {
                    if (goPrintable(c)) {
                        b.appendCodePoint(c);
                    } else if (c < 0x80) {
                        b.append(String.format("\\x%02x", c));
                    } else if (c <= 0xFFFF) {
                        b.append(String.format("\\u%04x", c));
                    } else {
                        b.append(String.format("\\U%08x", c));
                    }
                }
            }
        }
        return b.append('"').toString();
    }

    /** unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
    private static boolean goPrintable(int c) {
        if (c == ' ') {
            return true;
        }
        switch (Character.getType(c)) {
            case Character.UPPERCASE_LETTER, Character.LOWERCASE_LETTER, Character.TITLECASE_LETTER,
                 Character.MODIFIER_LETTER, Character.OTHER_LETTER, Character.NON_SPACING_MARK,
                 Character.ENCLOSING_MARK, Character.COMBINING_SPACING_MARK, Character.DECIMAL_DIGIT_NUMBER,
                 Character.LETTER_NUMBER, Character.OTHER_NUMBER, Character.CONNECTOR_PUNCTUATION,
                 Character.DASH_PUNCTUATION, Character.START_PUNCTUATION, Character.END_PUNCTUATION,
                 Character.INITIAL_QUOTE_PUNCTUATION, Character.FINAL_QUOTE_PUNCTUATION,
                 Character.OTHER_PUNCTUATION, Character.MATH_SYMBOL, Character.CURRENCY_SYMBOL,
                 Character.MODIFIER_SYMBOL, Character.OTHER_SYMBOL:
                return true;
            default:
                return false;
        }
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
