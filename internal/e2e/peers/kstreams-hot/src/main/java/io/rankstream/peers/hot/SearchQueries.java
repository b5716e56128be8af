package io.rankstream.peers.hot;

import io.rankstream.peers.steps.StepReports;
import io.rankstream.peers.steps.StepReports.InvalidException;
import java.util.Locale;

/**
 * Decoding, validation and normalisation of one search.queries record: a port of
 * topics.DecodeSearchQuery and topics.Normalize (topics/search.go, topics/normalize.go,
 * topics/validate.go), with the same checks in the same order and the same reasons, built on
 * the steps peer's port of the checks every input shares (StepReports). The record's Kafka
 * timestamp, never the clock, bounds ts.
 */
final class SearchQueries {
    private SearchQueries() {}

    /** topics.MaxQueryBytes. */
    static final int MAX_QUERY_BYTES = 256;
    /** topics.SearchMaxAge (topics.DefaultStreamRetention) and topics.SearchFutureSkew. */
    static final long MAX_AGE_MS = 14 * 24 * 3_600_000L;
    static final long FUTURE_SKEW_MS = 5 * 60_000L;

    /** A valid query: its term (what is counted), the query as sent, its time and user. */
    record Valid(String term, String query, long tsMs, String userId) {}

    private static final class Wire {
        String query = "";
        String userId = "";
        final StepReports.Ts ts = new StepReports.Ts();
    }

    static Valid decode(byte[] key, byte[] value, long recordTimeMs) throws InvalidException {
        StepReports.checkValue(value);
        StepReports.checkKey(key);
        Wire w = new Wire();
        StepReports.parseObject(value, "a search query", (name, p, t, v) -> {
            if (StepReports.is(name, "query")) {
                w.query = StepReports.string(p, t, name, w.query);
            } else if (StepReports.is(name, "ts")) {
                StepReports.timestamp(p, t, w.ts);
            } else if (StepReports.is(name, "user_id")) {
                w.userId = StepReports.string(p, t, name, w.userId);
            } else {
                return false;
            }
            return true;
        });
        if (!w.ts.has) {
            throw StepReports.invalid("ts: missing");
        }
        StepReports.checkTime(w.ts.ms, w.ts.subMs, recordTimeMs, MAX_AGE_MS, FUTURE_SKEW_MS);
        if (!w.userId.isEmpty()) {
            StepReports.checkId("user_id", w.userId);
        }
        if (w.query.isEmpty()) {
            throw StepReports.invalid("query: missing");
        }
        checkText("query", w.query);
        String term = normalize(w.query);
        int bytes = StepReports.utf8Length(term);
        if (term.isEmpty()) {
            throw StepReports.invalid("query: empty after normalisation");
        }
        if (bytes > MAX_QUERY_BYTES) {
            throw StepReports.invalid("query: %d bytes after normalisation, over the limit of %d", bytes, MAX_QUERY_BYTES);
        }
        return new Valid(term, w.query, w.ts.ms, w.userId);
    }

    /** topics.checkText: no control or format characters (but ZWJ, ZWNJ and tags), no U+FFFD. */
    static void checkText(String field, String s) throws InvalidException {
        for (int i = 0; i < s.length(); ) {
            int c = s.codePointAt(i);
            i += Character.charCount(c);
            if (c < 0x80 && (c >= ' ' && c != 0x7f || isSpace(c))) {
                continue;
            }
            int type = Character.getType(c);
            if (c == 0xFFFD || type == Character.SURROGATE) {
                throw StepReports.invalid("%s: contains U+FFFD (e.g. from a lone surrogate escape)", field);
            }
            if (type == Character.CONTROL && !isSpace(c)
                    || type == Character.FORMAT && c != 0x200C && c != 0x200D && !(0xE0020 <= c && c <= 0xE007F)) {
                throw StepReports.invalid("%s: contains the control or format character U+%04X", field, c);
            }
        }
    }

    /** Go's unicode.IsSpace: the Latin-1 spaces and the White_Space property. */
    static boolean isSpace(int c) {
        if (c <= 0xFF) {
            return c == ' ' || c >= '\t' && c <= '\r' || c == 0x85 || c == 0xA0;
        }
        return c == 0x1680 || c >= 0x2000 && c <= 0x200A || c == 0x2028 || c == 0x2029 || c == 0x202F
            || c == 0x205F || c == 0x3000;
    }

    /**
     * topics.Normalize: white space (unicode.IsSpace) trimmed and collapsed to one space, then
     * Unicode full case folding (golang.org/x/text/cases.Fold), Cherokee folded to its capital
     * letters. Java has no case folding; per character, upper case then lower case (twice, for
     * U+1E9E) gives the full folding but for U+0131 (dotless i, which does not fold), and,
     * being per character, without Java's final-sigma rule.
     */
    static String normalize(String q) {
        StringBuilder b = new StringBuilder(q.length());
        boolean ascii = true;
        boolean pending = false;
        for (int i = 0; i < q.length(); ) {
            int c = q.codePointAt(i);
            i += Character.charCount(c);
            if (isSpace(c)) {
                pending = b.length() > 0;
                continue;
            }
            if (pending) {
                b.append(' ');
                pending = false;
            }
            if (c < 0x80) {
                b.append((char) (c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c));
            } else {
                ascii = false;
                b.appendCodePoint(c);
            }
        }
        if (ascii) {
            return b.toString();
        }
        String s = b.toString();
        StringBuilder f = new StringBuilder(s.length() + 8);
        for (int i = 0; i < s.length(); ) {
            int c = s.codePointAt(i);
            i += Character.charCount(c);
            f.append(fold(c));
        }
        return f.toString();
    }

    private static String fold(int c) {
        if (c < 0x80 || c == 0x131) {
            return Character.toString(c);
        }
        if (0xAB70 <= c && c <= 0xABBF || 0x13A0 <= c && c <= 0x13F5 || 0x13F8 <= c && c <= 0x13FD) {
            // Cherokee: small letters fold to capitals, capitals stay.
            return Character.toString(c >= 0xAB70 ? c - 0xAB70 + 0x13A0 : c >= 0x13F8 ? c - 8 : c);
        }
        String s = Character.toString(c);
        for (int round = 0; round < 2; round++) {
            s = s.toUpperCase(Locale.ROOT).toLowerCase(Locale.ROOT);
        }
        return s;
    }
}
