package dev.redelay

import kotlinx.coroutines.delay
import kotlinx.coroutines.withTimeout
import java.util.UUID
import kotlin.concurrent.thread
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

/**
 * A TCP proxy in front of the test Redis (core/tests/common's FaultProxy, for the binding's
 * tests): [dropNextRequestWith] makes the next request holding a pattern never reach Redis, its
 * connection dropped, so that a long run fails in the middle.
 */
class FaultProxy : AutoCloseable {
    private val upstream = java.net.URI(redisUrl)
    private val listener = java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())
    val url: String = upstream.run {
        java.net.URI(scheme, userInfo, "127.0.0.1", listener.localPort, path, query, null)
    }
        .toString()
    private var cut: String? = null

    @Volatile
    var dropped = 0
        private set

    init {
        thread(isDaemon = true) {
            while (true) {
                val conn = try {
                    listener.accept()
                } catch (e: java.io.IOException) {
                    break
                }
                val up = java.net.Socket(upstream.host, upstream.port.takeIf { it > 0 } ?: 6379)
                thread(isDaemon = true) { pump(conn, up, true) }
                thread(isDaemon = true) { pump(up, conn, false) }
            }
        }
    }

    @Synchronized
    fun dropNextRequestWith(pattern: String) {
        cut = pattern
    }

    override fun close() = listener.close()

    /**
     * True (and the pattern cleared) when [seen] holds it. A pattern split between two reads is
     * found too; the part of the request already sent is never a whole command, so Redis runs none.
     */
    @Synchronized
    private fun drops(seen: String): Boolean {
        if (cut?.let { it in seen } != true) return false
        cut = null
        dropped++
        return true
    }

    private fun pump(src: java.net.Socket, dst: java.net.Socket, requests: Boolean) {
        var tail = ""
        val buf = ByteArray(65536)
        try {
            while (true) {
                val n = src.getInputStream().read(buf)
                if (n < 0) break
                if (requests) {
                    // Bytes as chars one to one (ISO-8859-1), to look for the pattern.
                    val chunk = String(buf, 0, n, Charsets.ISO_8859_1)
                    if (drops(tail + chunk)) break
                    tail = chunk.takeLast(64)
                }
                dst.getOutputStream().write(buf, 0, n)
            }
        } catch (e: java.io.IOException) {
            // The other side closed.
        }
        src.close()
        dst.close()
    }
}
