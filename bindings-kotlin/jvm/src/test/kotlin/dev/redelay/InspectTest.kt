package dev.redelay

import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import java.time.Instant
import kotlin.test.assertEquals
import kotlin.test.assertFalse
import kotlin.test.assertNull
import kotlin.test.assertTrue
import kotlin.time.Duration.Companion.hours
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

class InspectTest {
    @Test
    fun `peek, cancel, reschedule and stats`() = runBlocking<Unit> {
        testClient("insp").use { client ->
            val q = client.queue(uniqueName("insp"))
            q.publish("a".encodeToByteArray(), id = "a", delay = 1.hours, headers = mapOf("h" to "1"), ttr = 5.seconds)
            q.publish("b".encodeToByteArray(), id = "b")
            val a = q.peek("a")!!
            assertEquals(MessageState.SCHEDULED, a.state)
            assertEquals("a", a.text)
            assertEquals(mapOf("h" to "1"), a.headers)
            assertEquals(5.seconds, a.ttr)
            assertEquals(0, a.attempts)
            assertEquals(MessageState.READY, q.peek("b")!!.state)
            assertNull(q.peek("zzz"))

            val s = q.stats()
            assertEquals(2, s.total)
            assertEquals(1, s.scheduled)
            assertEquals(1, s.ready)
            assertEquals(a.dueAt, s.nextDue)
            assertTrue(s.now.isAfter(Instant.parse("2020-01-01T00:00:00Z")))

            val due = q.reschedule("a", at = Instant.now().minusSeconds(1))
            assertTrue(due.isBefore(Instant.now().plusSeconds(1)))
            val due2 = q.reschedule("a", 2.hours)
            assertTrue(due2.isAfter(Instant.now().plusSeconds(3600)))

            val leased = q.fetch(1)
            assertEquals("b", leased.single().id)
            assertThrows<RedelayException.InvalidArgument> { runBlocking { q.reschedule("b", 1.seconds) } }
            assertEquals(MessageState.LEASED, q.peek("b")!!.state)
            val info = q.peek("b")!!
            assertEquals(null, info.diedAt)
            // The lease deadline of the stored record is the fetched delivery's.
            val gap = leased[0].leaseDeadline.toEpochMilli() - info.leaseDeadline!!.toEpochMilli()
            assertTrue(kotlin.math.abs(gap) < 2000, "lease deadlines differ by $gap ms")

            assertTrue(q.cancel("a"))
            assertFalse(q.cancel("a"))
            assertTrue(q.cancel("b"))
            assertThrows<RedelayException.LeaseLost> { runBlocking { leased[0].ack() } }
            assertEquals(0, q.stats().total)
            val v = q.verify()
            assertTrue(v.isOk, v.problems.joinToString())
        }
    }

    @Test
    fun `stats count a lapsed lease until a fetch takes it back`() = runBlocking<Unit> {
        testClient("lapsed").use { client ->
            val q = client.queue(uniqueName("lapsed"))
            q.publish("dies".encodeToByteArray())
            val m = q.fetch(1, ttr = 100.milliseconds).single()
            var s = q.stats()
            // The consumer is gone: wait out its lease on Redis' clock.
            while (!s.now.isAfter(m.leaseDeadline)) {
                delay(20)
                s = q.stats()
            }
            assertEquals(listOf(1L, 1L, 1L), listOf(s.total, s.leased, s.lapsed))
            val again = q.fetch(1, ttr = 600.seconds).single()
            assertEquals(2, again.attempt)
            s = q.stats()
            assertEquals(listOf(1L, 1L, 0L), listOf(s.total, s.leased, s.lapsed))
        }
    }

    @Test
    fun `client lists queues and pings`() = runBlocking<Unit> {
        testClient("list").use { client ->
            val names = listOf(uniqueName("l1"), uniqueName("l2"))
            for (n in names) client.queue(n).publish("x".encodeToByteArray())
            client.ping()
            assertEquals(names.sorted(), client.queues())
            assertTrue(client.prefix.startsWith("kt-p-list-"))
            val q = client.queue(names[0])
            q.destroy()
            assertEquals(0, q.stats().total)
            assertEquals(listOf(names[1]), client.queues())
        }
    }
}
