package bench

import dev.redelay.Client
import dev.redelay.ClientOptions
import dev.redelay.Message
import dev.redelay.Queue
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import java.util.UUID
import kotlin.time.Duration.Companion.hours

// redelay Kotlin benchmark: publishBatch messages/s and deliver+ack messages/s.
// Needs REDIS_URL. Prints one JSON line:
// {"lang":"kotlin","publish_batch_per_s":..,"deliver_ack_per_s":..}
// Options (environment): BENCH_N messages per measurement (default 100000), BENCH_BATCH messages
// per publishBatch call (default 1000), BENCH_INFLIGHT publishBatch calls in flight (default 4),
// BENCH_CONCURRENCY handlers (default 200), BENCH_BODY body bytes (default 64), BENCH_WARMUP
// messages of each warm-up (default 300000: with 50000 the JIT compilers still ran through the
// measured phases, C2 alone took 44% of the process CPU, and deliver+ack measured 12.3 instead of
// 7.3 µs of process CPU per message).

private fun env(name: String, default: Int) = System.getenv(name)?.toInt() ?: default

private val N = env("BENCH_N", 100_000)
private val BATCH = env("BENCH_BATCH", 1000)
private val INFLIGHT = env("BENCH_INFLIGHT", 4)
private val CONCURRENCY = env("BENCH_CONCURRENCY", 200)
private val BODY = ByteArray(env("BENCH_BODY", 64)) { 'x'.code.toByte() }
private val WARMUP = env("BENCH_WARMUP", 300_000)

private fun log(msg: String) = System.err.println("bench-kotlin: $msg")

/** CPU seconds used by this process so far (all threads, the native ones too). */
private fun cpu(): Double =
    (java.lang.management.ManagementFactory.getOperatingSystemMXBean() as com.sun.management.OperatingSystemMXBean)
        .processCpuTime / 1e9

/** Publishes n messages in batches of BATCH, INFLIGHT calls at once; returns seconds. */
private suspend fun publishAll(q: Queue, n: Int, delayed: Boolean): Double {
    val d = if (delayed) 1.hours else null
    val batch = List(BATCH) { Message(BODY, delay = d) }
    val t0 = System.nanoTime()
    var sent = 0
    coroutineScope {
        while (sent < n) {
            val calls = ArrayList<kotlinx.coroutines.Deferred<*>>()
            repeat(INFLIGHT) {
                if (sent < n) {
                    val k = minOf(BATCH, n - sent)
                    val msgs = if (k == BATCH) batch else batch.subList(0, k)
                    calls.add(async { q.publishBatch(msgs) })
                    sent += k
                }
            }
            calls.awaitAll()
        }
    }
    return (System.nanoTime() - t0) / 1e9
}

/** Subscribes a no-op handler over a backlog of n due messages; returns seconds to the n-th ack. */
private suspend fun consumeAll(q: Queue, n: Int): Double {
    val t0 = System.nanoTime()
    val sub = q.subscribe(concurrency = CONCURRENCY) { }
    while (sub.counters.acked < n) delay(1)
    val secs = (System.nanoTime() - t0) / 1e9
    sub.shutdown()
    return secs
}

fun main() = runBlocking {
    val url = System.getenv("REDIS_URL") ?: error("REDIS_URL is not set")
    val prefix = "bench-kt-" + UUID.randomUUID().toString().take(8)
    Client.connect(url, ClientOptions(prefix = prefix)).use { client ->
        // Warm-up: JIT, connections, scripts loaded.
        val warm = client.queue("warmup")
        publishAll(warm, WARMUP, delayed = false)
        consumeAll(warm, WARMUP)

        val pq = client.queue("publish")
        var c0 = cpu()
        val pubSecs = publishAll(pq, N, delayed = true)
        log("publishBatch: process CPU %.1f µs/msg".format((cpu() - c0) * 1e6 / N))
        val publishRate = N / pubSecs
        log("publishBatch: $N messages in %.3f s = %.0f msg/s".format(pubSecs, publishRate))
        pq.destroy()

        val dq = client.queue("deliver")
        publishAll(dq, N, delayed = false)
        c0 = cpu()
        val conSecs = consumeAll(dq, N)
        log("deliver+ack: process CPU %.1f µs/msg".format((cpu() - c0) * 1e6 / N))
        val deliverRate = N / conSecs
        log("deliver+ack: $N messages in %.3f s = %.0f msg/s".format(conSecs, deliverRate))
        check(dq.stats().total == 0L) { "deliver queue not empty after the run" }
        dq.destroy()
        warm.destroy()

        println(
            """{"lang":"kotlin","publish_batch_per_s":%.0f,"deliver_ack_per_s":%.0f,"settings":{"n":%d,"batch":%d,"inflight":%d,"concurrency":%d,"body":%d}}"""
                .format(publishRate, deliverRate, N, BATCH, INFLIGHT, CONCURRENCY, BODY.size),
        )
    }
}
