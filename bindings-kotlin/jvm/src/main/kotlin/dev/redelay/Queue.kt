package dev.redelay

import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.withContext
import kotlin.coroutines.CoroutineContext
import kotlin.time.Duration

/**
 * A handle to one queue: publish, consume ([subscribe], [consume], [fetch], [messages]), settle
 * by id, inspect, change, dead letters. Made by [Client.queue]. The methods other than consuming
 * are the generated [NativeQueueInterface] (src/lib.rs).
 */
class Queue internal constructor(
    /** The client this queue belongs to. */
    val client: Client,
    internal val native: NativeQueue,
) : NativeQueueInterface by native {
    /** The queue's name. */
    val name: String = native.name()

    /**
     * Publishes one message; a duplicate id is reported in the result ([Published.isDuplicate]),
     * not as an error. `null` keeps the client's default. [delay]: due this long after Redis
     * receives the publish; [at]: due at this time (Redis clock); give one of them, or neither
     * for now. [id]: your own id, unique within the queue (a publish of an existing id changes
     * nothing, unless [replace]); without one redelay generates an id (all digits on a plain
     * queue, `<ms>-<random>` in hex on a sharded one). [headers]
     * are carried along. [maxAttempts]: deliveries allowed before the dead letters; [ttr]: lease
     * length; [backoff]: retry delays. [expiresIn] (from the publish) or [expiresAt]: a message
     * not delivered by then never is; it becomes a dead letter "expired", or is deleted with
     * [dropOnExpiry].
     */
    suspend fun publish(
        body: ByteArray,
        delay: Ms? = null,
        at: java.time.Instant? = null,
        id: String? = null,
        headers: Map<String, String> = mapOf(),
        maxAttempts: Int? = null,
        ttr: Ms? = null,
        backoff: Backoff? = null,
        replace: Boolean = false,
        expiresIn: Ms? = null,
        expiresAt: java.time.Instant? = null,
        dropOnExpiry: Boolean = false,
    ): Published = publish(
        Message(body, delay, at, id, headers, maxAttempts, ttr, backoff, replace, expiresIn, expiresAt, dropOnExpiry),
    )

    /** [publish] with the settings of a [PublishOptions]. */
    suspend fun publish(body: ByteArray, options: PublishOptions): Published = publish(Message(body, options))

    // The generated methods that take Strings, each checked first (WellFormed.kt): a lone
    // surrogate is an InvalidArgument naming the field, before anything reaches Redis.

    override suspend fun publish(message: Message): Published = native.publish(message.wellFormed())

    override suspend fun publishBatch(messages: List<Message>): List<Published> =
        native.publishBatch(messages.onEachIndexed { i, m -> m.wellFormed("message $i: ") })

    override suspend fun ack(id: String, token: String) = native.ack(wellFormed("id", id), wellFormed("token", token))

    override suspend fun nack(id: String, token: String, retryIn: Ms?, reason: String): Boolean =
        native.nack(wellFormed("id", id), wellFormed("token", token), retryIn, wellFormed("reason", reason))

    override suspend fun release(id: String, token: String) =
        native.release(wellFormed("id", id), wellFormed("token", token))

    override suspend fun extend(id: String, token: String, ttr: Ms) =
        native.extend(wellFormed("id", id), wellFormed("token", token), ttr)

    override suspend fun cancel(id: String): Boolean = native.cancel(wellFormed("id", id))

    override suspend fun reschedule(id: String, delay: Ms?, at: java.time.Instant?): java.time.Instant =
        native.reschedule(wellFormed("id", id), delay, at)

    override suspend fun peek(id: String): MessageInfo? = native.peek(wellFormed("id", id))

    override suspend fun respawn(select: Select, expiresIn: Ms?, clearExpiry: Boolean): Long =
        endOfRun { native.respawn(select.wellFormed(), expiresIn, clearExpiry) }

    override suspend fun purgeDead(select: Select): Long = endOfRun { native.purgeDead(select.wellFormed()) }

    override suspend fun search(what: Search, cursor: String?): SearchPage =
        native.search(what.wellFormed(), wellFormed("cursor", cursor))

    override suspend fun bulk(
        action: BulkAction,
        ids: List<String>?,
        search: Search?,
        delay: Ms?,
        at: java.time.Instant?,
        expiresIn: Ms?,
        clearExpiry: Boolean,
    ): BulkReport = endOfRun {
        native.bulk(action, wellFormedAll("ids", ids), search?.wellFormed(), delay, at, expiresIn, clearExpiry)
    }

    /** Deletes the whole queue: every message in every state. */
    suspend fun destroy() = native.destroyQueue()

    override fun toString(): String = "Queue($name)"

    /**
     * Starts consuming: [handler] runs for every due message, up to `concurrency` at a time, in
     * [context] (default [Dispatchers.Default]). Returning normally acks the message; throwing
     * nacks it with "SimpleClassName: message" (retried after the message's backoff, or after
     * [RetryLater.delay]). The handler may also settle the message itself ([Delivery.ack] ...).
     * Returns the running [Subscription]; it closes gracefully on [Subscription.close], on
     * [Client.close], or when the calling coroutine's job is cancelled.
     */
    suspend fun subscribe(
        options: SubscribeOptions = SubscribeOptions(),
        context: CoroutineContext = Dispatchers.Default,
        handler: suspend (Delivery) -> Unit,
    ): Subscription = client.subscribe(listOf(this), null, options, context, handler)

    /** [subscribe] with the fields of [SubscribeOptions] as arguments. */
    suspend fun subscribe(
        concurrency: Int? = null,
        prefetch: Int? = null,
        ttr: Duration? = null,
        drainTimeout: Duration? = null,
        maxIdle: Duration? = null,
        context: CoroutineContext = Dispatchers.Default,
        handler: suspend (Delivery) -> Unit,
    ): Subscription = subscribe(SubscribeOptions(concurrency, prefetch, ttr, drainTimeout, maxIdle), context, handler)

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
     * Pulls up to [max] (1 to 1000; null, the default: the core's default, 1) due messages,
     * waiting up to [wait] for the first. Each is leased for its ttr (or [ttr]): ack, nack or
     * extend it before then, or it is delivered again.
     */
    suspend fun fetch(max: Int? = null, wait: Duration = Duration.ZERO, ttr: Duration? = null): List<Delivery> =
        fetchRaw(max, wait, ttr).use { it.take() }.map { Delivery(it, null) }

    /**
     * The queue's messages as a cold [Flow], on the core's message stream: fetched [batch]
     * (1 to 1000; null, the default: the core's default, 1) at a time, each fetch waiting up to
     * [wait] (10 ms or more; null, the default: the core's default, 1 s) for a first message and
     * fetching again while nothing is due, each
     * message leased for its ttr (or [ttr]). Settle every message you collect ([Delivery.ack] /
     * [Delivery.nack]). When collection stops early, the fetched messages not yet emitted are
     * released: due now, no attempt counted.
     */
    fun messages(batch: Int? = null, wait: Duration? = null, ttr: Duration? = null): Flow<Delivery> = flow {
        native.messagesRaw(batch, wait, ttr).use { stream ->
            try {
                while (true) emit(Delivery(stream.next().use { it.take() }.singleOrNull() ?: break, null))
            } finally {
                withContext(NonCancellable) { stream.shutdown() }
            }
        }
    }
}
