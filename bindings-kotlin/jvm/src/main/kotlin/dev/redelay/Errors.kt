package dev.redelay

import dev.redelay.ffi.NativeException

/**
 * What went wrong, the same kinds in every redelay binding: bad input refused before anything was
 * written (the message names the field and the limit), Redis unreachable or the client closed,
 * no answer in time, a lease that is no longer the message's, no such message, an error answered
 * by Redis, a failed handler.
 */
enum class ErrorKind { InvalidArgument, Connection, Timeout, LeaseLost, NotFound, Redis, Handler }

/**
 * Every error redelay raises: one subclass per [ErrorKind], with the core's stable [code]
 * (`ERR_REDELAY_INVALID_ARGUMENT` ...) and message.
 * `try { queue.publish(body, id = "") } catch (e: RedelayException.InvalidArgument) { println(e.message) }`
 */
sealed class RedelayException(val kind: ErrorKind, val code: String, message: String) : RuntimeException(message) {
    override val message: String get() = super.message!!

    class InvalidArgument internal constructor(c: String, m: String) : RedelayException(ErrorKind.InvalidArgument, c, m)

    class Connection internal constructor(c: String, m: String) : RedelayException(ErrorKind.Connection, c, m)

    class Timeout internal constructor(c: String, m: String) : RedelayException(ErrorKind.Timeout, c, m)

    class LeaseLost internal constructor(c: String, m: String) : RedelayException(ErrorKind.LeaseLost, c, m)

    class NotFound internal constructor(c: String, m: String) : RedelayException(ErrorKind.NotFound, c, m)

    class Redis internal constructor(c: String, m: String) : RedelayException(ErrorKind.Redis, c, m)

    class Handler internal constructor(c: String, m: String) : RedelayException(ErrorKind.Handler, c, m)

    override fun toString(): String = "RedelayException.$kind($code): $message"
}

/** Runs a call into the native library, turning its error (kind, code, message) into a [RedelayException]. */
internal inline fun <T> native(block: () -> T): T = try {
    block()
} catch (e: NativeException.Redelay) {
    throw when (ErrorKind.valueOf(e.kind)) {
        ErrorKind.InvalidArgument -> RedelayException.InvalidArgument(e.code, e.text)
        ErrorKind.Connection -> RedelayException.Connection(e.code, e.text)
        ErrorKind.Timeout -> RedelayException.Timeout(e.code, e.text)
        ErrorKind.LeaseLost -> RedelayException.LeaseLost(e.code, e.text)
        ErrorKind.NotFound -> RedelayException.NotFound(e.code, e.text)
        ErrorKind.Redis -> RedelayException.Redis(e.code, e.text)
        ErrorKind.Handler -> RedelayException.Handler(e.code, e.text)
    }
}

/**
 * Thrown by a handler: "retry later". The message is nacked with [reason] and delivered again
 * after [delay] (instead of the message's exponential backoff). Any other exception nacks with
 * the exception's message and the backoff.
 */
class RetryLater(val delay: kotlin.time.Duration, val reason: String = "retry later") : Exception(reason)
