package io.rankstream.peers.steps;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * The peer's decoding and validation on records read from stdin, for the differential test
 * against topics.DecodeStepReport (internal/e2e/peers/decode_test.go). Each input line is
 * base64(key) TAB base64(value) or "-" for a tombstone, TAB the record time in epoch ms; each
 * output line is "ok" TAB base64(request id) TAB base64(user) TAB steps TAB ts ms TAB local day
 * TAB base64(region), or "invalid" TAB base64(reason).
 *
 * <pre>java -cp kstreams-steps.jar io.rankstream.peers.steps.DecodeCheck</pre>
 */
public final class DecodeCheck {
    private DecodeCheck() {}

    public static void main(String[] args) throws Exception {
        Base64.Decoder dec = Base64.getDecoder();
        Base64.Encoder enc = Base64.getEncoder();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        PrintWriter out = new PrintWriter(System.out, false, StandardCharsets.US_ASCII);
        for (String line; (line = in.readLine()) != null; ) {
            String[] f = line.split("\t", -1);
            byte[] key = dec.decode(f[0]);
            byte[] value = f[1].equals("-") ? null : dec.decode(f[1]);
            long recordMs = Long.parseLong(f[2]);
            try {
                StepReports.Valid r = StepReports.decode(key, value, recordMs, StepReports.Rules.DEFAULT);
                out.println(String.join("\t", "ok", b64(enc, r.requestId()), b64(enc, r.userId()),
                    Long.toString(r.steps()), Long.toString(r.tsMs()),
                    Integer.toString(Days.dayOf(r.tsMs(), r.zone())), b64(enc, r.region())));
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
