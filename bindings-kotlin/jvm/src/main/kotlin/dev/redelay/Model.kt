package dev.redelay

import dev.redelay.ffi.PublishConfig
import dev.redelay.ffi.StoredMessage
import java.time.Instant
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds

/**
 * Settings of one published message, one to one with the core's `PublishOptions`; `null` keeps
 * the client's default.
 *
 * @property delay due this long after Redis receives the publish (by the Redis clock).
 * @property at due at this time (compared with the Redis clock); give [delay] or [at], not both.
 * @property id your own id, unique within the queue; publishing an existing id is reported as
 *   [PublishStatus.Duplicate] and changes nothing, unless [replace] is set. Without one,
 *   redelay generates an id (all digits).
 * @property headers string pairs carried with the message.
 * @property maxAttempts deliveries allowed before the message goes to the dead letters.
 * @property ttr lease length of each delivery.
 * @property backoff retry backoff after a failed attempt.
 */
data class PublishOptions(
    val delay: Duration? = null,
    val at: Instant? = null,
    val id: String? = null,
    val headers: Map<String, String> = emptyMap(),
    val maxAttempts: Int? = null,
    val ttr: Duration? = null,
    val backoff: Backoff? = null,
    val replace: Boolean = false,
)

/** A message for [Queue.publishBatch]: a body and its [PublishOptions]. */
class Message(val body: ByteArray, val options: PublishOptions = PublishOptions()) {
    constructor(
        body: ByteArray,
        delay: Duration? = null,
        at: Instant? = null,
        id: String? = null,
        headers: Map<String, String> = emptyMap(),
        maxAttempts: Int? = null,
        ttr: Duration? = null,
        backoff: Backoff? = null,
        replace: Boolean = false,
    ) : this(body, PublishOptions(delay, at, id, headers, maxAttempts, ttr, backoff, replace))

    /** A message with a UTF-8 text body. */
    constructor(text: String, options: PublishOptions = PublishOptions()) : this(text.encodeToByteArray(), options)

    internal fun toNative() = with(options) {
        PublishConfig(
            body,
            id,
            delay?.ms(),
            at,
            headers,
            maxAttempts?.toLong(),
            ttr?.ms(),
            backoff?.base?.ms(),
            backoff?.max?.ms(),
            replace,
        )
    }
}

/** What happened to one published message: stored; a duplicate id, nothing changed; replaced. */
enum class PublishStatus { Stored, Duplicate, Replaced }

/** The result of publishing one message: its id (generated when none was given) and status. */
data class Published(val id: String, val status: PublishStatus) {
    /** True when an existing message with this id made the publish a no-op. */
    val isDuplicate: Boolean get() = status == PublishStatus.Duplicate

    internal companion object {
        fun of(p: dev.redelay.ffi.Published) = Published(p.id, PublishStatus.entries[p.status.ordinal]) // same order
    }
}

/** Where a message is in its life. */
enum class MessageState { Scheduled, Ready, Leased, Dead }

/**
 * A stored message, as [Queue.peek] and [Queue.deadLetters] show it.
 *
 * @property attempts failed or expired attempts so far.
 * @property leaseDeadline while leased: when the lease runs out (Redis clock).
 * @property diedAt while dead: when it died (Redis clock).
 * @property lastError the reason of the last failure (for a dead letter: why it died).
 */
class MessageInfo internal constructor(
    val id: String,
    val state: MessageState,
    val body: ByteArray,
    val headers: Map<String, String>,
    val attempts: Int,
    val maxAttempts: Int,
    val ttr: Duration,
    val publishedAt: Instant,
    val dueAt: Instant,
    val leaseDeadline: Instant?,
    val diedAt: Instant?,
    val lastError: String?,
) {
    /** The body decoded as UTF-8. */
    val text: String get() = body.decodeToString()

    override fun toString(): String =
        "MessageInfo(id=$id, state=$state, attempts=$attempts/$maxAttempts, dueAt=$dueAt, lastError=$lastError)"

    internal companion object {
        fun of(m: StoredMessage) = MessageInfo(
            m.id,
            MessageState.entries[m.state.ordinal],
            m.body,
            m.headers,
            m.attempts.toInt(),
            m.maxAttempts.toInt(),
            m.ttrMs.milliseconds,
            m.publishedAt,
            m.dueAt,
            m.leaseDeadline,
            m.diedAt,
            m.lastError,
        )
    }
}

/**
 * Counts of one queue, read atomically at [now] (Redis clock): [total] = scheduled + ready +
 * leased + dead; [nextDue] of the next scheduled message; [oldestReadyDue] of the oldest message
 * due but not yet delivered; [paused]: consumers receive nothing until the queue is resumed.
 */
data class Stats(
    val now: Instant,
    val total: Long,
    val scheduled: Long,
    val ready: Long,
    val leased: Long,
    val dead: Long,
    val nextDue: Instant?,
    val oldestReadyDue: Instant?,
    val paused: Boolean = false,
) {
    internal companion object {
        fun of(s: dev.redelay.ffi.Stats) = s.run {
            Stats(
                now,
                total.toLong(),
                scheduled.toLong(),
                ready.toLong(),
                leased.toLong(),
                dead.toLong(),
                nextDue,
                oldestReadyDue,
                paused,
            )
        }
    }
}

/** Result of [Queue.verify]; [problems] is empty when the queue is consistent. */
data class VerifyReport(val records: Long, val problems: List<String>) {
    val isOk: Boolean get() = problems.isEmpty()
}

/**
 * Options of [Queue.subscribe], one to one with the core's `SubscribeOptions`; `null` keeps the
 * core's default (10 handlers, prefetch as many as concurrency, each message's own ttr, 30 s
 * drain, 1 s longest idle sleep between fetches in case a wake-up was lost).
 */
data class SubscribeOptions(
    val concurrency: Int? = null,
    val prefetch: Int? = null,
    val ttr: Duration? = null,
    val drainTimeout: Duration? = null,
    val maxIdle: Duration? = null,
)

/**
 * Counts kept by a [Subscription]: messages leased; acked after the handler returned (or by the
 * handler); nacked after it failed; settles refused because the lease was lost; fetch or settle
 * calls that failed (the loop retries).
 */
data class Counters(val delivered: Long, val acked: Long, val nacked: Long, val leaseLost: Long, val errors: Long)

/** Durations cross as signed milliseconds: a negative one is refused by the core, naming the field. */
internal fun Duration.ms(): Long = inWholeMilliseconds
