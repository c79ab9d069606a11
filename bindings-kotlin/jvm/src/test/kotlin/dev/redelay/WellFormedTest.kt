package dev.redelay

import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import kotlin.test.assertEquals
import kotlin.test.assertTrue
import kotlin.time.Duration.Companion.hours
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/**
 * A String with a lone surrogate has no UTF-8 form: every String the API takes is checked before
 * it crosses to the core (an InvalidArgument naming the field, as in Node), and a handler's
 * reason is stored with U+FFFD in its place.
 */
class WellFormedTest {
    private val body = "b".encodeToByteArray()

    /** Each has its lone surrogate at index 1: high at the end, high, low, a reversed pair. */
    private val bad = listOf("x\uD800", "x\uD800y", "x\uDC00y", "x\uDC00\uD800y")

    @Test
    fun `every String argument with a lone surrogate is InvalidArgument naming it, and nothing is written`() =
        runBlocking<Unit> {
            testClient("wf").use { client ->
                val q = client.queue(uniqueName("wf"))
                q.publish(body, id = "keep", delay = 1.hours, headers = mapOf("k" to "v"))
                q.publish(body, id = "dead", maxAttempts = 1)
                q.fetch(1).single().nack(reason = "died")
                q.publish(body, id = "lease")
                val d = q.fetch(1, ttr = 1.hours).single()
                val queues = client.queues()

                suspend fun snapshot() = listOf("keep", "dead", "lease").map { q.peek(it).toString() } +
                    q.stats().run { listOf(total, scheduled, ready, leased, dead).toString() }
                val before = snapshot()

                val cases = mutableListOf<Pair<String, suspend (String) -> Any?>>()
                fun case(field: String, call: suspend (String) -> Any?) = cases.add(field to call)
                case("url") { s -> Client.connect(s) }
                case("prefix") { s -> Client.connect(redisUrl, ClientOptions(prefix = s)) }
                case("queue name") { s -> client.queue(s) }
                case("queues[1]") { s -> client.fetch(listOf(q.name, s)) }
                case("id") { s -> q.publish(body, id = s) }
                case("headers") { s -> q.publish(body, headers = mapOf("a" to "b", s to "v")) }
                case("headers.k") { s -> q.publish(body, headers = mapOf("k" to s)) }
                case("id") { s -> q.publish(body, PublishOptions(id = s)) }
                case("headers.k") { s -> q.publish(Message(body, headers = mapOf("k" to s))) }
                case("message 1: id") { s -> q.publishBatch(listOf(Message(body, id = "b0"), Message(body, id = s))) }
                case("message 2: headers") { s ->
                    q.publishBatch(listOf(Message(body), Message(body), Message(body, headers = mapOf(s to "v"))))
                }
                case("message 1: headers.k") { s ->
                    q.publishBatch(listOf(Message(body, id = "b0"), Message(body, headers = mapOf("k" to s))))
                }
                case("id") { s -> q.ack(s, d.token) }
                case("token") { s -> q.ack("lease", s) }
                case("id") { s -> q.nack(s, d.token) }
                case("token") { s -> q.nack("lease", s) }
                case("reason") { s -> q.nack("lease", d.token, reason = s) }
                case("id") { s -> q.release(s, d.token) }
                case("token") { s -> q.release("lease", s) }
                case("id") { s -> q.extend(s, d.token, 1.seconds) }
                case("token") { s -> q.extend("lease", s, 1.seconds) }
                case("id") { s -> q.cancel(s) }
                case("id") { s -> q.reschedule(s, 1.seconds) }
                case("id") { s -> q.peek(s) }
                case("ids[1]") { s -> q.respawn(Select.Ids(listOf("dead", s))) }
                case("ids[1]") { s -> q.purgeDead(Select.Ids(listOf("dead", s))) }
                case("search.prefix") { s -> q.search(Search.IdPrefix(s)) }
                case("search.name") { s -> q.search(Search.Header(s, "v")) }
                case("search.value") { s -> q.search(Search.Header("k", s)) }
                case("search.text") { s -> q.search(Search.LastError(s)) }
                case("cursor") { s -> q.search(Search.IdPrefix("k"), s) }
                case("ids[1]") { s -> q.bulk(BulkAction.CANCEL, ids = listOf("keep", s)) }
                case("search.value") { s -> q.bulk(BulkAction.PURGE, search = Search.Header("k", s)) }
                case("search.prefix") { s -> q.bulk(BulkAction.CANCEL, search = Search.IdPrefix(s)) }
                case("reason") { s -> d.nack(reason = s) }

                for ((field, call) in cases) {
                    for (s in bad) {
                        val what = "$field <- ${s.map { "\\u%04X".format(it.code) }}"
                        val e = assertThrows<RedelayException.InvalidArgument>(what) { runBlocking { call(s) } }
                        assertEquals(
                            "$field: contains a lone surrogate (not valid Unicode) at index 1",
                            e.message,
                            what,
                        )
                        assertEquals("ERR_REDELAY_INVALID_ARGUMENT", e.code)
                    }
                }
                // Nothing was written: the messages, the counts and the queues are as before.
                assertEquals(before, snapshot())
                assertEquals(queues, client.queues())
                assertEquals(MessageState.LEASED, q.peek("lease")!!.state)
                assertTrue(q.verify().isOk)
            }
        }

    @Test
    fun `a surrogate pair round-trips exactly`() = runBlocking<Unit> {
        testClient("wf-pair").use { client ->
            val q = client.queue(uniqueName("wf-pair"))
            val e = "\uD83D\uDE00" // one emoji, two UTF-16 units
            val id = "id$e"
            val headers = mapOf("k$e" to "v$e")
            assertEquals(id, q.publish(body, id = id, headers = headers).id)
            q.publishBatch(listOf(Message(body, id = "$e-batch", headers = headers)))
            val info = q.peek(id)!!
            assertEquals(id, info.id)
            assertEquals(headers, info.headers)
            assertEquals(listOf(id), q.search(Search.IdPrefix("id$e")).items.map { it.id })
            assertEquals(setOf(id, "$e-batch"), q.search(Search.Header("k$e", "v$e")).items.map { it.id }.toSet())
            val d = q.fetch(1).single()
            assertEquals(id, d.id)
            assertEquals(headers, d.headers)
            d.nack(retryIn = 1.hours, reason = "r$e")
            assertEquals("r$e", q.peek(id)!!.lastError)
            assertEquals(listOf(id), q.search(Search.LastError("r$e")).items.map { it.id })
            assertTrue(q.cancel(id))
            assertEquals(1L, q.bulk(BulkAction.CANCEL, ids = listOf("$e-batch")).done)
            assertEquals(0L, q.stats().total)
        }
    }

    @Test
    fun `a handler's reason with a lone surrogate is stored with U+FFFD and the subscription goes on`() =
        runBlocking<Unit> {
            testClient("wf-sub").use { client ->
                val q = client.queue(uniqueName("wf-sub"))
                q.publish(body, id = "thrown", maxAttempts = 1)
                q.publish(body, id = "later", maxAttempts = 1)
                for (i in 1..3) q.publish(body, id = "ok$i")
                val sub = q.subscribe(concurrency = 1) { d ->
                    when (d.id) {
                        "thrown" -> throw IllegalStateException("bad \uD800 text")
                        "later" -> throw RetryLater(10.milliseconds, "wait \uDC00")
                    }
                }
                eventually(10.seconds, "3 acked, 2 dead") { q.stats().run { total == 2L && dead == 2L } }
                assertEquals("IllegalStateException: bad \uFFFD text", q.peek("thrown")!!.lastError)
                assertEquals("wait \uFFFD", q.peek("later")!!.lastError)
                assertEquals(3L, sub.counters.acked)
                assertEquals(2L, sub.counters.nacked)
                sub.close()
            }
        }
}
