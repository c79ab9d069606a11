package example

import dev.redelay.Client
import dev.redelay.RedelayException
import dev.redelay.SubscribeOptions
import dev.redelay.kind
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlin.time.Duration.Companion.seconds

// The worker of the README ("A worker with graceful shutdown"), compiled with the example so
// that the README's code keeps compiling against the published API. Not run by ci.sh.

fun sendEmail(text: String) {
    if (text.isEmpty()) throw IllegalArgumentException("empty email")
}

fun workerMain() = runBlocking {
    val client = Client.connect(System.getenv("REDIS_URL") ?: "redis://127.0.0.1:6379")
    val worker = launch {
        client.queue("emails").consume(SubscribeOptions(concurrency = 32, drainTimeout = 20.seconds)) { msg ->
            sendEmail(msg.text)
        }
    }
    Runtime.getRuntime().addShutdownHook(
        Thread {
            runBlocking {
                worker.cancelAndJoin()
                client.shutdown()
            }
        },
    )
    worker.join()
}

suspend fun publishChecked(client: Client, body: ByteArray, userDelayMs: Long): String? = try {
    client.queue("emails").publish(body, delay = userDelayMs.seconds / 1000)
    null
} catch (e: RedelayException.InvalidArgument) {
    e.message
} catch (e: RedelayException) {
    System.err.println("redelay ${e.kind}: ${e.message}")
    throw e
}
