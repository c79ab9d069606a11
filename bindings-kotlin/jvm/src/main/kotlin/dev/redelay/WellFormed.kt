package dev.redelay

// Strings cross to the core as UTF-8. A Kotlin String is UTF-16 and may hold a lone surrogate,
// which has no UTF-8 form: UniFFI's encoder then throws a java.nio MalformedInputException
// ("Input length = 1", no field, not a RedelayException), and in a subscription's outcome it
// killed the loop that reports outcomes. Every String the API takes goes through [wellFormed]
// first, so a bad one is an InvalidArgument naming the field (as in Node) before any call.

/** The index of the first lone surrogate in [s] from [from] (a UTF-16 unit not part of a pair), or -1. */
internal fun loneSurrogateAt(s: String, from: Int = 0): Int {
    var i = from
    while (i < s.length) {
        val c = s[i++]
        if (Character.isLowSurrogate(c)) return i - 1
        if (Character.isHighSurrogate(c)) {
            if (i == s.length || !Character.isLowSurrogate(s[i])) return i - 1
            i++
        }
    }
    return -1
}

/**
 * [value], when it is well-formed UTF-16 (null is); else [RedelayException.InvalidArgument]
 * naming the [field] (built only then): `id: contains a lone surrogate (not valid Unicode) at index 1`.
 */
internal inline fun <T : String?> wellFormed(value: T, field: () -> String): T {
    val at = if (value == null) -1 else loneSurrogateAt(value)
    if (at < 0) return value
    throw RedelayException.InvalidArgument("${field()}: contains a lone surrogate (not valid Unicode) at index $at")
}

internal fun <T : String?> wellFormed(field: String, value: T): T = wellFormed(value) { field }

/** Each of [values], named `field[i]`. */
internal fun <T : List<String>?> wellFormedAll(field: String, values: T): T {
    values?.forEachIndexed { i, v -> wellFormed(v) { "$field[$i]" } }
    return values
}

/** A message's id and headers (names `headers`, values `headers.NAME`), after [prefix]. */
internal fun Message.wellFormed(prefix: String = ""): Message {
    wellFormed(id) { "${prefix}id" }
    for ((k, v) in headers) {
        wellFormed(k) { "${prefix}headers" }
        wellFormed(v) { "${prefix}headers.$k" }
    }
    return this
}

internal fun Search.wellFormed(): Search {
    when (this) {
        is Search.IdPrefix -> wellFormed("search.prefix", prefix)

        is Search.Header -> {
            wellFormed("search.name", name)
            wellFormed("search.value", value)
        }

        is Search.LastError -> wellFormed("search.text", text)

        is Search.Body -> Unit
    }
    return this
}

internal fun Select.wellFormed(): Select {
    if (this is Select.Ids) wellFormedAll("ids", ids)
    return this
}

/** A reason for the core from a handler (an exception's message): lone surrogates as U+FFFD. */
internal fun String.replacingLoneSurrogates(): String {
    var at = loneSurrogateAt(this)
    if (at < 0) return this
    val b = StringBuilder(length)
    var i = 0
    while (at >= 0) {
        b.append(this, i, at).append('\uFFFD')
        i = at + 1
        at = loneSurrogateAt(this, i)
    }
    return b.append(this, i, length).toString()
}
