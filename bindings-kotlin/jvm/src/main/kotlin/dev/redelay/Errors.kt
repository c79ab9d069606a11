package dev.redelay

/**
 * What went wrong, the same kinds in every redelay binding: bad input refused before anything was
 * written (the message names the field and the limit), Redis unreachable or the client closed,
 * no answer in time, a lease that is no longer the message's, no such message, an error answered
 * by Redis, a failed handler. Each is a subclass of [RedelayException] (generated from the core's
 * kinds): `catch (e: RedelayException.InvalidArgument) { println(e.message) }`.
 */
enum class ErrorKind { InvalidArgument, Connection, Timeout, LeaseLost, NotFound, Redis, Handler }

/** The kind of this error (its subclass). */
val RedelayException.kind: ErrorKind get() = ErrorKind.valueOf(javaClass.simpleName)

/** The core's stable code of the kind, the same in every binding: `ERR_REDELAY_INVALID_ARGUMENT` ... */
val RedelayException.code: String get() = errorCode(kind.name)

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
