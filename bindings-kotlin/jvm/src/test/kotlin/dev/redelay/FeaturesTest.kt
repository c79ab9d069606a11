package dev.redelay

import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import java.time.Instant
import java.util.Collections
import kotlin.test.assertContains
import kotlin.test.assertEquals
import kotlin.test.assertFalse
import kotlin.test.assertNotNull
import kotlin.test.assertNull
import kotlin.test.assertTrue
import kotlin.time.Duration.Companion.hours
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.minutes
import kotlin.time.Duration.Companion.seconds

/** Issue 15 in Kotlin: expiry, pause, several queues, history, upcoming, list, search. */
class FeaturesTest {
    private fun bad(field: String, block: suspend () -> Unit) {
        val e = assertThrows<RedelayException.InvalidArgument> { runBlocking { block() } }
        assertContains(e.message!!, field)
    }

    @Test
    fun `expiry - an expired message is never delivered, it dies or is dropped`() = runBlocking<Unit> {
        testClient("exp").use { client ->
            val q = client.queue(uniqueName("exp"))
            q.publish("x".encodeToByteArray(), id = "dies", expiresIn = 200.milliseconds)
            q.publish("x".encodeToByteArray(), id = "drops", expiresIn = 200.milliseconds, dropOnExpiry = true)
            val at = Instant.now().plusSeconds(3600)
            q.publishBatch(listOf(Message("y".encodeToByteArray(), id = "later", expiresAt = at)))
            assertNotNull(q.peek("later")!!.expiresAt)
            q.publish(
                "z".encodeToByteArray(),
                PublishOptions(id = "opts", delay = 1.hours, expiresAt = at.plusSeconds(1)),
            )
            assertEquals(at.plusSeconds(1).toEpochMilli(), q.peek("opts")!!.expiresAt!!.toEpochMilli())
            delay(500) // past both expiries (by any clock)
            val later = q.fetch(10, 500.milliseconds)
            assertEquals(listOf("later"), later.map { it.id }) // "opts" is not due
            assertEquals(at.toEpochMilli(), later.single().expiresAt!!.toEpochMilli()) // a delivery knows its expiry
            q.publish("w".encodeToByteArray(), id = "forever")
            assertNull(q.fetch(1, 2.seconds).single().expiresAt)
            val dead = q.deadLetters()
            assertEquals(listOf("dies"), dead.map { it.id })
            assertContains(dead.single().lastError!!, "expired")
            assertNull(q.peek("drops"))

            // The core refuses bad combinations, naming the field.
            bad("expiresIn") { q.publish("x".encodeToByteArray(), delay = 1.hours, expiresIn = 1.minutes) }
            bad("expiresIn/expiresAt") {
                q.publish("x".encodeToByteArray(), expiresIn = 1.hours, expiresAt = at)
            }
            bad("expiresIn") { q.publish("x".encodeToByteArray(), expiresIn = (-1).milliseconds) }
        }
    }

    @Test
    fun `pause and resume a queue`() = runBlocking<Unit> {
        testClient("pause").use { client ->
            val q = client.queue(uniqueName("pause"))
            assertTrue(q.pause())
            assertFalse(q.pause())
            assertTrue(q.stats().paused)
            val got = Collections.synchronizedList(mutableListOf<String>())
            val sub = q.subscribe { got.add(it.id) }
            q.publish("x".encodeToByteArray(), id = "p1") // publishes go on
            delay(500)
            assertEquals(emptyList(), got.toList(), "a paused queue delivered")
            assertTrue(q.resume())
            assertFalse(q.resume())
            assertFalse(q.stats().paused)
            eventually(what = "delivery after resume") { got.toList() == listOf("p1") }
            sub.close()
        }
    }

    @Test
    fun `one subscription over several queues, by priority or weights`() = runBlocking<Unit> {
        testClient("many").use { client ->
            val (a, b) = listOf(client.queue(uniqueName("a")), client.queue(uniqueName("b")))
            for (i in 1..3) {
                b.publish("b$i".encodeToByteArray())
                a.publish("a$i".encodeToByteArray())
            }
            val got = Collections.synchronizedList(mutableListOf<String>())
            val one = SubscribeOptions(concurrency = 1, prefetch = 0)
            val sub = client.subscribe(listOf(a, b), options = one) { got.add("${it.queue}:${it.text}") }
            eventually(what = "six deliveries") { got.size == 6 }
            sub.close()
            // Strict priority: every message of the first queue before any of the second.
            assertEquals(listOf(a.name, a.name, a.name, b.name, b.name, b.name), got.map { it.substringBefore(":") })
            assertEquals(setOf("a1", "a2", "a3"), got.take(3).map { it.substringAfter(":") }.toSet())

            a.publish("w".encodeToByteArray())
            b.publish("w".encodeToByteArray())
            val weighted = Collections.synchronizedList(mutableListOf<String>())
            val w = client.subscribe(listOf(a, b), weights = listOf(5, 1)) { weighted.add(it.queue) }
            assertEquals(listOf(a.name, b.name), w.queues)
            eventually(what = "weighted deliveries") { weighted.size == 2 }
            w.close()
            assertEquals(setOf(a.name, b.name), weighted.toSet())

            bad("weight") { client.subscribe(listOf(a, b), weights = listOf(0, 1)) { } }
            bad("weights") { client.subscribe(listOf(a, b), weights = listOf(1)) { } }
            bad("queues") { client.subscribe(listOf(a, a)) { } }
        }
    }

    @Test
    fun `fetch without max leases the core's default, one`() = runBlocking<Unit> {
        testClient("fetchdef").use { client ->
            val q = client.queue(uniqueName("fetchdef"))
            for (id in listOf("a", "b", "c")) q.publish("x".encodeToByteArray(), id = id)
            assertEquals(listOf("a"), q.fetch().map { it.id })
            assertEquals(listOf("b"), client.fetch(listOf(q.name)).map { it.id })
            assertEquals(listOf("c"), q.fetch(10, 100.milliseconds).map { it.id })
        }
    }

    @Test
    fun `history per minute, totals, and switching it off`() = runBlocking<Unit> {
        testClient("hist").use { client ->
            val q = client.queue(uniqueName("hist"))
            for (i in 1..3) q.publish("h".encodeToByteArray())
            for (d in q.fetch(2)) d.ack()
            val now = Instant.now()
            val points = q.history(now.minusSeconds(300), now.plusSeconds(60), Step.MINUTE)
            assertEquals(3, points.sumOf { it.published })
            assertEquals(2, points.sumOf { it.delivered })
            assertEquals(2, points.sumOf { it.acked })
            assertEquals(2, points.sumOf { p -> p.lateness.sum() })
            // By UTC day: each point at a midnight, summing its hours.
            val days = q.history(now.minusSeconds(2 * 86400), now, Step.DAY)
            assertEquals(3, days.size)
            assertEquals(3, days.sumOf { it.published })
            assertTrue(days.all { it.at.epochSecond % 86400 == 0L })
            val totals = q.historyTotals()
            assertEquals(3, totals.published)
            assertEquals(16, totals.lateness.size)

            assertTrue(q.setHistory(false))
            assertFalse(q.setHistory(false))
            q.publish("h".encodeToByteArray())
            assertEquals(3, q.historyTotals().published)
            assertTrue(q.setHistory(true))
            bad("until") { q.history(now, now.minusSeconds(3600), Step.HOUR) }
        }
    }

    @Test
    fun `upcoming, list and search`() = runBlocking<Unit> {
        testClient("insp2").use { client ->
            val q = client.queue(uniqueName("insp2"))
            q.publish("find the needle".encodeToByteArray(), id = "ord-1", delay = 30.minutes)
            q.publish("b".encodeToByteArray(), id = "ord-2", delay = 40.minutes, headers = mapOf("tenant" to "acme"))
            q.publish("c".encodeToByteArray(), id = "x-3", delay = 90.minutes)
            q.publish("d".encodeToByteArray(), id = "now")

            val up = q.upcoming(Instant.now().plusSeconds(60), 1.hours, 3)
            assertEquals(listOf(2L, 1L, 0L), up.map { it.count })
            bad("buckets") { q.upcoming(Instant.now(), 1.hours, 0) }

            val page = q.list(MessageState.SCHEDULED, 0, 2)
            assertEquals(3, page.total)
            assertEquals(listOf("ord-1", "ord-2"), page.items.map { it.id })
            assertEquals(listOf("now"), q.list(MessageState.READY, 0, 10).items.map { it.id })
            // offset and limit default to the core's (0 and 100), as in Python and Node.
            assertEquals(listOf("now"), q.list(MessageState.READY).items.map { it.id })
            assertEquals(listOf("ord-1", "ord-2", "x-3"), q.list(MessageState.SCHEDULED).items.map { it.id })
            assertEquals(listOf("x-3"), q.list(MessageState.SCHEDULED, offset = 2).items.map { it.id })
            bad("limit") { q.list(MessageState.DEAD, 0, 0) }

            suspend fun all(what: Search): List<String> {
                val ids = mutableListOf<String>()
                var cursor: String? = null
                do {
                    val p = q.search(what, cursor)
                    ids += p.items.map { it.id }
                    cursor = p.cursor
                } while (cursor != null)
                return ids.sorted()
            }
            assertEquals(listOf("ord-1", "ord-2"), all(Search.IdPrefix("ord-")))
            assertEquals(listOf("ord-2"), all(Search.Header("tenant", "acme")))
            assertEquals(listOf("ord-1"), all(Search.Body("needle".encodeToByteArray())))
            assertEquals(emptyList(), all(Search.LastError("boom")))
            bad("search") { q.search(Search.IdPrefix("")) }
        }
    }

    @Test
    fun `bulk actions on ids or a search`() = runBlocking<Unit> {
        testClient("bulk").use { client ->
            val q = client.queue(uniqueName("bulk"))
            for (i in 1..3) q.publish("b".encodeToByteArray(), id = "job-$i", delay = 1.hours)
            q.publish("b".encodeToByteArray(), id = "other", delay = 1.hours)
            val now = q.bulk(BulkAction.DELIVER_NOW, search = Search.IdPrefix("job-"))
            assertEquals(listOf(3L, 3L), listOf(now.matched, now.done))
            assertEquals(3, q.stats().ready)
            assertEquals(1, q.bulk(BulkAction.RESCHEDULE, ids = listOf("job-1"), delay = 2.hours).done)
            assertEquals(MessageState.SCHEDULED, q.peek("job-1")!!.state)
            val gone = q.bulk(BulkAction.CANCEL, ids = listOf("job-2", "nope"))
            assertEquals(listOf(2L, 1L), listOf(gone.matched, gone.done))
            assertNull(q.peek("job-2"))
            assertNotNull(q.peek("other"))
            bad("delay/at") { q.bulk(BulkAction.RESCHEDULE, ids = listOf("x")) }
            bad("ids/search") { q.bulk(BulkAction.PURGE) }
        }
    }

    @Test
    fun `sharded queue - messages spread over shards, one subscription gets them all, counts must agree`() =
        runBlocking<Unit> {
            testClient("shards").use { client ->
                val name = uniqueName("orders")
                val q = client.queue(name, shards = 4)
                val ids = q.publishBatch(
                    (0 until 20).map {
                        Message("m$it".encodeToByteArray(), id = "o-$it")
                    },
                ).map { it.id }
                assertEquals(20L, q.stats().total, "stats sum the shards")
                val got = Collections.synchronizedSet(mutableSetOf<String>())
                val sub = q.subscribe { got.add(it.id) }
                eventually(what = "every shard delivered") { got.size == 20 }
                sub.close()
                assertEquals(ids.toSet(), got.toSet())
                bad("shards") { client.queue(name, shards = 0) }
                bad("4 shards") { client.queue(name, shards = 8).stats() }
            }
        }
}
