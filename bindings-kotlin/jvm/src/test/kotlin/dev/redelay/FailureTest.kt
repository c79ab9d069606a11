package dev.redelay

import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.Test
import java.time.Instant
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertNull
import kotlin.test.assertTrue
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlin.time.TimeSource

class FailureTest {
    @Test
    fun `a handler that throws nacks with its message and the message comes back`() = runBlocking<Unit> {
        testClient("throw", ClientOptions(defaultBackoff = Backoff(50.milliseconds, 100.milliseconds))).use { client ->
            val q = client.queue(uniqueName("throw"))
            val got = Channel<Delivery>(4)
            val sub = q.subscribe { msg ->
                got.send(msg)
                if (msg.attempt == 1) throw IllegalStateException("payment service down")
            }
            q.publish("pay".encodeToByteArray(), id = "pay-1")
            val first = withTimeout(10.seconds) { got.receive() }
            assertEquals(1, first.attempt)
            val second = withTimeout(10.seconds) { got.receive() }
            assertEquals(2, second.attempt)
            assertEquals("IllegalStateException: payment service down", second.lastError)
            eventually(what = "ack of the retry") { q.stats().total == 0L }
            // Settled by its subscription: its lease is gone, its deadline still readable.
            assertTrue(second.isSettled)
            assertTrue(second.leaseDeadline > second.deliveredAt)
            assertEquals(1, sub.counters.nacked)
            assertEquals(1, sub.counters.acked)
        }
    }

    @Test
    fun `an Error (not an Exception) nacks too and names its class when it has no message`() = runBlocking<Unit> {
        testClient("error", ClientOptions(defaultBackoff = Backoff(20.milliseconds, 40.milliseconds))).use { client ->
            val q = client.queue(uniqueName("error"))
            val got = Channel<Delivery>(4)
            q.subscribe { msg ->
                got.send(msg)
                if (msg.attempt == 1) throw AssertionError()
            }
            q.publish("x".encodeToByteArray())
            withTimeout(10.seconds) { got.receive() }
            val second = withTimeout(10.seconds) { got.receive() }
            assertEquals("AssertionError", second.lastError)
        }
    }

    @Test
    fun `RetryLater retries after its delay, not the backoff`() = runBlocking<Unit> {
        testClient("later", ClientOptions(defaultBackoff = Backoff(1.seconds * 3600, 1.seconds * 3600))).use { client ->
            val q = client.queue(uniqueName("later"))
            val got = Channel<Pair<Delivery, TimeSource.Monotonic.ValueTimeMark>>(4)
            q.subscribe { msg ->
                got.send(msg to TimeSource.Monotonic.markNow())
                if (msg.attempt == 1) throw RetryLater(300.milliseconds, "rate limited")
            }
            q.publish("x".encodeToByteArray())
            val (_, t1) = withTimeout(10.seconds) { got.receive() }
            val (second, t2) = withTimeout(10.seconds) { got.receive() }
            assertEquals(2, second.attempt)
            assertEquals("rate limited", second.lastError)
            val gap = t2 - t1
            assertTrue(gap >= 250.milliseconds, "retried after $gap") // the backoff would be an hour
        }
    }

    @Test
    fun `RetryLater takes the delay nack takes, by the core rule - a negative one is refused`() = runBlocking<Unit> {
        testClient("retry-rule").use { client ->
            val q = client.queue(uniqueName("retry-rule"))
            q.publish("x".encodeToByteArray(), id = "m")
            val m = q.fetch(1, wait = 5.seconds).single()
            for ((delay, got) in listOf((-5).seconds to "-5000", (3650 * 24 * 3600 + 1).seconds to "315360001000")) {
                val want = "retryIn: must be 0 to 3650 days, got $got ms"
                assertEquals(want, assertFailsWith<RedelayException.InvalidArgument> { RetryLater(delay) }.message)
                assertEquals(
                    want,
                    assertFailsWith<RedelayException.InvalidArgument> {
                        m.nack(retryIn = delay)
                    }.message,
                )
                val byId = assertFailsWith<RedelayException.InvalidArgument> { q.nack(m.id, m.token, retryIn = delay) }
                assertEquals(want, byId.message)
            }
            assertEquals(false, m.isSettled) // refused before anything was sent
            assertEquals(0.seconds, RetryLater(0.seconds).delay)
            assertEquals(false, m.nack(retryIn = 0.seconds))
        }
    }

    @Test
    fun `RetryLater with a negative delay is a failure naming it, retried after the backoff`() = runBlocking<Unit> {
        testClient(
            "later-neg",
            ClientOptions(defaultBackoff = Backoff(50.milliseconds, 50.milliseconds)),
        ).use { client ->
            val q = client.queue(uniqueName("later-neg"))
            val got = Channel<Pair<Int, String?>>(4)
            q.subscribe { msg ->
                got.send(msg.attempt to msg.lastError)
                if (msg.attempt == 1) throw RetryLater((-5).seconds, "deadline passed")
            }
            q.publish("x".encodeToByteArray())
            val seen = List(2) { withTimeout(10.seconds) { got.receive() } }
            val reason = "InvalidArgument: retryIn: must be 0 to 3650 days, got -5000 ms"
            assertEquals(listOf(1 to null, 2 to reason), seen)
        }
    }

    @Test
    fun `out of attempts goes to the dead letters, which respawn and purge`() = runBlocking<Unit> {
        testClient("dead").use { client ->
            val q = client.queue(uniqueName("dead"))
            val sub = q.subscribe { throw RuntimeException("bad payload") }
            q.publish("a".encodeToByteArray(), id = "d-a", maxAttempts = 1)
            q.publish("b".encodeToByteArray(), id = "d-b", maxAttempts = 1)
            eventually(what = "two dead letters") { q.stats().dead == 2L }
            sub.close()
            val dead = q.deadLetters(limit = 10)
            assertEquals(setOf("d-a", "d-b"), dead.map { it.id }.toSet())
            assertTrue(dead.all { it.state == MessageState.DEAD && it.lastError == "RuntimeException: bad payload" })
            assertTrue(dead.all { it.diedAt != null && it.leaseDeadline == null })
            assertTrue(dead.all { it.diedAt!! >= it.publishedAt && it.diedAt!! <= Instant.now().plusSeconds(60) })
            assertEquals(1, q.respawn(Select.Ids(listOf("d-a"))))
            val back = q.peek("d-a")!!
            assertEquals(MessageState.READY, back.state)
            assertEquals(0, back.attempts)
            assertEquals(1, q.purgeDead(Select.All))
            assertNull(q.peek("d-b"))
            assertEquals(0, q.stats().dead)
            assertEquals(0, q.respawn(Select.Oldest(5)))
            assertTrue(q.verify().isOk)
        }
    }

    @Test
    fun `a respawn can give a fresh expiry counted from the respawn`() = runBlocking<Unit> {
        testClient("respawn-expiry").use { client ->
            val q = client.queue(uniqueName("respawn-expiry"))
            q.publish("x".encodeToByteArray(), id = "e", maxAttempts = 1, expiresIn = 3600.seconds)
            assertTrue(q.fetch(1, 2.seconds).single().nack(null, "boom"))
            val before = Instant.now()
            assertEquals(1, q.respawn(Select.Ids(listOf("e")), expiresIn = 60.seconds))
            val after = Instant.now()
            // Counted from the respawn by the Redis clock (this machine's): within a second.
            val at = q.peek("e")!!.expiresAt!!
            assertTrue(
                at >= before.plusSeconds(59) && at <= after.plusSeconds(61),
                "$at not 60 s after $before..$after",
            )
            val e = assertFailsWith<RedelayException.InvalidArgument> { q.respawn(Select.All, expiresIn = 0.seconds) }
            assertTrue(e.message!!.contains("expiresIn"), e.message)
            // Dead again: a respawn may clear the expiry, and a bulk respawn takes the same choices.
            assertTrue(q.fetch(1, 2.seconds).single().nack(null, "boom"))
            assertEquals(1, q.respawn(Select.Ids(listOf("e")), clearExpiry = true))
            assertNull(q.peek("e")!!.expiresAt)
            assertTrue(q.fetch(1, 2.seconds).single().nack(null, "boom"))
            assertEquals(1, q.bulk(BulkAction.RESPAWN, ids = listOf("e"), expiresIn = 120.seconds).done)
            assertTrue(q.peek("e")!!.expiresAt!! >= before.plusSeconds(119))
            val both = assertFailsWith<RedelayException.InvalidArgument> {
                q.respawn(Select.All, expiresIn = 60.seconds, clearExpiry = true)
            }
            assertTrue(both.message!!.contains("expiresIn/clearExpiry"), both.message)
        }
    }

    @Test
    fun `a handler may settle the message itself`() = runBlocking<Unit> {
        testClient("manual").use { client ->
            val q = client.queue(uniqueName("manual"))
            val dead = Channel<Boolean>(1)
            val sub = q.subscribe { msg ->
                dead.send(msg.nack(reason = "manual nack"))
                // Settled already: returning normally must not ack it.
            }
            q.publish("x".encodeToByteArray(), id = "m-1", maxAttempts = 1)
            assertEquals(true, withTimeout(10.seconds) { dead.receive() })
            eventually(what = "dead") { q.stats().dead == 1L }
            sub.close()
            assertEquals("manual nack", q.peek("m-1")!!.lastError)
            assertEquals(0, sub.counters.acked)
        }
    }
}
