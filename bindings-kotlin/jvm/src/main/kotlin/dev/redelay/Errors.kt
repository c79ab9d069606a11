package dev.redelay

/**
 * What went wrong, the same kinds in every redelay binding: bad input refused before anything was
 * written (the message names the field and the limit), Redis unreachable or the client closed,
 * no answer in time, a lease that is no longer the message's, no such message, an error answered
 * by Redis, a failed handler. Each is a subclass of [RedelayException] (generated from the core's
 * kinds): `catch (e: RedelayException.InvalidArgument) { println(e.message) }`.
 */
enum class ErrorKind { InvalidArgument, Connection, Timeout, LeaseLost, NotFound, Redis, Handler }

/**
 * The kind of this error (its subclass). A `when` over the classes, not their names, so that it
 * holds in an app minified by R8 or ProGuard, which renames them.
 */
val RedelayException.kind: ErrorKind
    get() = when (this) {
        is RedelayException.InvalidArgument -> ErrorKind.InvalidArgument
        is RedelayException.Connection -> ErrorKind.Connection
        is RedelayException.Timeout -> ErrorKind.Timeout
        is RedelayException.LeaseLost -> ErrorKind.LeaseLost
        is RedelayException.NotFound -> ErrorKind.NotFound
        is RedelayException.Redis -> ErrorKind.Redis
        is RedelayException.Handler -> ErrorKind.Handler
    }

/** The core's stable code of the kind, the same in every binding: `ERR_REDELAY_INVALID_ARGUMENT` ... */
val RedelayException.code: String get() = errorCode(kind.name)

/**
 * How far a long run got when this error stopped it part way (Redis failed a `bulk`, `respawn` or
 * `purgeDead` after a step had ended): the run's totals so far by their wire names, which stay
 * done — `count` for a respawn or purge of dead letters, `matched`, `done` and `scanned` (a
 * [BulkReport]'s) for a bulk action. The message says them too. Null for every other error.
 */
val RedelayException.soFar: Map<String, Long>? get() = suppressed.firstNotNullOfOrNull { (it as? SoFar)?.totals }

/** Carries [soFar] as a suppressed exception of its error: stateless, and shown in stack traces. */
private class SoFar(val totals: Map<String, Long>) : Throwable(totals.toString(), null, false, false)

/** [block], its [RunException] thrown as the [RedelayException] it carries, with [soFar]. */
internal suspend fun <T> endOfRun(block: suspend () -> T): T = try {
    block()
} catch (e: RunException.Failed) {
    e.soFar?.let { e.error.addSuppressed(SoFar(it)) }
    throw e.error
}

/**
 * Thrown by a handler: "retry later". The message is nacked with [reason] and delivered again
 * after [delay] (instead of the message's exponential backoff). Any other exception nacks with
 * "SimpleClassName: message" and the backoff. [delay] follows the rule of `nack(retryIn = …)`,
 * the core's in every language: 0 to 3650 days, else the constructor throws
 * [RedelayException.InvalidArgument].
 */
class RetryLater(val delay: kotlin.time.Duration, val reason: String = "retry later") : Exception(reason) {
    init {
        checkRetryDelay(delay)
    }
}
