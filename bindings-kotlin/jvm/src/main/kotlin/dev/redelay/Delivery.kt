package dev.redelay

import dev.redelay.ffi.DeliverySink
import dev.redelay.ffi.InDelivery
import java.time.Instant
import kotlin.time.Duration

/**
 * One delivery of a message to one consumer. It holds a lease; a subscription settles it from
 * the handler's outcome, or settle it yourself with [ack], [nack] and [extend] (always for
 * messages from [Queue.fetch]).
 */
class Delivery internal constructor(
    private val d: InDelivery,
    /** Set for a subscription's delivery (settled by key); null for a fetched one (own lease). */
    private val sink: DeliverySink? = null,
) {
    /** The message id. */
    val id: String get() = d.id

    /** The queue it came from. */
    val queue: String get() = d.queue

    /** The body, byte for byte as published. */
    val body: ByteArray get() = d.body

    /** The headers as published. */
    val headers: Map<String, String> get() = d.headers

    /** 1 on the first delivery, one more for every failed or expired attempt before. */
    val attempt: Int = d.attempt.toInt()

    /** Deliveries allowed before the message goes to the dead letters. */
    val maxAttempts: Int = d.maxAttempts.toInt()

    /** The reason given by the previous failed attempt, if any. */
    val lastError: String? get() = d.lastError

    /** When Redis stored the message (Redis clock). */
    val publishedAt: Instant get() = instantOfMs(d.publishedAtMs)

    /** When the message became due (Redis clock); for a retry, when the retry became due. */
    val dueAt: Instant get() = instantOfMs(d.dueAtMs)

    /** When this delivery was leased (Redis clock, microsecond precision). */
    val deliveredAt: Instant get() = instantOfUs(d.deliveredAtUs)

    /** `deliveredAt - dueAt`, by the Redis clock. */
    val lateness: Duration get() = durationOfUs(d.latenessUs)

    /** The lease token (for [Queue.ack] and friends, when settling by id). */
    val token: String get() = d.token

    /** The body decoded as UTF-8. */
    val text: String get() = d.body.decodeToString()

    /** The current lease deadline (Redis clock). */
    val leaseDeadline: Instant
        get() = instantOfMs(native { sink?.leaseDeadlineMs(d.key) ?: d.lease!!.leaseDeadlineMs() })

    /** True once ack or nack was called, or (in a subscription) once the handler returned. */
    val isSettled: Boolean get() = sink?.isSettled(d.key) ?: d.lease!!.isSettled()

    /** Acknowledge: the message is done and deleted. [RedelayException.LeaseLost] if the lease was lost. */
    suspend fun ack() = native { if (sink != null) sink.ack(d.key) else d.lease!!.ack() }

    /**
     * Give the message back for another attempt: after [retryIn], or the message's backoff when
     * `null`. At max attempts it goes to the dead letters with [reason]; returns true then.
     */
    suspend fun nack(retryIn: Duration? = null, reason: String = ""): Boolean =
        native { if (sink != null) sink.nack(d.key, retryIn?.ms(), reason) else d.lease!!.nack(retryIn?.ms(), reason) }

    /** Extend the lease to [ttr] from now (Redis clock). */
    suspend fun extend(ttr: Duration) =
        native { if (sink != null) sink.extend(d.key, ttr.ms()) else d.lease!!.extend(ttr.ms()) }

    override fun toString(): String =
        "Delivery(id=$id, queue=$queue, attempt=$attempt/$maxAttempts, lateness=$lateness)"
}
