package dev.redelay

import dev.redelay.ffi.NativeException

/** What went wrong, independent of the message text: the same kinds in every redelay binding. */
enum class ErrorKind {
    /** Bad input, refused before anything was written. The message names the field and the limit. */
    InvalidArgument,

    /** Redis could not be reached, the connection broke, or the client was closed. */
    Connection,

    /** Redis did not answer in time. */
    Timeout,

    /** The lease token is not the message's current lease; nothing was changed. */
    LeaseLost,

    /** No message with that id. */
    NotFound,

    /** Redis answered with an error (ACL refusal, out of memory, a script error ...). */
    Redis,

    /** A message handler failed. */
    Handler,
}

/**
 * Every error redelay raises: one subclass per [ErrorKind], carrying the core's message.
 *
 * ```
 * try { queue.publish(body, id = "") } catch (e: RedelayException.InvalidArgument) { println(e.message) }
 * ```
 */
sealed class RedelayException(val kind: ErrorKind, message: String) : RuntimeException(message) {
    override val message: String get() = super.message!!

    class InvalidArgument(message: String) : RedelayException(ErrorKind.InvalidArgument, message)
    class Connection(message: String) : RedelayException(ErrorKind.Connection, message)
    class Timeout(message: String) : RedelayException(ErrorKind.Timeout, message)
    class LeaseLost(message: String) : RedelayException(ErrorKind.LeaseLost, message)
    class NotFound(message: String) : RedelayException(ErrorKind.NotFound, message)
    class Redis(message: String) : RedelayException(ErrorKind.Redis, message)
    class Handler(message: String) : RedelayException(ErrorKind.Handler, message)

    override fun toString(): String = "RedelayException.$kind: $message"
}

internal fun NativeException.toRedelay(): RedelayException {
    val m = message ?: ""
    return when (this) {
        is NativeException.InvalidArgument -> RedelayException.InvalidArgument(m)
        is NativeException.Connection -> RedelayException.Connection(m)
        is NativeException.Timeout -> RedelayException.Timeout(m)
        is NativeException.LeaseLost -> RedelayException.LeaseLost(m)
        is NativeException.NotFound -> RedelayException.NotFound(m)
        is NativeException.Redis -> RedelayException.Redis(m)
        is NativeException.Handler -> RedelayException.Handler(m)
    }
}

/** Runs a call into the native library, turning its errors into [RedelayException]s. */
internal inline fun <T> native(block: () -> T): T = try {
    block()
} catch (e: NativeException) {
    throw e.toRedelay()
}

/**
 * Thrown by a handler: "retry later". The message is nacked with [reason] and delivered again
 * after [delay] (instead of the message's exponential backoff). Any other exception nacks with
 * the exception's message and the backoff.
 */
class RetryLater(val delay: kotlin.time.Duration, val reason: String = "retry later") : Exception(reason)
