package dev.redelay

import com.google.gson.JsonArray
import com.google.gson.JsonElement
import com.google.gson.JsonNull
import com.google.gson.JsonObject
import com.google.gson.JsonParser
import com.google.gson.JsonPrimitive
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Test
import java.io.File
import java.lang.reflect.Modifier
import java.time.Instant
import kotlin.test.assertEquals
import kotlin.test.assertNotNull
import kotlin.test.assertTrue
import kotlin.test.fail
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.minutes
import kotlin.time.Duration.Companion.seconds

/** Runs every case of tests/conformance/cases.json through the Kotlin API (see its "about"). */
class ConformanceTest {
    private val table: JsonObject =
        JsonParser.parseString(
            File(System.getProperty("basedir") ?: ".", "../../tests/conformance/cases.json").readText(),
        ).asJsonObject

    // The table's words name fields the core's way (`max_attempts`); Kotlin's errors name them
    // as Kotlin code does (`maxAttempts`, ErrorsTest checks it letter for letter).
    private fun kotlinSpelling(w: String) = Regex("[a-z]+(_[a-z]+)+").replace(w) { m ->
        m.value.split('_').mapIndexed { i, p ->
            if (i ==
                0
            ) {
                p
            } else {
                p.replaceFirstChar(Char::uppercase)
            }
        }.joinToString("")
    }

    private fun JsonObject.str(k: String) = get(k)?.takeUnless { it.isJsonNull }?.asString
    private fun JsonObject.long(k: String) = get(k)?.takeUnless { it.isJsonNull }?.asLong
    private fun JsonObject.ms(k: String) = long(k)?.milliseconds
    private fun JsonObject.at(k: String) = long(k)?.let(Instant::ofEpochMilli)

    private fun message(a: JsonObject) = Message(
        a.str("body")!!.encodeToByteArray(),
        delay = a.ms("delay_ms"),
        at = a.at("at_ms"),
        id = a.str("id"),
        headers = a.getAsJsonObject("headers")?.entrySet()?.associate { it.key to it.value.asString } ?: emptyMap(),
        maxAttempts = a.long("max_attempts")?.toInt(),
        ttr = a.ms("ttr_ms"),
        expiresIn = a.ms("expires_in_ms"),
        expiresAt = a.at("expires_at_ms"),
        dropOnExpiry = a.get("drop_on_expiry")?.asBoolean ?: false,
        backoff = a.backoff("backoff"),
    )

    private fun JsonObject.backoff(field: String) = ms("${field}_base_ms")?.let { Backoff(it, ms("${field}_max_ms")!!) }

    private fun subscribeOptions(a: JsonObject) = SubscribeOptions(
        a.long("concurrency")?.toInt(),
        a.long("prefetch")?.toInt(),
        a.ms("ttr_ms"),
        maxIdle = a.ms("max_idle_ms"),
    )

    private fun search(s: JsonObject): Search = when {
        s.has("id_prefix") -> Search.IdPrefix(s.str("id_prefix")!!)
        s.has("header") -> s.getAsJsonArray("header").map { it.asString }.let { Search.Header(it[0], it[1]) }
        s.has("body") -> Search.Body(s.str("body")!!.encodeToByteArray())
        else -> Search.LastError(s.str("error")!!)
    }

    private fun select(a: JsonObject): Select = when {
        a.has("ids") -> Select.Ids(a.getAsJsonArray("ids").map { it.asString })
        a.has("oldest") -> Select.Oldest(a.long("oldest")!!)
        else -> Select.All
    }

    private fun json(v: Any?): JsonElement = when (v) {
        null, Unit -> JsonNull.INSTANCE
        is Boolean -> JsonPrimitive(v)
        is Number -> JsonPrimitive(v.toLong())
        is String -> JsonPrimitive(v)
        is List<*> -> JsonArray().apply { v.forEach { add(json(it)) } }
        is Map<*, *> -> JsonObject().apply { v.forEach { (k, x) -> add(k as String, json(x)) } }
        else -> error("no JSON for $v")
    }

    private suspend fun run(op: String, a: JsonObject, client: Client, q: Queue): Any? = when (op) {
        "connect" -> {
            val url = a.str("url")!!.replace("\$REDIS_URL", redisUrl)
            val o =
                ClientOptions(
                    prefix = a.str("prefix"),
                    maxBodyBytes = a.long("max_body_bytes"),
                    defaultMaxAttempts = a.long("default_max_attempts")?.toInt(),
                    defaultTtr = a.ms("default_ttr_ms"),
                    connectTimeout = a.ms("connect_timeout_ms"),
                    defaultBackoff = a.backoff("default_backoff"),
                )
            Client.connect(url, o).shutdown()
        }

        "queue" -> client.queue(a.str("name")!!, a.long("shards")?.toInt() ?: 1).let { }

        "publish" -> message(a).run {
            q.publish(
                body, delay, at, id, headers, maxAttempts, ttr, backoff, false, expiresIn, expiresAt, dropOnExpiry,
            )
        }.status.name.lowercase()

        "publish_batch" ->
            q.publishBatch(
                a.getAsJsonArray("messages").map {
                    message(it.asJsonObject)
                },
            ).map { it.status.name.lowercase() }

        "fetch" -> q.fetch(a.long("max")?.toInt(), a.ms("wait_ms") ?: 0.milliseconds).size

        "messages" -> {
            // The Flow is cold: its options are checked when it is collected, after the publish.
            val stream = q.messages(a.long("batch")?.toInt(), a.ms("wait_ms") ?: 1.seconds, a.ms("ttr_ms"))
            a.get("body")?.let { q.publish(it.asString.encodeToByteArray()) }
            val d = stream.first()
            d.ack()
            d.body.decodeToString()
        }

        "fetch_first" -> client.fetch(
            a.getAsJsonArray("queues").map { it.asString },
            a.long("max")?.toInt(),
            a.ms("wait_ms") ?: 0.milliseconds,
            a.ms("ttr_ms"),
        ).size

        "ack" -> q.ack(a.str("id")!!, a.str("token")!!)

        "nack" -> q.nack(a.str("id")!!, a.str("token")!!, a.ms("retry_in_ms"), a.str("reason") ?: "")

        "release" -> q.release(a.str("id")!!, a.str("token")!!)

        "extend" -> q.extend(a.str("id")!!, a.str("token")!!, a.ms("ttr_ms") ?: 0.milliseconds)

        "cancel" -> q.cancel(a.str("id")!!)

        "reschedule" -> q.reschedule(a.str("id")!!, a.ms("delay_ms"), a.at("at_ms")).let { }

        "peek" -> q.peek(a.str("id")!!)?.id

        "stats" -> q.stats().let {
            mapOf(
                "total" to it.total,
                "scheduled" to it.scheduled,
                "ready" to it.ready,
                "leased" to it.leased,
                "lapsed" to it.lapsed,
                "dead" to it.dead,
            )
        }

        "verify" -> mapOf("problems" to q.verify().problems.size)

        "dead_letters" -> q.deadLetters(limit = a.long("limit")?.toInt()).size

        "respawn" -> q.respawn(select(a), a.ms("expires_in_ms"), a.get("clear_expiry")?.asBoolean ?: false)

        "purge_dead" -> q.purgeDead(select(a))

        "subscribe" -> {
            q.subscribe(subscribeOptions(a)) { }.shutdown()
            "subscribed"
        }

        "subscribe_many" -> {
            val queues = a.getAsJsonArray("queues").map { client.queue(it.asString) }
            val weights = a.getAsJsonArray("weights")?.map { it.asInt }
            client.subscribe(queues, weights, subscribeOptions(a)) { }.shutdown()
            "subscribed"
        }

        "pause" -> q.pause()

        "resume" -> q.resume()

        "set_history" -> q.setHistory(a.get("on").asBoolean)

        "history" -> q.history(a.at("since_ms")!!, a.at("until_ms")!!, Step.valueOf(a.str("step")!!.uppercase())).size

        "upcoming" -> q.upcoming(a.at("from_ms")!!, a.ms("width_ms")!!, a.long("buckets")!!.toInt()).size

        "list" -> q.list(
            MessageState.valueOf(a.str("state")!!.uppercase()),
            a.long("offset"),
            a.long("limit")?.toInt(),
        )
            .let { mapOf("total" to it.total, "items" to it.items.size) }

        "bulk" -> q.bulk(
            BulkAction.valueOf(a.str("action")!!.uppercase()),
            a.getAsJsonArray("ids")?.map { it.asString },
            a.getAsJsonObject("search")?.let(::search),
            a.ms("delay_ms"),
            a.at("at_ms"),
        ).let { mapOf("matched" to it.matched, "done" to it.done) }

        "search" -> q.search(search(a.getAsJsonObject("search")), a.str("cursor"))
            .let { mapOf("items" to it.items.size, "done" to (it.cursor == null)) }

        "destroy" -> q.destroy()

        else -> fail("the Kotlin API has no operation \"$op\" of the conformance table")
    }

    @Test
    fun `every case of the conformance table`() = runBlocking<Unit> {
        val cases = table.getAsJsonArray("cases").map { it.asJsonObject }
        val failures = mutableListOf<String>()
        testClient("conf").use { client ->
            for ((i, case) in cases.withIndex()) {
                val op = case.str("op")!!
                val q = client.queue(uniqueName("c$i"))
                val got = runCatching { run(op, case.getAsJsonObject("args"), client, q) }
                val expect = case.getAsJsonObject("expect")
                val e = got.exceptionOrNull()
                val ok =
                    if (expect.has("error")) {
                        e is RedelayException && e.kind.name == expect.str("error") &&
                            expect.getAsJsonArray("message").all { e.message!!.contains(kotlinSpelling(it.asString)) }
                    } else {
                        e == null && json(got.getOrNull()) == expect.get("result")
                    }
                if (e is AssertionError) throw e
                if (!ok) failures += "case $i $op ${case.get("args")}: got ${got.map(::json)}, expected $expect"
                runCatching { q.destroy() }
            }
        }
        for (op in table.getAsJsonArray("operations")) {
            assertTrue(cases.any { it.str("op") == op.asString }, "no case for $op")
        }
        assertTrue(
            failures.isEmpty(),
            "${failures.size} of ${cases.size} cases failed:\n" + failures.joinToString("\n"),
        )
    }

    // A table field's Kotlin name where it is not the camelCase of the core's, by design: a
    // Boolean property reads `isX` (its getter keeps that name), and a duration kept as a plain
    // number says its unit in the name. Durations typed kotlin.time.Duration (MessageInfo.ttr,
    // Delivery.lateness) keep the plain name: their getters' mangled names are read by [properties].
    private val kotlinNames = mapOf(
        "delivery" to mapOf("settled" to "isSettled"),
        "history_point" to mapOf("lateness_sum" to "latenessSumMs"),
    )

    /**
     * The Kotlin properties of [v]'s class, found from its public getters (no kotlin-reflect):
     * `getFooBar` is `fooBar`, `isFoo` is `isFoo`; the getter of a property of an inline class
     * type such as kotlin.time.Duration is mangled (`getTtr-UwyO8pc`), the part from '-' is dropped.
     */
    private fun properties(v: Any): Set<String> = v.javaClass.methods
        .filter { it.parameterCount == 0 && !Modifier.isStatic(it.modifiers) }
        .mapNotNull { m ->
            val name = m.name.substringBefore('-')
            when {
                name.length > 3 && name.startsWith("get") && name[3].isUpperCase() ->
                    name.substring(3).replaceFirstChar(Char::lowercase)

                name.length > 2 && name.startsWith("is") && name[2].isUpperCase() -> name

                else -> null
            }
        }
        .toSet()

    /** The fields of [fields] (the table's spelling) that [v] lacks, each as "table_name (kotlinName)". */
    private fun missingFields(kind: String, v: Any, fields: List<String>): List<String> {
        val has = properties(v)
        return fields.mapNotNull { f ->
            val k = kotlinNames[kind]?.get(f) ?: kotlinSpelling(f)
            if (k in has) null else "$f ($k)"
        }
    }

    @Test
    fun `every value has the fields of the table`() = runBlocking<Unit> {
        val kinds =
            table.getAsJsonObject("results").entrySet()
                .filter { it.key != "about" }
                .associate { (kind, fields) -> kind to fields.asJsonArray.map { it.asString } }
        // The check must see a field that is not there.
        assertEquals(
            listOf("no_such_field (noSuchField)"),
            missingFields("published", Published("x", PublishStatus.STORED), listOf("id", "status", "no_such_field")),
        )
        testClient("fields").use { client ->
            val q = client.queue(uniqueName("fields"))
            val other = client.queue(uniqueName("fields-sub"))
            try {
                val published = q.publish("x".encodeToByteArray(), id = "a", expiresIn = 10.minutes)
                val info = assertNotNull(q.peek("a"), "peek(a)")
                val sub = other.subscribe { }
                sub.shutdown()
                val delivery = q.fetch(1).singleOrNull() ?: fail("fetch() delivered nothing")
                val got: Map<String, Any> =
                    mapOf(
                        "published" to published,
                        "stats" to q.stats(),
                        "message_info" to info,
                        "verify_report" to q.verify(),
                        "history_point" to q.historyTotals(),
                        "list_page" to q.list(MessageState.LEASED, 0, 10),
                        "search_page" to q.search(Search.IdPrefix("a")),
                        "bulk_report" to q.bulk(BulkAction.CANCEL, ids = listOf("none")),
                        "counters" to sub.counters,
                        "delivery" to delivery,
                    )
                val problems = mutableListOf<String>()
                for ((kind, fields) in kinds) {
                    val v = got[kind]
                    if (v == null) {
                        problems += "$kind: no Kotlin value of this kind was checked (fields ${fields.joinToString()})"
                        continue
                    }
                    val missing = missingFields(kind, v, fields)
                    if (missing.isNotEmpty()) {
                        problems += "$kind (${v.javaClass.name}) lacks ${missing.joinToString()}"
                    }
                }
                for (kind in got.keys - kinds.keys) problems += "$kind: not in the table's results"
                assertTrue(problems.isEmpty(), "values lacking fields of the table:\n" + problems.joinToString("\n"))
                val expiresAt = assertNotNull(info.expiresAt, "MessageInfo.expiresAt").toEpochMilli()
                assertEquals(
                    expiresAt,
                    delivery.expiresAt?.toEpochMilli(),
                    "Delivery.expiresAt vs MessageInfo.expiresAt",
                )
                delivery.ack()
            } finally {
                runCatching { q.destroy() }
                runCatching { other.destroy() }
            }
        }
    }
}
