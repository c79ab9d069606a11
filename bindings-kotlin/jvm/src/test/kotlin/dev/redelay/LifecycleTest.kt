package dev.redelay

import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.cancel
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.Test
import java.io.File
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertFalse
import kotlin.test.assertTrue
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlin.time.TimeSource

class LifecycleTest {
    @Test
    fun `cancelling the consuming coroutine closes gracefully`() = runBlocking<Unit> {
        testClient("cancel").use { client ->
            val q = client.queue(uniqueName("cancel"))
            val started = CompletableDeferred<Unit>()
            val finished = AtomicBoolean(false)
            val worker = launch(Dispatchers.Default) {
                q.consume(concurrency = 2) {
                    started.complete(Unit)
                    delay(400) // a running handler, not cancelled by the shutdown
                    finished.set(true)
                }
            }
            q.publish("work".encodeToByteArray(), id = "w1")
            withTimeout(10.seconds) { started.await() }
            worker.cancelAndJoin()
            // The handler ran to its end and its message was acked before the worker ended.
            assertTrue(finished.get(), "handler finished before cancelAndJoin returned")
            assertEquals(0, q.stats().total)
        }
    }

    @Test
    fun `a subscription closes when the job that started it is cancelled`() = runBlocking<Unit> {
        testClient("bound").use { client ->
            val q = client.queue(uniqueName("bound"))
            lateinit var sub: Subscription
            val job = launch {
                sub = q.subscribe { }
                delay(Long.MAX_VALUE)
            }
            eventually(what = "subscribed") { runCatching { sub }.isSuccess }
            assertFalse(sub.isClosed)
            job.cancelAndJoin()
            eventually(what = "closed") { sub.isClosed }
            // Not consuming any more.
            q.publish("x".encodeToByteArray())
            delay(200)
            assertEquals(1, q.stats().ready)
        }
    }

    @Test
    fun `a scope that completes normally leaves its subscription running`() = runBlocking<Unit> {
        testClient("scope").use { client ->
            val q = client.queue(uniqueName("scope"))
            val sub = coroutineScope { q.subscribe { } }
            q.publish("x".encodeToByteArray())
            eventually(what = "consumed") { q.stats().total == 0L }
            assertFalse(sub.isClosed)
            sub.close()
        }
    }

    @Test
    fun `close waits for running handlers and releases prefetched messages`() = runBlocking<Unit> {
        testClient("drain").use { client ->
            val q = client.queue(uniqueName("drain"))
            val started = CompletableDeferred<Unit>()
            val finished = AtomicBoolean(false)
            val sub = q.subscribe(concurrency = 1, prefetch = 5) {
                started.complete(Unit)
                delay(300)
                finished.set(true)
            }
            q.publishBatch((1..4).map { Message("m$it".encodeToByteArray(), id = "d$it") })
            withTimeout(10.seconds) { started.await() }
            sub.close()
            assertTrue(finished.get())
            assertTrue(sub.isClosed)
            val s = q.stats()
            assertEquals(0, s.leased, "prefetched messages handed back")
            assertEquals(3, s.total)
            // Handed back without counting an attempt.
            val rest = q.fetch(10)
            assertTrue(rest.all { it.attempt == 1 }, rest.joinToString())
        }
    }

    @Test
    fun `past the drain timeout close returns, cancels the handler, and the message comes back`() = runBlocking<Unit> {
        testClient("abandon").use { client ->
            val q = client.queue(uniqueName("abandon"))
            val started = CompletableDeferred<Unit>()
            val cancelled = CompletableDeferred<Unit>()
            val sub = q.subscribe(concurrency = 1, ttr = 300.milliseconds, drainTimeout = 200.milliseconds) {
                started.complete(Unit)
                try {
                    delay(30_000)
                } catch (e: kotlinx.coroutines.CancellationException) {
                    cancelled.complete(Unit)
                    throw e
                }
            }
            q.publish("slow".encodeToByteArray(), id = "slow")
            withTimeout(10.seconds) { started.await() }
            val t = TimeSource.Monotonic.markNow()
            sub.close()
            assertTrue(t.elapsedNow() < 5.seconds, "close took ${t.elapsedNow()}")
            withTimeout(5.seconds) { cancelled.await() }
            // Still leased by the abandoned run; delivered again once the lease runs out.
            val again = q.fetch(1, wait = 5.seconds)
            assertEquals("slow", again.single().id)
            assertEquals(2, again[0].attempt)
            again[0].ack()
        }
    }

    @Test
    fun `settling after the handler returned is LeaseLost`() = runBlocking<Unit> {
        testClient("late").use { client ->
            val q = client.queue(uniqueName("late"))
            val kept = CompletableDeferred<Delivery>()
            val sub = q.subscribe { kept.complete(it) }
            q.publish("x".encodeToByteArray())
            val d = withTimeout(10.seconds) { kept.await() }
            eventually(what = "acked") { q.stats().total == 0L }
            assertTrue(d.isSettled)
            assertFailsWith<RedelayException.LeaseLost> { d.ack() }
            sub.close()
        }
    }

    @Test
    fun `a settle called from a cancelled coroutine still reaches Redis`() = runBlocking<Unit> {
        testClient("cset").use { client ->
            val q = client.queue(uniqueName("cset"))
            repeat(20) { q.publish("x".encodeToByteArray(), id = "m$it") }
            val got = q.fetch(20, wait = 5.seconds)
            assertEquals(20, got.size)
            for (d in got) {
                // Cancelled before the ack's answer comes: the ack is sent all the same.
                val job = launch(Dispatchers.Default) {
                    cancel()
                    d.ack()
                }
                job.join()
                assertTrue(job.isCancelled)
            }
            eventually(what = "all 20 acks applied") { q.stats().total == 0L }
        }
    }

    @Test
    fun `closing the client drains its subscriptions, then later calls fail`() = runBlocking<Unit> {
        val client = testClient("cdrain")
        val q = client.queue(uniqueName("cdrain"))
        val started = CompletableDeferred<Unit>()
        val finished = AtomicBoolean(false)
        val sub = q.subscribe(concurrency = 1, prefetch = 3) {
            started.complete(Unit)
            delay(300) // running when the client closes: it gets the drain timeout
            finished.set(true)
        }
        q.publishBatch((1..3).map { Message("m$it".encodeToByteArray(), id = "c$it") })
        withTimeout(10.seconds) { started.await() }
        client.close()
        assertTrue(finished.get(), "the running handler finished before close returned")
        assertTrue(sub.isClosed)
        assertFailsWith<RedelayException.Connection> { q.stats() }
        testClient("cdrain2", ClientOptions(prefix = client.prefix)).use { other ->
            val s = other.queue(q.name).stats()
            assertEquals(0, s.leased, "prefetched messages were handed back")
            assertEquals(2, s.total, "the running one was acked")
        }
    }

    @Test
    fun `closing the client closes its subscriptions`() = runBlocking<Unit> {
        val client = testClient("cclose")
        val q = client.queue(uniqueName("cclose"))
        val sub = q.subscribe { }
        client.close()
        assertTrue(sub.isClosed)
        assertTrue(client.isClosed)
    }

    @Test
    fun `the JVM exits by itself after client and subscription are closed`() {
        val cp = System.getProperty("surefire.test.class.path") ?: System.getProperty("java.class.path")
        // This JVM's java, or redelay.test.java (scripts/arch-suites.sh sets its qemu wrapper:
        // under emulation a program cannot start java.home's binary itself).
        val java = System.getProperty("redelay.test.java") ?: File(System.getProperty("java.home"), "bin/java").path
        val log = File.createTempFile("redelay-exit-probe", ".log").apply { deleteOnExit() }
        val p = ProcessBuilder(java, "-cp", cp, "dev.redelay.ExitProbe", uniqueName("exit"))
            .redirectErrorStream(true)
            .redirectOutput(log)
            .start()
        val exited = p.waitFor(60, TimeUnit.SECONDS)
        if (!exited) p.destroyForcibly().waitFor(10, TimeUnit.SECONDS)
        val out = log.readText()
        assertTrue(exited, "the JVM did not exit within 60 s; output:\n$out")
        assertEquals(0, p.exitValue(), out)
        assertTrue(out.contains("probe: got hello"), out)
    }
}

/** Runs in a child JVM: a round trip, close, and return from main without System.exit. */
object ExitProbe {
    @JvmStatic
    fun main(args: Array<String>) {
        runBlocking {
            val client = Client.connect(redisUrl, ClientOptions(prefix = args[0]))
            val q = client.queue("probe")
            val got = CompletableDeferred<String>()
            val sub = q.subscribe(concurrency = 4) { got.complete(it.text) }
            q.publish("hello".encodeToByteArray(), delay = kotlin.time.Duration.parse("50ms"))
            println("probe: got " + withTimeout(10.seconds) { got.await() })
            sub.close()
            client.close()
        }
    }
}
