package dev.redelay

import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.Test
import java.time.Instant
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger
import kotlin.test.assertContentEquals
import kotlin.test.assertEquals
import kotlin.test.assertNotNull
import kotlin.test.assertNull
import kotlin.test.assertTrue
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlin.time.TimeSource

class RoundTripTest {
    @Test
    fun `publish and subscribe round trip carries every field`() = runBlocking<Unit> {
        testClient("rt").use { client ->
            val q = client.queue(uniqueName("rt"))
            val got = Channel<Delivery>(1)
            val body = byteArrayOf(0, 1, 2, -1, 127, -128)
            val sub = q.subscribe(concurrency = 2) { msg -> got.send(msg) }
            val p = q.publish(body, id = "order-7", headers = mapOf("k" to "v", "trace" to "abc"), maxAttempts = 3)
            assertEquals("order-7", p.id)
            assertEquals(PublishStatus.STORED, p.status)
            val d = withTimeout(10.seconds) { got.receive() }
            assertEquals("order-7", d.id)
            assertEquals(q.name, d.queue)
            assertContentEquals(body, d.body)
            assertEquals(mapOf("k" to "v", "trace" to "abc"), d.headers)
            assertEquals(1, d.attempt)
            assertEquals(3, d.maxAttempts)
            assertNull(d.lastError)
            assertTrue(!d.deliveredAt.isBefore(d.dueAt), "deliveredAt ${d.deliveredAt} before dueAt ${d.dueAt}")
            assertTrue(!d.dueAt.isBefore(d.publishedAt))
            assertTrue(d.lateness < 10.seconds, "lateness ${d.lateness}") // loose: a busy machine must not fail it
            assertTrue(d.token.isNotEmpty())
            eventually(what = "ack") { q.stats().total == 0L }
            assertEquals(1, sub.counters.acked)
            sub.close()
            assertTrue(sub.isClosed)
            assertTrue(q.verify().isOk)
        }
    }

    @Test
    fun `a delayed message is not delivered before its due time`() = runBlocking<Unit> {
        testClient("delay").use { client ->
            val q = client.queue(uniqueName("delay"))
            val got = Channel<Delivery>(1)
            q.subscribe { got.send(it) }
            val start = TimeSource.Monotonic.markNow()
            q.publish("later".encodeToByteArray(), delay = 400.milliseconds)
            val s = q.stats()
            assertEquals(1, s.scheduled)
            assertNotNull(s.nextDue)
            val d = withTimeout(10.seconds) { got.receive() }
            val waited = start.elapsedNow()
            assertEquals("later", d.text)
            assertTrue(waited >= 380.milliseconds, "delivered after $waited")
            assertTrue(d.lateness < 500.milliseconds, "late by ${d.lateness}")
        }
    }

    @Test
    fun `publish at an Instant sets the due time`() = runBlocking<Unit> {
        testClient("at").use { client ->
            val q = client.queue(uniqueName("at"))
            val at = Instant.ofEpochMilli(Instant.now().plusSeconds(3600).toEpochMilli())
            val p = q.publish("x".encodeToByteArray(), at = at)
            val info = assertNotNull(q.peek(p.id))
            assertEquals(MessageState.SCHEDULED, info.state)
            assertEquals(at, info.dueAt)
            assertTrue(p.id.all(Char::isDigit), "generated id ${p.id}")
        }
    }

    @Test
    fun `publishBatch stores all in order and reports duplicates`() = runBlocking<Unit> {
        testClient("batch").use { client ->
            val q = client.queue(uniqueName("batch"))
            val msgs = (0 until 2500).map {
                Message("m$it".encodeToByteArray(), id = "id-$it", delay = 1.seconds * 3600)
            }
            val res = q.publishBatch(msgs)
            assertEquals(2500, res.size)
            assertEquals((0 until 2500).map { "id-$it" }, res.map { it.id })
            assertTrue(res.all { it.status == PublishStatus.STORED })
            assertEquals(2500, q.stats().scheduled)
            val again = q.publishBatch(
                listOf(
                    Message("dup".encodeToByteArray(), id = "id-7"),
                    Message("new".encodeToByteArray(), id = "id-new"),
                ),
            )
            assertEquals(listOf(PublishStatus.DUPLICATE, PublishStatus.STORED), again.map { it.status })
            assertTrue(again[0].isDuplicate)
            val replaced = q.publish("r".encodeToByteArray(), id = "id-7", replace = true)
            assertEquals(PublishStatus.REPLACED, replaced.status)
            assertEquals("r", q.peek("id-7")!!.text)
            assertEquals(emptyList(), q.publishBatch(emptyList()))
            assertTrue(q.verify().isOk)
        }
    }

    @Test
    fun `concurrency bounds the handlers running at once`() = runBlocking<Unit> {
        testClient("conc").use { client ->
            val q = client.queue(uniqueName("conc"))
            val running = AtomicInteger()
            val peak = AtomicInteger()
            val seen = ConcurrentHashMap.newKeySet<String>()
            q.publishBatch((0 until 12).map { Message("x".encodeToByteArray(), id = "c$it") })
            val sub = q.subscribe(concurrency = 3) { msg ->
                val now = running.incrementAndGet()
                peak.accumulateAndGet(now, ::maxOf)
                kotlinx.coroutines.delay(60)
                running.decrementAndGet()
                seen.add(msg.id)
            }
            eventually(what = "12 handled") { seen.size == 12 }
            sub.close()
            assertEquals(3, peak.get(), "peak concurrency")
            assertEquals(12, sub.counters.acked)
        }
    }
}
