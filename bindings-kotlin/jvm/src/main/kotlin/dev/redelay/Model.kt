package dev.redelay

// The records, enums and Queue's own methods are generated from the Rust crate (src/lib.rs);
// these read them in Kotlin's idiom.

/** True when an existing message with this id made the publish a no-op. */
val Published.isDuplicate: Boolean get() = status == PublishStatus.DUPLICATE

/** The body decoded as UTF-8. */
val MessageInfo.text: String get() = body.decodeToString()

/** True when the queue is consistent. */
val VerifyReport.isOk: Boolean get() = problems.isEmpty()

/** A message for [Queue.publishBatch] from a body and its [PublishOptions]. */
fun Message(body: ByteArray, options: PublishOptions): Message = with(options) {
    Message(body, delay, at, id, headers, maxAttempts, ttr, backoff, replace, expiresIn, expiresAt, dropOnExpiry)
}
