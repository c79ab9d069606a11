package dev.redelay

import dev.redelay.ffi.DeadSelect
import dev.redelay.ffi.NativeQueue
import dev.redelay.ffi.SubscribeConfig
import kotlinx.coroutines.CoroutineName
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.cancel
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.withContext
import java.time.Instant
import kotlin.coroutines.CoroutineContext
import kotlin.time.Duration
import kotlin.time.Duration.Companion.seconds

/**
 * A handle to one queue: publish, consume ([subscribe], [consume], [fetch], [messages]), settle
 * by id, inspect, change, dead letters. Made by [Client.queue].
 */
class Queue internal constructor(
    /** The client this queue belongs to. */
    val client: Client,
    private val native: NativeQueue,
) {
    /** The queue's name. */
    val name: String = native.name()

    /**
     * Publishes one message; a duplicate id is reported in the result, not as an error.
     * `queue.publish("hello".encodeToByteArray(), delay = 5.seconds, id = "order-7")`
     */
    suspend fun publish(
        body: ByteArray,
        delay: Duration? = null,
        at: Instant? = null,
        id: String? = null,
        headers: Map<String, String> = emptyMap(),
        maxAttempts: Int? = null,
        ttr: Duration? = null,
        backoff: Backoff? = null,
        replace: Boolean = false,
    ): Published = publish(body, PublishOptions(delay, at, id, headers, maxAttempts, ttr, backoff, replace))

    /** Publishes one message with [options]. */
    suspend fun publish(body: ByteArray, options: PublishOptions): Published =
        Published.of(native { native.publish(Message(body, options).toNative()) })

    /** Publishes one message with a UTF-8 text body. */
    suspend fun publish(text: String, options: PublishOptions = PublishOptions()): Published =
        publish(text.encodeToByteArray(), options)

    /**
     * Publishes many messages in one round trip (up to 100,000). One bad message refuses the whole
     * batch with [RedelayException.InvalidArgument] and nothing is written. Results are in order.
     */
    suspend fun publishBatch(messages: List<Message>): List<Published> =
        native { native.publishBatch(messages.map { it.toNative() }) }.map(Published::of)

    /**
     * Starts consuming: [handler] runs for every due message, up to `concurrency` at a time, in
     * [context] (default [Dispatchers.Default]). Returning normally acks the message; throwing
     * nacks it with the exception's message (retried after the message's backoff, or after
     * [RetryLater.delay]). The handler may also settle the message itself ([Delivery.ack] ...).
     * Returns the running [Subscription]; it closes gracefully on [Subscription.close], on
     * [Client.close], or when the calling coroutine's job is cancelled.
     */
    suspend fun subscribe(
        concurrency: Int? = null,
        prefetch: Int? = null,
        ttr: Duration? = null,
        drainTimeout: Duration? = null,
        maxIdle: Duration? = null,
        context: CoroutineContext = Dispatchers.Default,
        handler: suspend (Delivery) -> Unit,
    ): Subscription = subscribe(SubscribeOptions(concurrency, prefetch, ttr, drainTimeout, maxIdle), context, handler)

    /** [subscribe] with [options]. */
    suspend fun subscribe(
        options: SubscribeOptions,
        context: CoroutineContext = Dispatchers.Default,
        handler: suspend (Delivery) -> Unit,
    ): Subscription {
        val o = options
        val config =
            SubscribeConfig(
                o.concurrency?.toLong(),
                o.prefetch?.toLong(),
                o.ttr?.ms(),
                o.drainTimeout?.ms(),
                o.maxIdle?.ms(),
            )
        val scope = CoroutineScope(context.minusKey(Job) + SupervisorJob(client.job) + CoroutineName("redelay:$name"))
        val sub = Subscription(name, scope, handler)
        try {
            sub.start(native { native.subscribe(sub.waker, config) }, currentCoroutineContext())
        } catch (e: Throwable) {
            sub.stopLocal()
            throw e
        }
        return sub
    }

    /**
     * Consumes until the calling coroutine is cancelled, then closes gracefully (running handlers
     * finish, up to the drain timeout) and rethrows the cancellation. For workers:
     * `scope.launch { queue.consume(concurrency = 8) { msg -> handle(msg) } }`, later `cancelAndJoin()`.
     */
    suspend fun consume(
        options: SubscribeOptions = SubscribeOptions(),
        context: CoroutineContext = Dispatchers.Default,
        handler: suspend (Delivery) -> Unit,
    ): Nothing {
        val sub = subscribe(options, context, handler)
        try {
            awaitCancellation()
        } finally {
            withContext(NonCancellable) { sub.shutdown() }
        }
    }

    /** [consume] with `concurrency` handlers. */
    suspend fun consume(concurrency: Int, handler: suspend (Delivery) -> Unit): Nothing =
        consume(SubscribeOptions(concurrency = concurrency), Dispatchers.Default, handler)

    /**
     * Pulls up to [max] (1 to 1000) due messages, waiting up to [wait] for the first. Each is
     * leased for its ttr (or [ttr]): ack, nack or extend it before then, or it is delivered again.
     */
    suspend fun fetch(max: Int = 1, wait: Duration = Duration.ZERO, ttr: Duration? = null): List<Delivery> =
        native { native.fetch(max.toLong(), wait.ms(), ttr?.ms()) }.map { Delivery(it, null) }

    /**
     * The queue's messages as a cold [Flow], pulled [batch] at a time with [fetch]. Settle every
     * message you collect ([Delivery.ack] / [Delivery.nack]). When collection stops early, the
     * fetched messages not yet emitted are nacked (retry now), which counts an attempt.
     */
    fun messages(batch: Int = 1, wait: Duration = 1.seconds, ttr: Duration? = null): Flow<Delivery> = flow {
        while (true) {
            val got = fetch(batch, wait, ttr)
            var i = 0
            try {
                while (i < got.size) emit(got[i++])
            } finally {
                withContext(NonCancellable) {
                    for (d in got.drop(i)) runCatching { d.nack(Duration.ZERO, "not consumed: the flow stopped") }
                }
            }
        }
    }

    /** Acknowledges a leased message by id and lease token. */
    suspend fun ack(id: String, token: String) = native { native.ack(id, token) }

    /** Nacks a leased message by id and lease token; true when it went to the dead letters. */
    suspend fun nack(id: String, token: String, retryIn: Duration? = null, reason: String = ""): Boolean =
        native { native.nack(id, token, retryIn?.ms(), reason) }

    /** Extends a lease by id and lease token to [ttr] from now. */
    suspend fun extend(id: String, token: String, ttr: Duration) = native { native.extend(id, token, ttr.ms()) }

    /** Deletes a message wherever it is. False when there was no such id. */
    suspend fun cancel(id: String): Boolean = native { native.cancel(id) }

    /**
     * Makes a scheduled or ready message due [delay] from now or at [at] (give one); returns the
     * new due time. [RedelayException.NotFound] without such id, InvalidArgument when leased or dead.
     */
    suspend fun reschedule(id: String, delay: Duration? = null, at: Instant? = null): Instant =
        native { native.reschedule(id, delay?.ms(), at) }

    /** Makes a scheduled or ready message due at [at]; returns the new due time. */
    suspend fun reschedule(id: String, at: Instant): Instant = reschedule(id, null, at)

    /** Looks at a message without changing it; `null` when there is no such id. */
    suspend fun peek(id: String): MessageInfo? = native { native.peek(id) }?.let(MessageInfo::of)

    /** Counts of the queue, read atomically. */
    suspend fun stats(): Stats = Stats.of(native { native.stats() })

    /** Checks the queue's invariant atomically (O(n): for tests and maintenance). */
    suspend fun verify(): VerifyReport = native {
        native.verify()
    }.let { VerifyReport(it.records.toLong(), it.problems) }

    /** Dead letters, the oldest death first: [limit] (1 to 1000, default 100) from [offset]. */
    suspend fun deadLetters(limit: Int? = null, offset: Long? = null): List<MessageInfo> =
        native { native.deadLetters(offset, limit?.toLong()) }.map(MessageInfo::of)

    /** Brings dead letters back (attempts reset, due now); returns how many. */
    suspend fun respawn(select: Select = Select.All): Long = native { native.respawn(select.toNative()) }.toLong()

    /** Deletes dead letters for good; returns how many. */
    suspend fun purgeDead(select: Select = Select.All): Long = native { native.purgeDead(select.toNative()) }.toLong()

    /** Deletes the whole queue: every message in every state. */
    suspend fun destroy() = native { native.destroyQueue() }

    override fun toString(): String = "Queue($name)"
}

/** Which dead letters to respawn or purge: these [Ids], the [Oldest] `count`, or [All]. */
sealed class Select {
    data class Ids(val ids: List<String>) : Select() {
        constructor(vararg ids: String) : this(ids.toList())
    }

    data class Oldest(val count: Long) : Select()

    data object All : Select()

    internal fun toNative(): DeadSelect = when (this) {
        is Ids -> DeadSelect.Ids(ids)
        is Oldest -> DeadSelect.Oldest(count)
        All -> DeadSelect.All
    }
}
