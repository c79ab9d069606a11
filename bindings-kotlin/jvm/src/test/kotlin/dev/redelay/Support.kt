package dev.redelay

import kotlinx.coroutines.delay
import kotlinx.coroutines.withTimeout
import java.util.UUID
import kotlin.time.Duration
import kotlin.time.Duration.Companion.seconds

/** The Redis of tests/with-redis.sh. Tests fail (not skip) without it. */
val redisUrl: String =
    System.getenv("REDIS_URL")
        ?: error("REDIS_URL is not set: run the tests under tests/with-redis.sh")

/** A queue name no other test uses. */
fun uniqueName(tag: String) = "kt-$tag-" + UUID.randomUUID().toString().take(8)

/** A client with a prefix no other test uses. */
suspend fun testClient(tag: String, options: ClientOptions = ClientOptions()): Client =
    Client.connect(redisUrl, options.copy(prefix = options.prefix ?: uniqueName("p-$tag")))

/** Waits until [cond] holds, failing after [timeout]. */
suspend fun eventually(timeout: Duration = 10.seconds, what: String = "condition", cond: suspend () -> Boolean) {
    try {
        withTimeout(timeout) {
            while (!cond()) delay(10)
        }
    } catch (e: kotlinx.coroutines.TimeoutCancellationException) {
        throw AssertionError("timed out after $timeout waiting for $what")
    }
}

/** Runs redis-cli against the test Redis (to set up what the API cannot, e.g. a spoiled record). */
fun redisCli(vararg args: String): String {
    val p = ProcessBuilder(listOf("redis-cli", "-u", redisUrl) + args).redirectErrorStream(true).start()
    val out = p.inputStream.bufferedReader().readText().trim()
    check(p.waitFor() == 0) { "redis-cli ${args.joinToString(" ")}: $out" }
    return out
}
