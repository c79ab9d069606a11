package dev.redelay

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

    internal fun closeNative() = native.disconnect()

    // --- publish -------------------------------------------------------------------------

    /**
     * Publishes one message. A duplicate id is reported in the result, not as an error.
     *
     * ```
     * queue.publish("hello".encodeToByteArray(), delay = 5.seconds, id = "order-7")
     * ```
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
        published(native { native.publish(Message(body, options).toNative()) })

    /** Publishes one message with a UTF-8 text body. */
    suspend fun publish(text: String, options: PublishOptions = PublishOptions()): Published =
        publish(text.encodeToByteArray(), options)

    /**
     * Publishes many messages in one round trip (up to 100,000). One bad message refuses the whole
     * batch with [RedelayException.InvalidArgument] and nothing is written. Results are in order.
     */
    suspend fun publishBatch(messages: List<Message>): List<Published> {
        val out = native { native.publishBatch(messages.map { it.toNative() }) }
        return out.map(::published)
    }

    private fun published(p: dev.redelay.ffi.PublishResult) = Published(
        p.id,
        when (p.status) {
            dev.redelay.ffi.PublishStatus.STORED -> PublishStatus.Stored
            dev.redelay.ffi.PublishStatus.DUPLICATE -> PublishStatus.Duplicate
            dev.redelay.ffi.PublishStatus.REPLACED -> PublishStatus.Replaced
        },
    )

    // --- consume -------------------------------------------------------------------------

    /**
     * Starts consuming: [handler] runs for every due message, up to `concurrency` at a time.
     * Returning normally acks the message; throwing nacks it with the exception's message as the
     * reason (retried after the message's backoff, or after [RetryLater.delay]). The handler may
     * also settle the message itself ([Delivery.ack], [Delivery.nack]).
     *
     * Returns at once with the running [Subscription]; [Subscription.close] stops it gracefully.
     * If the calling coroutine's job is cancelled, the subscription is closed gracefully too.
     * Handlers run in [context] (default [Dispatchers.Default]).
     *
     * ```
     * val sub = queue.subscribe(concurrency = 16) { msg -> println(msg.text) }
     * ```
     */
    suspend fun subscribe(
        concurrency: Int = 10,
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
        val config = SubscribeConfig(
            concurrency = options.concurrency,
            prefetch = options.prefetch,
            ttrMs = options.ttr?.ms(),
            drainTimeoutMs = options.drainTimeout?.ms(),
            maxIdleMs = options.maxIdle?.ms(),
        )
        val scope = CoroutineScope(context.minusKey(Job) + SupervisorJob() + CoroutineName("redelay:$name"))
        val listener = Listener(scope, handler)
        val sub = try {
            Subscription(client, name, native { native.subscribe(listener, config) }, scope)
        } catch (e: Throwable) {
            scope.cancel()
            throw e
        }
        client.register(sub)
        sub.bindTo(currentCoroutineContext())
        return sub
    }

    /**
     * Consumes until the calling coroutine is cancelled, then closes gracefully (running handlers
     * finish, up to the drain timeout) and rethrows the cancellation. For workers:
     *
     * ```
     * val worker = scope.launch { queue.consume(concurrency = 8) { msg -> handle(msg) } }
     * // on shutdown:
     * worker.cancelAndJoin()
     * ```
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
        native { native.fetch(max, wait.ms(), ttr?.ms()) }.map(::Delivery)

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
                while (i < got.size) {
                    emit(got[i])
                    i++
                }
            } finally {
                if (i < got.size) {
                    withContext(NonCancellable) {
                        for (d in got.subList(minOf(i + 1, got.size), got.size)) {
                            try {
                                d.nack(Duration.ZERO, "not consumed: the flow stopped")
                            } catch (_: RedelayException) {
                            }
                        }
                    }
                }
            }
        }
    }

    // --- settle by id ------------------------------------------------------------------------

    /** Acknowledges a leased message by id and lease token. */
    suspend fun ack(id: String, token: String) = native { native.ack(id, token) }

    /** Nacks a leased message by id and lease token; true when it went to the dead letters. */
    suspend fun nack(id: String, token: String, retryIn: Duration? = null, reason: String = ""): Boolean =
        native { native.nack(id, token, retryIn?.ms(), reason) }

    /** Extends a lease by id and lease token to [ttr] from now. */
    suspend fun extend(id: String, token: String, ttr: Duration) = native { native.extend(id, token, ttr.ms()) }

    // --- change ------------------------------------------------------------------------------

    /** Deletes a message wherever it is. False when there was no such id. */
    suspend fun cancel(id: String): Boolean = native { native.cancel(id) }

    /**
     * Makes a scheduled or ready message due [delay] from now; returns the new due time.
     * [RedelayException.NotFound] without such id; InvalidArgument when it is leased or dead.
     */
    suspend fun reschedule(id: String, delay: Duration): Instant =
        instantOfMs(native { native.reschedule(id, delay.ms(), null) })

    /** Makes a scheduled or ready message due at [at]; returns the new due time. */
    suspend fun reschedule(id: String, at: Instant): Instant =
        instantOfMs(native { native.reschedule(id, null, at.ms()) })

    // --- inspect -----------------------------------------------------------------------------

    /** Looks at a message without changing it; `null` when there is no such id. */
    suspend fun peek(id: String): MessageInfo? = native { native.peek(id) }?.let(MessageInfo::of)

    /** Counts of the queue. */
    suspend fun stats(): Stats {
        val s = native { native.stats() }
        return Stats(
            now = instantOfMs(s.nowMs),
            total = s.total.toLong(),
            scheduled = s.scheduled.toLong(),
            ready = s.ready.toLong(),
            leased = s.leased.toLong(),
            dead = s.dead.toLong(),
            nextDue = s.nextDueMs?.let(::instantOfMs),
            oldestReadyDue = s.oldestReadyDueMs?.let(::instantOfMs),
        )
    }

    /** Checks the queue's invariant atomically (O(n): for tests and maintenance). */
    suspend fun verify(): VerifyReport {
        val r = native { native.verify() }
        return VerifyReport(r.records.toLong(), r.problems)
    }

    // --- dead letters ------------------------------------------------------------------------

    /** Dead letters, the oldest death first: [limit] (1 to 1000) from [offset]. */
    suspend fun deadLetters(limit: Int = 100, offset: Long = 0): List<MessageInfo> =
        native { native.deadLetters(offset, limit) }.map(MessageInfo::of)

    /** Brings dead letters back (attempts reset, due now); returns how many. */
    suspend fun respawn(select: Select = Select.All): Long = native { native.respawn(select.toNative()) }.toLong()

    /** Deletes dead letters for good; returns how many. */
    suspend fun purgeDead(select: Select = Select.All): Long = native { native.purgeDead(select.toNative()) }.toLong()

    /** Deletes the whole queue: every message in every state (Redis frees the memory in the background). */
    suspend fun destroy() = native { native.destroyQueue() }

    override fun toString(): String = "Queue($name)"
}
