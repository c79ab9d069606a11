package dev.redelay

import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import kotlin.test.assertContains
import kotlin.test.assertEquals
import kotlin.test.assertNull
import kotlin.test.assertSame
import kotlin.test.assertTrue
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

class ErrorsTest {
    private fun <T : RedelayException> check(e: T, kind: ErrorKind, vararg words: String): T {
        assertEquals(kind, e.kind)
        for (w in words) assertContains(e.message!!, w)
        return e
    }

    @Test
    fun `bad input is InvalidArgument naming the field`() = runBlocking<Unit> {
        testClient("inv").use { client ->
            check(
                assertThrows<RedelayException.InvalidArgument> {
                    client.queue("")
                },
                ErrorKind.InvalidArgument,
                "queue name",
            )
            check(
                assertThrows<RedelayException.InvalidArgument> {
                    client.queue("has space")
                },
                ErrorKind.InvalidArgument,
                "queue name",
            )
            val q = client.queue(uniqueName("inv"))
            suspend fun bad(field: String, block: suspend () -> Unit) {
                val e = assertThrows<RedelayException.InvalidArgument> { runBlocking { block() } }
                check(e, ErrorKind.InvalidArgument, field)
            }
            bad("id") { q.publish("x".encodeToByteArray(), id = "") }
            bad("id") { q.publish("x".encodeToByteArray(), id = "12345") }
            bad("delay") { q.publish("x".encodeToByteArray(), delay = (-5).milliseconds) }
            bad("delay") { q.publish("x".encodeToByteArray(), delay = (3651 * 24 * 3600).seconds) }
            bad("maxAttempts: must be 1 to 1000, got 0") { q.publish("x".encodeToByteArray(), maxAttempts = 0) }
            bad("expiresIn/expiresAt: give one of them") {
                q.publish("x".encodeToByteArray(), expiresIn = 1.seconds, expiresAt = java.time.Instant.now())
            }
            bad("retryIn: ") { q.nack("x", "tok", retryIn = (3651 * 24 * 3600).seconds) }
            bad("ttr") { q.publish("x".encodeToByteArray(), ttr = 10.milliseconds) }
            bad("max") { q.fetch(0) }
            // The core's rule: delay and at exclude each other (publish and reschedule alike).
            val now = java.time.Instant.now()
            check(
                assertThrows<RedelayException.InvalidArgument> {
                    runBlocking { q.publish("x".encodeToByteArray(), delay = 1.seconds, at = now) }
                },
                ErrorKind.InvalidArgument,
                "delay/at",
                "not both",
            )
            check(
                assertThrows<RedelayException.InvalidArgument> {
                    runBlocking { q.reschedule("x", 1.seconds, java.time.Instant.now()) }
                },
                ErrorKind.InvalidArgument,
                "delay/at",
                "not both",
            )
            assertEquals(
                "ERR_REDELAY_INVALID_ARGUMENT",
                assertThrows<RedelayException> {
                    runBlocking { q.publish("x".encodeToByteArray(), delay = 1.seconds, at = now) }
                }.code,
            )
            bad("concurrency") { q.subscribe(concurrency = 0) { } }
            bad("message 1") {
                q.publishBatch(
                    listOf(Message("ok".encodeToByteArray()), Message("x".encodeToByteArray(), maxAttempts = -1)),
                )
            }
            // Nothing of the refused batch was written.
            assertEquals(0, q.stats().total)
        }
    }

    @Test
    fun `an oversized body is refused with the limit`() = runBlocking<Unit> {
        testClient("body", ClientOptions(maxBodyBytes = 1024)).use { client ->
            val q = client.queue(uniqueName("body"))
            q.publish(ByteArray(1024))
            val e = assertThrows<RedelayException.InvalidArgument> { runBlocking { q.publish(ByteArray(1025)) } }
            check(e, ErrorKind.InvalidArgument, "body", "1024")
        }
    }

    @Test
    fun `a subscription keeps its latest error and names its queues`() = runBlocking<Unit> {
        testClient("sick").use { client ->
            val q = client.queue(uniqueName("sick"))
            val sub = q.subscribe(concurrency = 1) { }
            assertEquals(listOf(q.name), sub.queues)
            assertEquals(null, sub.lastError)
            // Spoiled before it is due: a record of an unknown version fails the fetch that meets it.
            q.publish("x".encodeToByteArray(), id = "bad", delay = 300.milliseconds)
            redisCli("HSET", "${client.prefix}:{${q.name}}:msg", "bad", "\t garbage")
            eventually(15.seconds, "the error") { sub.lastError != null }
            check(sub.lastError!!, ErrorKind.Redis, "bad")
            assertTrue(sub.counters.errors >= 1)
            sub.close()
        }
    }

    @Test
    fun `connect errors`() = runBlocking<Unit> {
        check(
            assertThrows<RedelayException.InvalidArgument> {
                runBlocking { Client.connect("http://localhost") }
            },
            ErrorKind.InvalidArgument,
            "scheme",
        )
        check(
            assertThrows<RedelayException.InvalidArgument> {
                runBlocking { Client.connect(redisUrl, ClientOptions(prefix = "")) }
            },
            ErrorKind.InvalidArgument,
            "prefix",
        )
        val port = java.net.ServerSocket(0).use { it.localPort } // nothing listens there now
        val e = assertThrows<RedelayException.Connection> {
            runBlocking { Client.connect("redis://127.0.0.1:$port", ClientOptions(connectTimeout = 300.milliseconds)) }
        }
        check(e, ErrorKind.Connection, "127.0.0.1:$port")
    }

    @Test
    fun `waitForReplicas - a publish no replica confirms throws Redis, naming the count`() = runBlocking<Unit> {
        // The test Redis has no replicas: WAIT 1 times out; the message is stored on the master.
        testClient("durable", ClientOptions(waitForReplicas = WaitForReplicas(1, 100.milliseconds))).use { client ->
            val q = client.queue(uniqueName("durable"))
            val started = System.nanoTime()
            val e =
                assertThrows<RedelayException.Redis> { runBlocking { q.publish("x".encodeToByteArray(), id = "d1") } }
            check(e, ErrorKind.Redis, "only 0 of 1 replicas confirmed within 100 ms")
            assert(System.nanoTime() - started >= 90_000_000) { "waited for the timeout" }
            assertEquals(1, q.stats().total)
        }
        check(
            assertThrows<RedelayException.InvalidArgument> {
                runBlocking { testClient("durable", ClientOptions(waitForReplicas = WaitForReplicas(1, 120.seconds))) }
            },
            ErrorKind.InvalidArgument,
            "waitForReplicas.timeout: must be 1 ms to 1 min",
        )
        check(
            assertThrows<RedelayException.InvalidArgument> {
                runBlocking { testClient("durable", ClientOptions(waitForReplicas = WaitForReplicas(-1, 1.seconds))) }
            },
            ErrorKind.InvalidArgument,
            "waitForReplicas.replicas: must not be negative",
        )
    }

    @Test
    fun `NotFound and the sealed hierarchy`() = runBlocking<Unit> {
        testClient("nf").use { client ->
            val q = client.queue(uniqueName("nf"))
            val e: RedelayException =
                assertThrows<RedelayException.NotFound> { runBlocking { q.reschedule("nope", 1.seconds) } }
            // `kind` is an exhaustive `when` over the sealed class (Errors.kt): one branch per kind.
            assertEquals(ErrorKind.NotFound, e.kind)
            assertEquals("ERR_REDELAY_NOT_FOUND", e.code)
            assertContains(e.message!!, "nope")
            assertEquals(7, ErrorKind.entries.size)
        }
    }

    @Test
    fun `every kind the native library raises has its kind, code and long-run form, by no class name`() {
        // The generated subclasses are the core's kinds, one for each the native library raises
        // (src/lib.rs); `kind` and `endOfRun` must find each without reflection (R8, ProGuard).
        val classes = RedelayException::class.java.declaredClasses.filter {
            RedelayException::class.java.isAssignableFrom(it)
        }
        assertEquals(ErrorKind.entries.map { it.name }.sorted(), classes.map { it.simpleName }.sorted())
        for (cls in classes) {
            val e = cls.getConstructor(String::class.java).newInstance("m") as RedelayException
            assertEquals(cls.simpleName, e.kind.name)
            assertEquals("ERR_REDELAY_" + cls.simpleName.replace(Regex("(?<=[a-z])(?=[A-Z])"), "_").uppercase(), e.code)
            // A long run's error comes out as the error it carries, with its totals.
            val thrown = assertThrows<RedelayException> {
                runBlocking { endOfRun { throw RunException.Failed(e, mapOf("count" to 1L)) } }
            }
            assertSame(e, thrown)
            assertEquals(mapOf("count" to 1L), thrown.soFar)
        }
    }

    @Test
    fun `calls after close fail with Connection`() = runBlocking<Unit> {
        val client = testClient("closed")
        val q = client.queue(uniqueName("closed"))
        q.publish("x".encodeToByteArray())
        client.close()
        client.close() // idempotent
        check(assertThrows<RedelayException.Connection> { runBlocking { q.stats() } }, ErrorKind.Connection, "closed")
        check(
            assertThrows<RedelayException.Connection> {
                client.queue("other")
            },
            ErrorKind.Connection,
            "client is closed",
        )
        val e = assertThrows<RedelayException.Connection> { runBlocking { q.publish("y".encodeToByteArray()) } }
        check(e, ErrorKind.Connection, "client is closed")
        assertEquals("ERR_REDELAY_CONNECTION", e.code)
        assertThrows<RedelayException.Connection> { runBlocking { q.subscribe { } } }
        assertTrue(client.isClosed)
    }

    @Test
    fun `a run that fails in the middle says how far it got in soFar`() = runBlocking<Unit> {
        FaultProxy().use { proxy ->
            Client.connect(proxy.url, ClientOptions(prefix = uniqueName("p-stopped"))).use { client ->
                val q = client.queue("q")
                val ids = List(2500) { "n$it" }
                q.publishBatch(ids.map { Message("x".encodeToByteArray(), id = it, maxAttempts = 1) })
                while (true) {
                    val got = q.fetch(1000)
                    if (got.isEmpty()) break
                    for (m in got) m.nack(reason = "boom")
                }
                assertEquals(2500L, q.stats().dead)

                // The error of `run`, whose call holding `cut` never reaches Redis.
                suspend fun stopped(cut: String, run: suspend () -> Unit): RedelayException.Connection {
                    proxy.dropNextRequestWith(cut)
                    val e = assertThrows<RedelayException.Connection> { runBlocking { run() } }
                    eventually(what = "the client to reconnect") { runCatching { client.ping() }.isSuccess }
                    return e
                }
                // n0..n999 respawned, then the second call is cut.
                var e = stopped("n1500") { q.respawn(Select.Ids(ids)) }
                assertEquals(mapOf("count" to 1000L), e.soFar)
                assertContains(e.message!!, "; stopped: respawned 1000 so far, and that stays done")
                // The first call finds no dead letter among n0..n999, the second purges n1000..n1999.
                e = stopped("n2000") { q.bulk(BulkAction.PURGE, ids) }
                assertEquals(mapOf("matched" to 2500L, "done" to 1000L, "scanned" to 0L), e.soFar)
                // Failed before any step ended: nothing was done, nothing to say.
                e = stopped("n0") { q.purgeDead(Select.Ids(ids)) }
                assertNull(e.soFar)
                assertEquals(3, proxy.dropped)
                val bad =
                    assertThrows<RedelayException.InvalidArgument> { runBlocking { q.respawn(Select.Oldest(-1)) } }
                assertEquals("count: must not be negative, got -1", bad.message)
                assertNull(bad.soFar)
                val other = assertThrows<RedelayException> { runBlocking { q.publish(ByteArray(0), maxAttempts = 0) } }
                assertNull(other.soFar)
                val stats = q.stats()
                assertEquals(1000L to 500L, stats.ready to stats.dead)
            }
        }
    }
}
