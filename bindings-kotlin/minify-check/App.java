import dev.redelay.*;
import kotlin.coroutines.EmptyCoroutineContext;
import kotlinx.coroutines.BuildersKt;

/**
 * An app minified with redelay's consumer rules (check.sh): connects through JNA, and reads the
 * kind and code of a thrown error and of a long run's (Queue.purgeDead), whose classes ProGuard
 * renamed. Exits 1 when one is wrong.
 */
public class App {
    static int failed = 0;

    static void check(String what, Throwable x, String want) {
        try {
            RedelayException e = (RedelayException) x;
            String got = ErrorsKt.getKind(e) + " " + ErrorsKt.getCode(e) + " " + (e instanceof RedelayException.InvalidArgument);
            System.out.println(what + ": " + got + " / " + e.getMessage());
            if (!got.equals(want)) { failed++; System.out.println("  wanted " + want); }
        } catch (Throwable t) {
            failed++;
            System.out.println(what + ": FAILED " + t);
        }
    }

    public static void main(String[] args) throws Exception {
        Client client = Client.connectBlocking(System.getenv("REDIS_URL"));
        String want = "InvalidArgument ERR_REDELAY_INVALID_ARGUMENT true";
        try {
            client.queue("bad name", 1);
        } catch (Exception x) {
            check("queue", x, want);
        }
        Queue q = client.queue("pg", 1);
        try {
            BuildersKt.runBlocking(EmptyCoroutineContext.INSTANCE, (scope, k) -> q.purgeDead(new Select.Oldest(-1L), k));
        } catch (Throwable x) {
            check("purgeDead", x, want);
        }
        client.close();
        System.out.println(failed == 0 ? "ok" : "FAILED " + failed);
        System.exit(failed == 0 ? 0 : 1);
    }
}
