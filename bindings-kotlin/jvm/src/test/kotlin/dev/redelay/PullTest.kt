package dev.redelay

import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import java.util.concurrent.CountDownLatch
import java.util.concurrent.Executors
import kotlin.test.assertEquals
import kotlin.test.assertFalse
import kotlin.test.assertTrue
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlin.time.TimeSource
import java.time.Duration as JavaDuration

class PullTest {
    @Test
    fun `fetch leases messages and ack, nack, extend settle them`() = runBlocking<Unit> {
        testClient("fetch").use { client ->
            val q = client.queue(uniqueName("fetch"))
            assertEquals(emptyList(), q.fetch(10))
            q.publishBatch((1..3).map { Message("m$it".encodeToByteArray(), id = "f$it") })
            val got = q.fetch(10)
            assertEquals(listOf("f1", "f2", "f3"), got.map { it.id })
            assertEquals(3, q.stats().leased)

            got[0].ack()
            assertTrue(got[0].isSettled)
            assertThrows<RedelayException.LeaseLost> { runBlocking { got[0].ack() } }

            val before = got[1].leaseDeadline
            got[1].extend(60.seconds)
            assertTrue(got[1].leaseDeadline.isAfter(before), "extended lease")
            assertFalse(got[1].nack(retryIn = 0.milliseconds, reason = "again"))

            // settle by id and token
            q.ack(got[2].id, got[2].token)
            assertThrows<RedelayException.LeaseLost> { runBlocking { q.ack(got[2].id, got[2].token) } }

            val released = q.fetch(10, wait = 2.seconds).single()
            q.release(released.id, released.token)
            assertThrows<RedelayException.LeaseLost> { runBlocking { q.release(released.id, released.token) } }
            val again = q.fetch(10, wait = 2.seconds)
            assertEquals(listOf("f2"), again.map { it.id })
            assertEquals(2, again[0].attempt) // the release counted no attempt
            assertEquals("again", again[0].lastError)
            q.extend(again[0].id, again[0].token, 5.seconds)
            assertFalse(q.nack(again[0].id, again[0].token, retryIn = 1.seconds * 3600, reason = "later"))
            assertEquals(1, q.stats().scheduled)
            assertTrue(q.verify().isOk)
        }
    }

    @Test
    fun `fetch waits for a message that becomes due`() = runBlocking<Unit> {
        testClient("wait").use { client ->
            val q = client.queue(uniqueName("wait"))
            q.publish("soon".encodeToByteArray(), delay = 300.milliseconds)
            val t = TimeSource.Monotonic.markNow()
            val got = q.fetch(1, wait = 30.seconds)
            val waited = t.elapsedNow()
            assertEquals(1, got.size)
            // Waited for the due time, and returned with it rather than at the end of the wait
            // (the upper bound is loose on purpose: a busy machine must not fail it).
            assertTrue(waited >= 250.milliseconds && waited < 20.seconds, "waited $waited")
            got[0].ack()
            val none = q.fetch(1, wait = 100.milliseconds)
            assertEquals(0, none.size)
        }
    }

    @Test
    fun `fetch with a ttr leases for that long and an expired lease is delivered again`() = runBlocking<Unit> {
        testClient("ttr").use { client ->
            val q = client.queue(uniqueName("ttr"))
            q.publish("x".encodeToByteArray(), id = "t1")
            val first = q.fetch(1, ttr = 200.milliseconds)
            assertEquals(1, first.size)
            val again = q.fetch(1, wait = 5.seconds)
            assertEquals(1, again.size)
            assertEquals(2, again[0].attempt)
            assertThrows<RedelayException.LeaseLost> { runBlocking { first[0].ack() } }
            again[0].ack()
        }
    }

    @Test
    fun `messages flow pulls deliveries`() = runBlocking<Unit> {
        testClient("flow").use { client ->
            val q = client.queue(uniqueName("flow"))
            q.publishBatch((1..5).map { Message("m$it".encodeToByteArray(), id = "fl$it") })
            val got = q.messages(batch = 2).take(3).toList()
            assertEquals(listOf("fl1", "fl2", "fl3"), got.map { it.id })
            got.forEach { it.ack() }
            // fl4 was fetched with fl3 but not emitted: handed back, due now.
            val s = q.stats()
            assertEquals(0, s.leased)
            assertEquals(2, s.total)
            val rest = mutableListOf<Delivery>()
            eventually(what = "fl4 and fl5") {
                rest += q.fetch(10, wait = 1.seconds)
                rest.size >= 2
            }
            assertEquals(setOf("fl4", "fl5"), rest.map { it.id }.toSet())
            // Released, not nacked: the attempt it was never shown is not counted.
            assertEquals(listOf(1, 1), rest.map { it.attempt })
            rest.forEach { it.ack() }
            assertEquals(0, q.stats().total)
        }
    }

    @Test
    fun `a messages flow cancelled after its call for the next message finished releases it`() = runBlocking<Unit> {
        testClient("flow-cancelled").use { client ->
            val q = client.queue(uniqueName("flow-cancelled"))
            cancelledAfterTheCall(q) { q.messages(wait = 10.seconds).take(1).toList() }
        }
    }

    @Test
    fun `messages refuses a bad batch or wait naming the field and the limit`() = runBlocking<Unit> {
        testClient("flow-bad").use { client ->
            val q = client.queue(uniqueName("flow-bad"))
            val batch =
                assertThrows<RedelayException.InvalidArgument> { runBlocking { q.messages(batch = 0).toList() } }
            assertEquals("batch: must be 1 to 1000, got 0", batch.message)
            val wait =
                assertThrows<RedelayException.InvalidArgument> {
                    runBlocking { q.messages(wait = Duration.ZERO).toList() }
                }
            assertTrue(wait.message!!.startsWith("wait: must be 10 ms to 3650 days"), wait.message)
        }
    }

    @Test
    fun `a fetch whose coroutine is cancelled after its call finished releases what it leased`() = runBlocking<Unit> {
        testClient("fetch-cancelled").use { client ->
            val q = client.queue(uniqueName("fetch-cancelled"))
            cancelledAfterTheCall(q) { q.fetch(1, wait = 10.seconds) }
        }
    }

    @Test
    fun `client fetch pulls from the first of several queues that has due messages`() = runBlocking<Unit> {
        testClient("fetch-first").use { client ->
            val high = client.queue(uniqueName("high"), shards = 4)
            val low = client.queue(uniqueName("low"))
            val names = listOf(high.name, low.name)
            assertEquals(emptyList(), client.fetch(names, 10))
            low.publishBatch((1..2).map { Message("l$it".encodeToByteArray(), id = "l$it") })
            high.publishBatch((1..3).map { Message("h$it".encodeToByteArray(), id = "h$it") })

            // The sharded queue is opened with its stored shard count: all of its shards are seen.
            val first = client.fetch(names, 10)
            assertEquals(setOf("h1", "h2", "h3"), first.map { it.id }.toSet())
            assertEquals(listOf(high.name), first.map { it.queue }.distinct())
            assertEquals(3, high.stats().leased)
            assertEquals(0, low.stats().leased)
            first.forEach { it.ack() }

            val second = client.fetch(names, 10)
            assertEquals(listOf("l1", "l2"), second.map { it.id })
            assertEquals(listOf(low.name, low.name), second.map { it.queue })
            second[0].ack()
            low.ack(second[1].id, second[1].token)

            // max bounds one call; the next high-priority message comes before the low one.
            high.publishBatch((4..6).map { Message("h$it".encodeToByteArray(), id = "h$it") })
            low.publish("l3".encodeToByteArray(), id = "l3")
            val two = client.fetch(names, 2)
            assertEquals(2, two.size)
            assertEquals(listOf(high.name), two.map { it.queue }.distinct())
            val rest = client.fetch(names)
            assertEquals(high.name, rest.single().queue)
            assertEquals(setOf("h4", "h5", "h6"), (two + rest).map { it.id }.toSet())
            (two + rest).forEach { it.ack() }
            assertEquals(listOf("l3"), client.fetch(names, 10).onEach { it.ack() }.map { it.id })

            assertEquals(emptyList(), client.fetch(names, 10))
            assertEquals(0, high.stats().total + low.stats().total)
            assertTrue(high.verify().isOk)
            assertTrue(low.verify().isOk)
        }
    }

    @Test
    fun `client fetch waits for a message published meanwhile to any of its queues`() = runBlocking<Unit> {
        testClient("fetch-first-wait").use { client ->
            val high = client.queue(uniqueName("high"), shards = 4)
            val low = client.queue(uniqueName("low"))
            high.publish("later".encodeToByteArray(), id = "later", delay = 1.seconds * 3600)
            val fetching = async { client.fetch(listOf(high.name, low.name), 10, wait = 30.seconds) }
            delay(300)
            assertFalse(fetching.isCompleted, "the fetch returned before anything was due")
            low.publish("now".encodeToByteArray(), id = "now")
            val got = fetching.await()
            assertEquals(listOf("now"), got.map { it.id })
            assertEquals(low.name, got.single().queue)
            got.single().ack()

            // A message that becomes due while the call waits.
            low.publish("soon".encodeToByteArray(), id = "soon", delay = 300.milliseconds)
            val t = TimeSource.Monotonic.markNow()
            val soon = client.fetch(listOf(high.name, low.name), wait = 30.seconds)
            assertTrue(t.elapsedNow() >= 250.milliseconds, "returned after ${t.elapsedNow()}")
            assertEquals(listOf("soon"), soon.map { it.id })
            soon.single().ack()
            assertEquals(1, high.stats().scheduled)
        }
    }

    @Test
    fun `client fetch with a ttr leases for that long`() = runBlocking<Unit> {
        testClient("fetch-first-ttr").use { client ->
            val a = client.queue(uniqueName("a"))
            val b = client.queue(uniqueName("b"), shards = 4)
            b.publish("x".encodeToByteArray(), id = "t1", ttr = 60.seconds)
            // The lease runs from the delivery (Redis clock; deliveredAt has µs, the deadline ms).
            fun lease(d: Delivery) = JavaDuration.between(d.deliveredAt, d.leaseDeadline).toMillis()
            val own = client.fetch(listOf(a.name, b.name)).single()
            assertTrue(lease(own) in 59_950L..60_000L, "the message's own ttr: ${lease(own)} ms")
            own.release()

            val leased = client.fetch(listOf(a.name, b.name), ttr = 5.seconds).single()
            assertTrue(lease(leased) in 4_950L..5_000L, "the ttr given: ${lease(leased)} ms")
            assertEquals(1, b.stats().leased)
            leased.release()

            // A short lease runs out and the message is delivered again.
            val first = client.fetch(listOf(a.name, b.name), ttr = 200.milliseconds).single()
            val again = client.fetch(listOf(a.name, b.name), wait = 10.seconds).single()
            assertEquals("t1", again.id)
            assertEquals(2, again.attempt)
            assertThrows<RedelayException.LeaseLost> { runBlocking { first.ack() } }
            again.ack()
        }
    }

    @Test
    fun `client fetch refuses a bad argument naming it`() = runBlocking<Unit> {
        testClient("fetch-first-bad").use { client ->
            val names = listOf(uniqueName("a"), uniqueName("b"))
            suspend fun refused(field: String, call: suspend () -> Unit) {
                val e = assertThrows<RedelayException.InvalidArgument> { runBlocking { call() } }
                assertTrue(e.message!!.startsWith("$field:"), "expected $field: ..., got ${e.message}")
            }
            refused("queues") { client.fetch(emptyList()) }
            refused("queues") { client.fetch(listOf(names[0], names[0])) }
            refused("queues") { client.fetch((0..100).map { "q$it" }) }
            refused("queue name") { client.fetch(listOf(names[0], "no spaces")) }
            refused("max") { client.fetch(names, 0) }
            refused("max") { client.fetch(names, 1001) }
            refused("max") { client.fetch(names, -1) }
            refused("wait") { client.fetch(names, wait = (-1).milliseconds) }
            refused("wait") { client.fetch(names, wait = Duration.INFINITE) }
            refused("ttr") { client.fetch(names, ttr = (-1).milliseconds) }
            refused("ttr") { client.fetch(names, ttr = 1.milliseconds) }
        }
    }

    @Test
    fun `a client fetch whose coroutine is cancelled after its call finished releases what it leased`() =
        runBlocking<Unit> {
            testClient("fetch-first-cancelled").use { client ->
                val other = client.queue(uniqueName("other"))
                val q = client.queue(uniqueName("fetch-first-cancelled"), shards = 4)
                q.publish("stored".encodeToByteArray(), id = "stored")
                q.fetch(1).single().ack() // the shard count is stored now
                cancelledAfterTheCall(q) { client.fetch(listOf(other.name, q.name), wait = 10.seconds) }
            }
        }

    /**
     * Starts [fetch] (waiting on the empty [q]) in a coroutine on a thread of its own, holds that
     * thread, publishes a message the fetch leases, cancels the coroutine after the call finished
     * (it cannot resume: its thread is held), and checks the message is back, due now, with no
     * attempt counted — not held by nobody for its 60 s ttr.
     */
    private suspend fun CoroutineScope.cancelledAfterTheCall(q: Queue, fetch: suspend () -> List<Delivery>) {
        val executor = Executors.newSingleThreadExecutor()
        try {
            val fetching = launch(executor.asCoroutineDispatcher()) { fetch() }
            val (holding, hold) = CountDownLatch(1) to CountDownLatch(1)
            executor.execute {
                holding.countDown()
                hold.await()
            }
            holding.await()
            q.publish("m".encodeToByteArray(), id = "m", ttr = 60.seconds)
            eventually(what = "the fetch leased the message") { q.stats().leased == 1L }
            delay(300) // the reply reaches the binding meanwhile and the call finishes
            fetching.cancel()
            hold.countDown()
            fetching.join()
            eventually(what = "the message is back, due now") { q.stats().ready == 1L }
            val again = q.fetch(1).single()
            assertEquals(1, again.attempt, "no attempt counted")
            again.ack()
        } finally {
            executor.shutdown()
        }
    }
}
