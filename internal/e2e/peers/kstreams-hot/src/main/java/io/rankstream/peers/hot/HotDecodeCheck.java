package io.rankstream.peers.hot;

import io.rankstream.peers.steps.StepReports;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * The peer's decoding, validation and normalisation on records read from stdin, for the
 * differential test against topics.DecodeSearchQuery (internal/e2e/peers/decode_test.go). Each
 * input line is base64(key) TAB base64(value) or "-" for a tombstone, TAB the record time in
 * epoch ms; each output line is "ok" TAB base64(term) TAB base64(query) TAB base64(user) TAB
 * ts ms, or "invalid" TAB base64(reason).
 *
 * <pre>java -cp kstreams-hot.jar io.rankstream.peers.hot.HotDecodeCheck</pre>
 */
public final class HotDecodeCheck {
    private HotDecodeCheck() {}

    public static void main(String[] args) throws Exception {
        Base64.Decoder dec = Base64.getDecoder();
        Base64.Encoder enc = Base64.getEncoder();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        PrintWriter out = new PrintWriter(System.out, false, StandardCharsets.US_ASCII);
        for (String line; (line = in.readLine()) != null; ) {
            String[] f = line.split("\t", -1);
            byte[] key = dec.decode(f[0]);
            byte[] value = f[1].equals("-") ? null : dec.decode(f[1]);
            try {
                SearchQueries.Valid q = SearchQueries.decode(key, value, Long.parseLong(f[2]));
                out.println(String.join("\t", "ok", b64(enc, q.term()), b64(enc, q.query()), b64(enc, q.userId()),
                    Long.toString(q.tsMs())));
            } catch (StepReports.InvalidException e) {
                out.println("invalid\t" + b64(enc, e.getMessage()));
            }
        }
        out.flush();
    }

    private static String b64(Base64.Encoder enc, String s) {
        return enc.encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }
}
