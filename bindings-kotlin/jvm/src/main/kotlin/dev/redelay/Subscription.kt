package dev.redelay

import kotlinx.coroutines.CoroutineName
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.DelicateCoroutinesApi
import kotlinx.coroutines.DisposableHandle
import kotlinx.coroutines.GlobalScope
import kotlinx.coroutines.Job
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.cancel
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.yield
import java.time.Instant
import java.util.concurrent.ConcurrentLinkedQueue
import kotlin.coroutines.CoroutineContext
import kotlin.time.Duration
import kotlin.time.Duration.Companion.microseconds

/**
 * A running subscription (see [Queue.subscribe]) on the core's bridge: the core calls [waker]
 * when deliveries wait; one coroutine takes them (one native call per batch) and starts a
 * handler coroutine for each (the core hands over no more than there are free slots); another
 * reports finished outcomes in batches. Returning normally acks, [RetryLater] nacks with its
 * delay, any other Throwable nacks with its message.
 *
 * [close] (or the suspending [shutdown]) stops fetching, hands back prefetched messages that did
 * not start, waits for running handlers up to the drain timeout, and returns; what did not
 * finish is delivered again after its lease runs out.
 */
class Subscription internal constructor(
    names: List<String>,
    context: CoroutineContext,
    private val handler: suspend (Delivery) -> Unit,
) : AutoCloseable {
    private val scope =
        CoroutineScope(context.minusKey(Job) + SupervisorJob() + CoroutineName("redelay:${names.joinToString(",")}"))
    private val woken = Channel<Unit>(Channel.CONFLATED)
    private val finished = Channel<Unit>(Channel.CONFLATED)
    private val outcomes = ConcurrentLinkedQueue<Outcome>()
    private lateinit var native: NativeSubscription

    @Volatile private var parentHandle: DisposableHandle? = null

    /**
     * Called by the core when deliveries wait (never blocks; false once this side is gone), and
     * once when the subscription closed, whoever closed it: this side then closes too.
     */
    internal val waker =
        object : Waker {
            override fun wake(): Boolean = woken.trySend(Unit).isSuccess

            override fun closed() {
                woken.close()
                closeInBackground()
            }
        }

    internal fun start(sub: NativeSubscription, caller: CoroutineContext) {
        native = sub
        scope.launch {
            for (signal in woken) for (d in sub.take()) launch { run(d) }
        }
        scope.launch {
            for (signal in finished) {
                yield() // let handlers about to finish add their outcomes first
                val batch = ArrayList<Outcome>()
                while (true) batch.add(outcomes.poll() ?: break)
                if (batch.isNotEmpty()) sub.complete(batch)
            }
        }
        // Closes the subscription when the caller's job is cancelled (not when it completes).
        parentHandle = caller[Job]?.invokeOnCompletion { cause -> if (cause != null) closeInBackground() }
    }

    private suspend fun run(d: InDelivery) {
        val outcome =
            try {
                handler(Delivery(d, native))
                Outcome(d.key, null, null)
            } catch (e: RetryLater) {
                Outcome(d.key, e.reason.replacingLoneSurrogates(), e.delay)
            } catch (e: Throwable) {
                Outcome(d.key, reasonOf(e), null)
            }
        outcomes.add(outcome)
        finished.trySend(Unit)
    }

    /** True once closed (by [close], [Client.close] or the caller's cancellation). */
    val isClosed: Boolean get() = native.isClosed()

    /** Counts so far. */
    val counters: Counters get() = native.counters()

    /** The names of the queues consumed, in priority order (or as their weights were given). */
    val queues: List<String> get() = native.queues()

    /**
     * The latest error of a fetch or settle call (the subscription retries by itself; counted in
     * [Counters.errors]), kept after it recovered; null when there was none.
     */
    val lastError: RedelayException?
        get() = runCatching { native.throwLastError() }.exceptionOrNull() as RedelayException?

    @OptIn(DelicateCoroutinesApi::class)
    private fun closeInBackground() = GlobalScope.launch { shutdown() }

    /**
     * Closes gracefully, suspending until running handlers finished (up to the drain timeout).
     * Idempotent. Once started, the close completes even if the calling coroutine is cancelled.
     */
    suspend fun shutdown() {
        try {
            if (::native.isInitialized) withContext(NonCancellable) { native.stop() }
        } finally {
            parentHandle?.dispose()
            scope.cancel() // handlers still running were abandoned by the drain timeout
        }
    }

    /** [shutdown], blocking the calling thread. */
    override fun close() = runBlocking { shutdown() }

    override fun toString(): String = "Subscription(queues=$queues, closed=$isClosed, $counters)"
}

/**
 * One delivery of a message to one consumer, holding a lease: a subscription settles it from the
 * handler's outcome, or settle it yourself with [ack], [nack] and [extend] (always for [Queue.fetch]).
 */
class Delivery internal constructor(private val d: InDelivery, private val sub: NativeSubscription?) {
    val id: String get() = d.id
    val queue: String get() = d.queue

    /** The body, byte for byte as published; [text] decodes it as UTF-8. */
    val body: ByteArray get() = d.body
    val text: String get() = d.body.decodeToString()
    val headers: Map<String, String> get() = d.headers

    /** 1 on the first delivery, one more for every failed or expired attempt before. */
    val attempt: Int get() = d.attempt

    /** Deliveries allowed before the message goes to the dead letters. */
    val maxAttempts: Int get() = d.maxAttempts

    /** The reason given by the previous failed attempt, if any. */
    val lastError: String? get() = d.lastError

    /** When Redis stored the message, when it (or its retry) became due, when this delivery was leased
     * (Redis clock). */
    val publishedAt: Instant get() = d.publishedAt
    val dueAt: Instant get() = d.dueAt
    val deliveredAt: Instant get() = d.deliveredAt

    /** `deliveredAt - dueAt`, by the Redis clock. */
    val lateness: Duration get() = d.latenessUs.microseconds

    /** When the message expires (it is not delivered again after that), or null. */
    val expiresAt: Instant? get() = d.expiresAt

    /** The lease token (for [Queue.ack] and friends, when settling by id). */
    val token: String get() = d.token

    /** A subscription's delivery finds its lease by key: LeaseLost once its handler returned. */
    private fun lease(): NativeLease = d.lease ?: sub!!.lease(d.key, d.id)

    @Volatile private var lastDeadline: Instant = d.leaseDeadline

    /**
     * The current lease deadline (Redis clock); once a subscription's handler returned, the last
     * one this object knew (as in Python and Node) rather than a [RedelayException.LeaseLost].
     */
    val leaseDeadline: Instant
        get() = runCatching { lease().leaseDeadline() }.onSuccess { lastDeadline = it }.getOrDefault(lastDeadline)

    /** True once ack or nack was called, or (in a subscription) once the handler returned. */
    val isSettled: Boolean get() = runCatching { lease() }.map { it.isSettled() }.getOrDefault(true)

    /** Acknowledge: the message is done and deleted. [RedelayException.LeaseLost] if the lease was lost. */
    suspend fun ack() = lease().ack()

    /** Retry after [retryIn] (or the message's backoff); at max attempts it goes to the dead letters (returns true). */
    suspend fun nack(retryIn: Duration? = null, reason: String = ""): Boolean =
        wellFormed("reason", reason).let { lease().nack(retryIn, it) }

    /**
     * Hand the message back unprocessed, due now, without counting an attempt (work that cannot
     * start, e.g. while shutting down). [RedelayException.LeaseLost] if the lease was lost.
     */
    suspend fun release() = lease().release()

    /** Extend the lease to [ttr] from now (Redis clock). */
    suspend fun extend(ttr: Duration) = lease().extend(ttr)

    override fun toString(): String =
        "Delivery(id=$id, queue=$queue, attempt=$attempt/$maxAttempts, lateness=$lateness)"
}

/**
 * A thrown exception's reason, worded by the core from its simple class name and message (a lone
 * surrogate in the message, which no handler can be told about, is stored as U+FFFD).
 */
internal fun reasonOf(e: Throwable): String = failureReason(
    e.javaClass.simpleName.ifEmpty { e.javaClass.name }.replacingLoneSurrogates(),
    (e.message ?: "").replacingLoneSurrogates(),
)
