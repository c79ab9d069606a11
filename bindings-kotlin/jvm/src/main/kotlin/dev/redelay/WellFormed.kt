package dev.redelay

// Strings cross to the core as UTF-8. A Kotlin String is UTF-16 and may hold a lone surrogate,
// which has no UTF-8 form: UniFFI's encoder then throws a java.nio MalformedInputException
// ("Input length = 1", no field, not a RedelayException), and in a subscription's outcome it
// killed the loop that reports outcomes. Every String the API takes goes through [wellFormed]
// first, so a bad one is an InvalidArgument naming the field (as in Node) before any call.

/**
 * A lone surrogate (a UTF-16 unit not part of a pair): Java's regular expressions match by code
 * point, so the two units of a pair are one code point outside this class and never match.
 */
internal val loneSurrogate = Regex("[\uD800-\uDFFF]")

/**
 * [value], when it is well-formed UTF-16 (null is); else [RedelayException.InvalidArgument]
 * naming the [field] (built only then): `id: contains a lone surrogate (not valid Unicode) at index 1`.
 */
internal inline fun <T : String?> wellFormed(value: T, field: () -> String): T {
    val at = loneSurrogate.find(value ?: return value)?.range?.first ?: return value
    throw RedelayException.InvalidArgument("${field()}: contains a lone surrogate (not valid Unicode) at index $at")
}

internal fun <T : String?> wellFormed(field: String, value: T): T = wellFormed(value) { field }

/** Each of [values], named `field[i]`. */
internal fun <T : List<String>?> wellFormedAll(field: String, values: T): T =
    values.also { it?.forEachIndexed { i, v -> wellFormed(v) { "$field[$i]" } } }

/** A message's id and headers (names `headers`, values `headers.NAME`), after [prefix]. */
internal fun Message.wellFormed(prefix: String = ""): Message {
    wellFormed(id) { "${prefix}id" }
    for ((k, v) in headers) {
        wellFormed(k) { "${prefix}headers" }
        wellFormed(v) { "${prefix}headers.$k" }
    }
    return this
}

internal fun Search.wellFormed(): Search = also {
    when (it) {
        is Search.IdPrefix -> wellFormed("search.prefix", it.prefix)

        is Search.Header -> {
            wellFormed("search.name", it.name)
            wellFormed("search.value", it.value)
        }

        is Search.LastError -> wellFormed("search.text", it.text)

        is Search.Body -> Unit
    }
}

internal fun Select.wellFormed(): Select = also { if (it is Select.Ids) wellFormedAll("ids", it.ids) }

/** A reason for the core from a handler (an exception's message): lone surrogates as U+FFFD. */
internal fun String.replacingLoneSurrogates(): String = loneSurrogate.replace(this, "\uFFFD")
