package example

import dev.redelay.Client
import dev.redelay.RedelayException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/** Publishes a delayed message, consumes it, and closes: the JVM then exits by itself. */
fun main() = runBlocking {
    val url = System.getenv("REDIS_URL") ?: "redis://127.0.0.1:6379"
    Client.connect(url).use { client ->
        val queue = client.queue("example-" + System.currentTimeMillis())
        val received = CompletableDeferred<String>()

        val sub = queue.subscribe(concurrency = 4) { msg ->
            println("example: got ${msg.id} \"${msg.text}\" attempt ${msg.attempt}, late by ${msg.lateness}")
            received.complete(msg.text)
        }

        val published = queue.publish("hello from Kotlin".encodeToByteArray(), delay = 250.milliseconds)
        println("example: published ${published.id}, due in 250 ms")

        val text = withTimeout(10.seconds) { received.await() }
        check(text == "hello from Kotlin") { "unexpected body $text" }

        try {
            queue.publish("x".encodeToByteArray(), maxAttempts = 0)
        } catch (e: RedelayException.InvalidArgument) {
            println("example: refused as expected: ${e.message}")
        }

        sub.close()
        println("example: ok")
    }
}
