package dev.redelay

import kotlinx.coroutines.asCoroutineDispatcher
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
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlin.time.TimeSource

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
            val got = q.fetch(1, wait = 5.seconds)
            val waited = t.elapsedNow()
            assertEquals(1, got.size)
            assertTrue(waited >= 250.milliseconds && waited < 3.seconds, "waited $waited")
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
    fun `a fetch whose coroutine is cancelled after its call finished releases what it leased`() = runBlocking<Unit> {
        testClient("fetch-cancelled").use { client ->
            val q = client.queue(uniqueName("fetch-cancelled"))
            val executor = Executors.newSingleThreadExecutor()
            try {
                val fetching = launch(executor.asCoroutineDispatcher()) { q.fetch(1, wait = 10.seconds) }
                // The fetch's one thread is held from now on (the fetch waits on an empty queue
                // meanwhile), so the call, once it has leased, cannot resume the coroutine.
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
                // Released, not held by nobody for the 60 s ttr.
                eventually(what = "the message is back, due now") { q.stats().ready == 1L }
                val again = q.fetch(1).single()
                assertEquals(1, again.attempt, "no attempt counted")
                again.ack()
            } finally {
                executor.shutdown()
            }
        }
    }
}
