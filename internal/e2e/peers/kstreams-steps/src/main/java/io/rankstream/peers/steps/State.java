package io.rankstream.peers.steps;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A user's merged per-day state, the value of the RocksDB store: a port of
 * processors/steps/state.go (Apply and its binary encoding, byte for byte).
 */
final class State {
    static final int MAX_REQUESTS_PER_DAY = 1024;
    static final int MAX_REGIONS_PER_DAY = 16;
    private static final int STATE_VERSION_1 = 1;
    private static final int STATE_VERSION = 2;

    static final class DayState {
        int day;
        long steps;
        long reachedMs;
        String region = "";
        long regionSteps;
        long regionReachedMs;
        /** Regions the user was ranked in on this day besides region, sorted by UTF-8 bytes. */
        List<String> left = new ArrayList<>(0);
        /** Hashes of the request ids merged into this day, oldest first. */
        long[] requests = new long[0];
        int nRequests;

        boolean hasRequest(long h) {
            for (int i = 0; i < nRequests; i++) {
                if (requests[i] == h) {
                    return true;
                }
            }
            return false;
        }

        void addRequest(long h) {
            if (nRequests == MAX_REQUESTS_PER_DAY) {
                System.arraycopy(requests, 1, requests, 0, nRequests - 1);
                nRequests--;
            }
            if (nRequests == requests.length) {
                requests = java.util.Arrays.copyOf(requests, Math.max(4, nRequests * 2));
            }
            requests[nRequests++] = h;
        }
    }

    /** A validated report reduced to what the merge needs. */
    record Report(long requestHash, int day, long steps, long tsMs, String region) {}

    enum Outcome { IMPROVED, DUPLICATE, STALE }

    /** What apply did: the day after the merge, and whether the state must be written back. */
    record Result(DayState day, Outcome outcome, boolean changed) {}

    /** A report that would move the user to one region too many in a day. */
    static final class TooManyRegionsException extends Exception {
        TooManyRegionsException(String message) {
            super(message);
        }
    }

    final List<DayState> days = new ArrayList<>(2);

    /** State.Apply: same-day max, earliest reach, best region, idempotent on request ids. */
    Result apply(Report r, int oldest) throws TooManyRegionsException {
        boolean pruned = prune(oldest);
        int i = 0;
        while (i < days.size() && days.get(i).day < r.day()) {
            i++;
        }
        if (i == days.size() || days.get(i).day != r.day()) {
            DayState nd = new DayState();
            nd.day = r.day();
            nd.steps = -1;
            days.add(i, nd);
        }
        DayState d = days.get(i);
        if (d.hasRequest(r.requestHash())) {
            return new Result(d, Outcome.DUPLICATE, pruned);
        }
        boolean moves = !r.region().isEmpty() && !r.region().equals(d.region) && regionBeats(r, d);
        if (moves && !d.region.isEmpty() && !d.left.contains(r.region()) && d.left.size() + 2 > MAX_REGIONS_PER_DAY) {
            throw new TooManyRegionsException(String.format(
                "steps: more than %d distinct regions for one user and day: region \"%s\" on %d",
                MAX_REGIONS_PER_DAY, r.region(), r.day()));
        }
        d.addRequest(r.requestHash());
        Outcome out = Outcome.STALE;
        if (r.steps() > d.steps || r.steps() == d.steps && r.tsMs() < d.reachedMs) {
            d.steps = r.steps();
            d.reachedMs = r.tsMs();
            out = Outcome.IMPROVED;
        }
        if (!r.region().isEmpty() && regionBeats(r, d)) {
            if (moves) {
                if (!d.region.isEmpty()) {
                    insertSorted(d.left, d.region);
                }
                d.left.remove(r.region());
                d.region = r.region();
                out = Outcome.IMPROVED;
            }
            d.regionSteps = r.steps();
            d.regionReachedMs = r.tsMs();
        }
        return new Result(d, out, true);
    }

    /** regionBeats: more steps, then earlier, then the smaller region name. */
    private static boolean regionBeats(Report r, DayState d) {
        if (d.region.isEmpty()) {
            return true;
        }
        if (r.steps() != d.regionSteps) {
            return r.steps() > d.regionSteps;
        }
        if (r.tsMs() != d.regionReachedMs) {
            return r.tsMs() < d.regionReachedMs;
        }
        return compareUtf8(r.region(), d.region) < 0;
    }

    /** Orders strings like Go compares them: by UTF-8 bytes, i.e. by code points. */
    static int compareUtf8(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) {
                return Integer.compare(ca, cb);
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Integer.compare(a.length() - i, b.length() - j);
    }

    private static void insertSorted(List<String> s, String v) {
        int i = 0;
        while (i < s.size() && compareUtf8(s.get(i), v) < 0) {
            i++;
        }
        if (i < s.size() && s.get(i).equals(v)) {
            return;
        }
        s.add(i, v);
    }

    private boolean prune(int oldest) {
        int n = 0;
        while (n < days.size() && days.get(n).day < oldest) {
            n++;
        }
        if (n > 0) {
            days.subList(0, n).clear();
        }
        return n > 0;
    }

    // --- encoding: MarshalBinary / UnmarshalBinary of state.go -----------------------------

    byte[] encode() {
        Out b = new Out(16 + days.size() * 32);
        b.write(STATE_VERSION);
        b.uvarint(days.size());
        for (DayState d : days) {
            b.uvarint(d.day);
            b.varint(d.steps);
            b.varint(d.reachedMs);
            b.string(d.region);
            if (!d.region.isEmpty()) {
                b.varint(d.regionSteps);
                b.varint(d.regionReachedMs);
            }
            b.uvarint(d.left.size());
            for (String l : d.left) {
                b.string(l);
            }
            b.uvarint(d.nRequests);
            for (int i = 0; i < d.nRequests; i++) {
                long h = d.requests[i];
                for (int k = 0; k < 8; k++) {
                    b.write((int) (h >>> (8 * k)));
                }
            }
        }
        return b.toByteArray();
    }

    static State decode(byte[] bytes) {
        In r = new In(bytes);
        int v = r.b();
        if (v != STATE_VERSION && v != STATE_VERSION_1) {
            throw new IllegalStateException("steps: corrupt state: version " + v);
        }
        State s = new State();
        long n = r.uvarint(64);
        for (long k = 0; k < n; k++) {
            DayState d = new DayState();
            d.day = (int) r.uvarint(99991231);
            d.steps = r.varint();
            d.reachedMs = r.varint();
            d.region = r.string();
            if (v == STATE_VERSION_1 && !d.region.isEmpty()) {
                d.regionSteps = d.steps;
                d.regionReachedMs = d.reachedMs;
            } else if (v == STATE_VERSION && !d.region.isEmpty()) {
                d.regionSteps = r.varint();
                d.regionReachedMs = r.varint();
            }
            if (v == STATE_VERSION) {
                long nl = r.uvarint(MAX_REGIONS_PER_DAY - 1);
                for (long j = 0; j < nl; j++) {
                    d.left.add(r.string());
                }
            }
            int nr = (int) r.uvarint(MAX_REQUESTS_PER_DAY);
            d.requests = new long[Math.max(4, nr)];
            for (int j = 0; j < nr; j++) {
                long h = 0;
                for (int q = 0; q < 8; q++) {
                    h |= (long) r.b() << (8 * q);
                }
                d.requests[j] = h;
            }
            d.nRequests = nr;
            s.days.add(d);
        }
        if (r.pos != bytes.length) {
            throw new IllegalStateException("steps: corrupt state: " + bytes.length + " bytes");
        }
        return s;
    }

    private static final class Out extends ByteArrayOutputStream {
        Out(int size) {
            super(size);
        }

        void uvarint(long x) {
            while (Long.compareUnsigned(x, 0x80) >= 0) {
                write((int) (x | 0x80));
                x >>>= 7;
            }
            write((int) x);
        }

        /** Go's binary.AppendVarint: zig-zag. */
        void varint(long x) {
            uvarint(x << 1 ^ (x >> 63));
        }

        void string(String s) {
            byte[] u = s.getBytes(StandardCharsets.UTF_8);
            uvarint(u.length);
            write(u, 0, u.length);
        }
    }

    private static final class In {
        final byte[] b;
        int pos;

        In(byte[] b) {
            this.b = b;
        }

        int b() {
            if (pos >= b.length) {
                throw new IllegalStateException("steps: corrupt state: " + b.length + " bytes");
            }
            return b[pos++] & 0xff;
        }

        long uvarint(long max) {
            long x = 0;
            for (int shift = 0; shift < 64; shift += 7) {
                int c = b();
                x |= (long) (c & 0x7f) << shift;
                if (c < 0x80) {
                    if (Long.compareUnsigned(x, max) > 0) {
                        throw new IllegalStateException("steps: corrupt state: " + x + " over " + max);
                    }
                    return x;
                }
            }
            throw new IllegalStateException("steps: corrupt state: varint overflow");
        }

        long varint() {
            long ux = uvarint(-1L);
            return ux >>> 1 ^ -(ux & 1);
        }

        String string() {
            int n = (int) uvarint(1 << 10);
            if (pos + n > b.length) {
                throw new IllegalStateException("steps: corrupt state: " + b.length + " bytes");
            }
            String s = new String(b, pos, n, StandardCharsets.UTF_8);
            pos += n;
            return s;
        }
    }
}
