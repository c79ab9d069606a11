// The Kotlin agent of the cross-language interop matrix: the command line of
// core/examples/interop_agent.rs, using only the public API of dev.redelay:redelay.
//
//   interop.AgentKt publish URL QUEUES SPEC_JSON_FILE
//   interop.AgentKt consume URL QUEUES N OUT_JSON_FILE [--nack REASON | --leave]
//   interop.AgentKt admin URL QUEUE pause|resume|search|bulk|stats ARG_JSON
//
// QUEUES is one queue name or several separated by commas. See core/examples/interop_agent.rs.
// JSON is read and written by the few lines at the end of this file (no dependency besides
// redelay); the output escapes every non-ASCII character, so it does not depend on the locale.
package interop

import dev.redelay.BulkAction
import dev.redelay.Client
import dev.redelay.Delivery
import dev.redelay.Message
import dev.redelay.PublishOptions
import dev.redelay.Queue
import dev.redelay.RedelayException
import dev.redelay.Search
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.runBlocking
import java.io.File
import java.time.Instant
import java.util.Base64
import kotlin.system.exitProcess
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds

private const val TIMEOUT_MS = 30_000L

private fun die(msg: String, code: Int = 1): Nothing {
    System.err.println("interop.AgentKt (kotlin): $msg")
    System.err.flush()
    exitProcess(code)
}

private fun queues(arg: String) = arg.split(',').filter { it.isNotEmpty() }

private fun ms(t: Instant): Double = t.epochSecond * 1000.0 + t.nano / 1_000_000.0

private fun durationMs(d: Duration): Double = d.inWholeMicroseconds / 1000.0

private suspend fun publish(client: Client, queueArg: String, specFile: String) {
    @Suppress("UNCHECKED_CAST")
    val spec = Json.parse(File(specFile).readText(Charsets.UTF_8)) as List<Map<String, Any?>>
    val messages = spec.map { e ->
        @Suppress("UNCHECKED_CAST")
        val headers = (e["headers"] as Map<String, Any?>?)?.mapValues { it.value as String } ?: emptyMap()
        Message(
            Base64.getDecoder().decode(e["body_b64"] as String),
            PublishOptions(
                id = e["id"] as String?,
                headers = headers,
                delay = (e["delay_ms"] as Number?)?.toLong()?.milliseconds,
                maxAttempts = (e["max_attempts"] as Number?)?.toInt(),
                ttr = (e["ttr_ms"] as Number?)?.toLong()?.milliseconds,
                expiresIn = (e["expires_in_ms"] as Number?)?.toLong()?.milliseconds,
                dropOnExpiry = e["drop_on_expiry"] == true,
            ),
        )
    }
    val out = mutableListOf<Any?>()
    for (name in queues(queueArg)) {
        for (p in client.queue(name).publishBatch(messages)) {
            out += mapOf("queue" to name, "id" to p.id, "status" to p.status.name.lowercase())
        }
    }
    println(Json.write(out))
}

private suspend fun fetchN(q: Queue, n: Int, deadline: Long): Pair<List<Delivery>, String?> {
    val got = mutableListOf<Delivery>()
    while (got.size < n) {
        val left = deadline - System.currentTimeMillis()
        if (left <= 0) break
        try {
            got += q.fetch(minOf(n - got.size, 1000), minOf(left, 1000L).milliseconds)
        } catch (e: RedelayException) {
            return got to "fetch from ${q.name}: ${e.message}"
        }
    }
    return got to null
}

private fun record(m: Delivery): Map<String, Any?> = mapOf(
    "id" to m.id,
    "queue" to m.queue,
    "body_b64" to Base64.getEncoder().encodeToString(m.body),
    "headers" to m.headers,
    "attempt" to m.attempt,
    "max_attempts" to m.maxAttempts,
    "last_error" to m.lastError,
    "published_at_ms" to ms(m.publishedAt),
    "due_at_ms" to ms(m.dueAt),
    "delivered_at_ms" to ms(m.deliveredAt),
    "lateness_ms" to durationMs(m.lateness),
    "consumer" to "kotlin",
)

/** Fetches [n] from each queue, then acks them, nacks them ([nack]) or leaves them leased ([leave]). */
private suspend fun consume(client: Client, queueArg: String, n: Int, outFile: String, nack: String?, leave: Boolean) {
    val qs = queues(queueArg).map { client.queue(it) }
    println("ready")
    System.out.flush()
    val deadline = System.currentTimeMillis() + TIMEOUT_MS
    val results = coroutineScope { qs.map { q -> async { fetchN(q, n, deadline) } }.awaitAll() }
    val problems = mutableListOf<String>()
    val all = mutableListOf<Delivery>()
    for ((q, result) in qs.zip(results)) {
        val (got, err) = result
        if (got.size < n) problems += "${q.name}: ${got.size} of $n messages arrived within $TIMEOUT_MS ms"
        if (err != null) problems += err
        all += got
    }
    File(outFile).writeText(Json.write(all.map(::record)), Charsets.UTF_8)
    for (m in if (leave) emptyList() else all) {
        try {
            if (nack == null) m.ack() else m.nack(Duration.ZERO, nack)
        } catch (e: RedelayException) {
            problems += "settling ${m.id}: ${e.message}"
        }
    }
    if (problems.isNotEmpty()) {
        client.close()
        die(problems.joinToString("; "), 3)
    }
}

private suspend fun admin(client: Client, name: String, op: String, argJson: String) {
    if (op == "stats") {
        val out = queues(name).associateWith { each ->
            val s = client.queue(each).stats()
            mapOf(
                "total" to s.total,
                "scheduled" to s.scheduled,
                "ready" to s.ready,
                "leased" to s.leased,
                "lapsed" to s.lapsed,
                "dead" to s.dead,
            )
        }
        println(Json.write(out))
        return
    }
    val q = client.queue(name)

    @Suppress("UNCHECKED_CAST")
    val arg = Json.parse(argJson) as Map<String, Any?>
    val header = {
        @Suppress("UNCHECKED_CAST")
        val h = arg["header"] as List<String>
        Search.Header(h[0], h[1])
    }
    val out: Map<String, Any?> = when (op) {
        "pause" -> mapOf("changed" to q.pause())

        "resume" -> mapOf("changed" to q.resume())

        "search" -> {
            val ids = sortedSetOf<String>()
            var cursor: String? = null
            do {
                val page = q.search(header(), cursor)
                page.items.forEach { ids += it.id }
                cursor = page.cursor
            } while (cursor != null)
            mapOf("ids" to ids.toList())
        }

        "bulk" -> {
            val r = q.bulk(BulkAction.valueOf((arg["action"] as String).uppercase()), search = header())
            mapOf("matched" to r.matched, "done" to r.done)
        }

        else -> die("admin: unknown operation $op", 2)
    }
    println(Json.write(out))
}

fun main(args: Array<String>) = runBlocking {
    val usage = "usage: interop.AgentKt publish URL QUEUES SPEC | consume URL QUEUES N OUT [--nack REASON | --leave]" +
        " | admin URL QUEUE OP ARG_JSON"
    if (args.size < 4) die(usage, 2)
    val client = try {
        Client.connect(args[1])
    } catch (e: RedelayException) {
        die("connect: ${e.message}")
    }
    try {
        when {
            args[0] == "publish" && args.size == 4 -> publish(client, args[2], args[3])

            args[0] == "consume" && (args.size == 5 || (args.size == 7 && args[5] == "--nack")) ->
                consume(client, args[2], args[3].toInt(), args[4], if (args.size == 7) args[6] else null, false)

            args[0] == "consume" && args.size == 6 && args[5] == "--leave" ->
                consume(client, args[2], args[3].toInt(), args[4], null, true)

            args[0] == "admin" && args.size == 5 -> admin(client, args[2], args[3], args[4])

            else -> die(usage, 2)
        }
    } finally {
        client.shutdown()
    }
}

/** Just enough JSON: parse to Map / List / String / Double / Long / Boolean / null, and write. */
private object Json {
    fun parse(s: String): Any? {
        val p = Parser(s)
        val v = p.value()
        p.ws()
        require(p.i == s.length) { "JSON: trailing characters at ${p.i}" }
        return v
    }

    private class Parser(val s: String) {
        var i = 0

        fun ws() {
            while (i < s.length && s[i] in " \t\r\n") i++
        }

        fun value(): Any? {
            ws()
            require(i < s.length) { "JSON: unexpected end" }
            return when (s[i]) {
                '{' -> obj()
                '[' -> arr()
                '"' -> str()
                't' -> lit("true", true)
                'f' -> lit("false", false)
                'n' -> lit("null", null)
                else -> num()
            }
        }

        fun lit(word: String, v: Any?): Any? {
            require(s.startsWith(word, i)) { "JSON: bad literal at $i" }
            i += word.length
            return v
        }

        fun obj(): Map<String, Any?> {
            val m = LinkedHashMap<String, Any?>()
            i++
            ws()
            if (s[i] == '}') {
                i++
                return m
            }
            while (true) {
                ws()
                val k = str()
                ws()
                require(s[i] == ':') { "JSON: ':' expected at $i" }
                i++
                m[k] = value()
                ws()
                when (s[i++]) {
                    ',' -> continue
                    '}' -> return m
                    else -> throw IllegalArgumentException("JSON: ',' or '}' expected at ${i - 1}")
                }
            }
        }

        fun arr(): List<Any?> {
            val l = ArrayList<Any?>()
            i++
            ws()
            if (s[i] == ']') {
                i++
                return l
            }
            while (true) {
                l += value()
                ws()
                when (s[i++]) {
                    ',' -> continue
                    ']' -> return l
                    else -> throw IllegalArgumentException("JSON: ',' or ']' expected at ${i - 1}")
                }
            }
        }

        fun str(): String {
            require(s[i] == '"') { "JSON: string expected at $i" }
            i++
            val b = StringBuilder()
            while (true) {
                val c = s[i++]
                when (c) {
                    '"' -> return b.toString()

                    '\\' -> when (val e = s[i++]) {
                        '"', '\\', '/' -> b.append(e)

                        'b' -> b.append('\b')

                        'f' -> b.append('\u000c')

                        'n' -> b.append('\n')

                        'r' -> b.append('\r')

                        't' -> b.append('\t')

                        'u' -> {
                            b.append(s.substring(i, i + 4).toInt(16).toChar())
                            i += 4
                        }

                        else -> throw IllegalArgumentException("JSON: bad escape at ${i - 1}")
                    }

                    else -> b.append(c)
                }
            }
        }

        fun num(): Any {
            val start = i
            while (i < s.length && s[i] in "+-0123456789.eE") i++
            val t = s.substring(start, i)
            return t.toLongOrNull() ?: t.toDouble()
        }
    }

    fun write(v: Any?): String = StringBuilder().also { write(v, it) }.toString()

    private fun write(v: Any?, b: StringBuilder) {
        when (v) {
            null -> b.append("null")

            is String -> {
                b.append('"')
                for (c in v) {
                    when {
                        c == '"' -> b.append("\\\"")
                        c == '\\' -> b.append("\\\\")
                        c < ' ' || c > '~' -> b.append("\\u%04x".format(c.code))
                        else -> b.append(c)
                    }
                }
                b.append('"')
            }

            is Boolean, is Int, is Long -> b.append(v.toString())

            is Double -> b.append(if (v == Math.floor(v) && Math.abs(v) < 1e15) v.toLong().toString() else v.toString())

            is Map<*, *> -> {
                b.append('{')
                var first = true
                for ((k, x) in v) {
                    if (!first) b.append(',')
                    first = false
                    write(k as String, b)
                    b.append(':')
                    write(x, b)
                }
                b.append('}')
            }

            is List<*> -> {
                b.append('[')
                v.forEachIndexed { n, x ->
                    if (n > 0) b.append(',')
                    write(x, b)
                }
                b.append(']')
            }

            else -> throw IllegalArgumentException("JSON: cannot write ${v::class}")
        }
    }
}
