package dev.redelay

import dev.redelay.ffi.OutMessage
import dev.redelay.ffi.StoredMessage
import java.time.Instant
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import dev.redelay.ffi.Backoff as NativeBackoff

/**
 * Settings of one published message; `null` keeps the queue's default.
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
 * @property replace replace an existing message with the same id.
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

    internal fun toNative(): OutMessage = OutMessage(
        body = body,
        id = options.id,
        delayMs = options.delay?.ms(),
        atMs = options.at?.ms(),
        headers = options.headers,
        maxAttempts = options.maxAttempts,
        ttrMs = options.ttr?.ms(),
        backoff = options.backoff?.let { NativeBackoff(it.base.ms(), it.max.ms()) },
        replace = options.replace,
    )
}

/** What happened to one published message. */
enum class PublishStatus {
    /** Stored and scheduled. */
    Stored,

    /** A message with this id already existed; nothing was changed. */
    Duplicate,

    /** A message with this id existed and was replaced. */
    Replaced,
}

/** The result of publishing one message: its id (generated when none was given) and status. */
data class Published(val id: String, val status: PublishStatus) {
    /** True when an existing message with this id made the publish a no-op. */
    val isDuplicate: Boolean get() = status == PublishStatus.Duplicate
}

/** Where a message is in its life. */
enum class MessageState { Scheduled, Ready, Leased, Dead }

/** A stored message, as [Queue.peek] and [Queue.deadLetters] show it. */
class MessageInfo internal constructor(
    val id: String,
    val state: MessageState,
    val body: ByteArray,
    val headers: Map<String, String>,
    /** Failed or expired attempts so far. */
    val attempts: Int,
    val maxAttempts: Int,
    val ttr: Duration,
    val publishedAt: Instant,
    val dueAt: Instant,
    /** Lease deadline while leased; time of death while dead. */
    val stateSinceOrUntil: Instant?,
    /** The reason of the last failure (for a dead letter: why it died). */
    val lastError: String?,
) {
    /** The body decoded as UTF-8. */
    val text: String get() = body.decodeToString()

    override fun toString(): String =
        "MessageInfo(id=$id, state=$state, attempts=$attempts/$maxAttempts, dueAt=$dueAt, lastError=$lastError)"

    internal companion object {
        fun of(m: StoredMessage) = MessageInfo(
            id = m.id,
            state = when (m.state) {
                dev.redelay.ffi.MessageState.SCHEDULED -> MessageState.Scheduled
                dev.redelay.ffi.MessageState.READY -> MessageState.Ready
                dev.redelay.ffi.MessageState.LEASED -> MessageState.Leased
                dev.redelay.ffi.MessageState.DEAD -> MessageState.Dead
            },
            body = m.body,
            headers = m.headers,
            attempts = m.attempts.toInt(),
            maxAttempts = m.maxAttempts.toInt(),
            ttr = m.ttrMs.milliseconds,
            publishedAt = instantOfMs(m.publishedAtMs),
            dueAt = instantOfMs(m.dueAtMs),
            stateSinceOrUntil = m.stateSinceOrUntilMs?.let(::instantOfMs),
            lastError = m.lastError,
        )
    }
}

/** Counts of one queue, read atomically. */
data class Stats(
    /** Redis time of the reading. */
    val now: Instant,
    /** All stored messages (scheduled + ready + leased + dead). */
    val total: Long,
    val scheduled: Long,
    val ready: Long,
    val leased: Long,
    val dead: Long,
    /** Due time of the next scheduled message. */
    val nextDue: Instant?,
    /** Due time of the oldest message that is due but not yet delivered. */
    val oldestReadyDue: Instant?,
)

/** Result of [Queue.verify]; [problems] is empty when the queue is consistent. */
data class VerifyReport(val records: Long, val problems: List<String>) {
    val isOk: Boolean get() = problems.isEmpty()
}

/** Which dead letters to respawn or purge. */
sealed class Select {
    /** These ids (ids that are not dead are skipped). */
    data class Ids(val ids: List<String>) : Select() {
        constructor(vararg ids: String) : this(ids.toList())
    }

    /** The [count] that died first. */
    data class Oldest(val count: Long) : Select()

    /** All of them (done in bounded steps). */
    data object All : Select()

    internal fun toNative(): dev.redelay.ffi.DeadSelect = when (this) {
        is Ids -> dev.redelay.ffi.DeadSelect.Ids(ids)
        is Oldest -> dev.redelay.ffi.DeadSelect.Oldest(count)
        All -> dev.redelay.ffi.DeadSelect.All
    }
}

/**
 * Options of [Queue.subscribe]; `null` keeps the default.
 *
 * @property concurrency handlers running at once (default 10).
 * @property prefetch messages leased ahead, waiting for a free handler (default: concurrency).
 * @property ttr lease of each delivery; `null` uses each message's own ttr.
 * @property drainTimeout how long closing waits for running handlers (default 30 s).
 * @property maxIdle longest idle sleep between fetches, in case a wake-up was lost (default 1 s).
 */
data class SubscribeOptions(
    val concurrency: Int = 10,
    val prefetch: Int? = null,
    val ttr: Duration? = null,
    val drainTimeout: Duration? = null,
    val maxIdle: Duration? = null,
)

/** Counts kept by a [Subscription]. */
data class Counters(
    /** Messages leased by this subscription. */
    val delivered: Long,
    /** Acknowledged after the handler returned (or by the handler itself). */
    val acked: Long,
    /** Nacked after the handler failed (retries and dead letters). */
    val nacked: Long,
    /** Settles refused because the lease had been lost. */
    val leaseLost: Long,
    /** Fetch or settle calls that failed (connection, timeout ...); the loop retries. */
    val errors: Long,
)
