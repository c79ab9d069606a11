package dev.redelay

import java.time.Instant
import kotlin.time.Duration
import kotlin.time.Duration.Companion.microseconds

// Durations cross into the native library as signed milliseconds (the core works in ms; a
// negative value is refused there with a message that names the field).
internal fun Duration.ms(): Long = inWholeMilliseconds

internal fun Instant.ms(): Long = try {
    toEpochMilli()
} catch (e: ArithmeticException) {
    if (epochSecond < 0) Long.MIN_VALUE else Long.MAX_VALUE
}

internal fun instantOfMs(ms: Long): Instant = Instant.ofEpochMilli(ms)

internal fun instantOfUs(us: Long): Instant =
    Instant.ofEpochSecond(Math.floorDiv(us, 1_000_000L), Math.floorMod(us, 1_000_000L) * 1000L)

internal fun durationOfUs(us: Long): Duration = us.microseconds
