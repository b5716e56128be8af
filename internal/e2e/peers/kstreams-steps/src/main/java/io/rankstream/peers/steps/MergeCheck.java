package io.rankstream.peers.steps;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * The peer's merge (State.apply and the state's encoding) on reports read from stdin, for the
 * differential test against processors/steps (internal/e2e/peers/merge_test.go), kept as the
 * processor keeps it: decoded from the store before each report, written back only when the
 * merge changed it. A line "reset" starts a new user's state; any other line is oldest TAB
 * request hash TAB day TAB steps TAB ts ms TAB base64(region), answered by the outcome (or
 * "too-many-regions") TAB changed TAB base64(the stored state, "" for none).
 *
 * <pre>java -cp kstreams-steps.jar io.rankstream.peers.steps.MergeCheck</pre>
 */
public final class MergeCheck {
    private MergeCheck() {}

    public static void main(String[] args) throws Exception {
        Base64.Decoder dec = Base64.getDecoder();
        Base64.Encoder enc = Base64.getEncoder();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        PrintWriter out = new PrintWriter(System.out, false, StandardCharsets.US_ASCII);
        byte[] stored = null;
        for (String line; (line = in.readLine()) != null; ) {
            if (line.equals("reset")) {
                stored = null;
                continue;
            }
            State s = stored == null ? new State() : State.decode(stored);
            String[] f = line.split("\t", -1);
            State.Report r = new State.Report(Long.parseUnsignedLong(f[1]), Integer.parseInt(f[2]),
                Long.parseLong(f[3]), Long.parseLong(f[4]), new String(dec.decode(f[5]), StandardCharsets.UTF_8));
            String outcome;
            boolean changed;
            try {
                State.Result res = s.apply(r, Integer.parseInt(f[0]));
                outcome = res.outcome().name().toLowerCase();
                changed = res.changed();
            } catch (State.TooManyRegionsException e) {
                outcome = "too-many-regions";
                changed = false;
            }
            if (changed) {
                stored = s.encode();
            }
            out.println(outcome + "\t" + changed + "\t" + (stored == null ? "" : enc.encodeToString(stored)));
        }
        out.flush();
    }
}
