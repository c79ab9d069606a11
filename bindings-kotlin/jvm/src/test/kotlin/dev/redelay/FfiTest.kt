package dev.redelay

import java.io.File
import java.lang.reflect.Modifier
import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertTrue

/**
 * The shape of the native calls, which JNA makes through its own libffi.
 *
 * On aarch64, JNA passes a call's arguments wrongly once by-value structures (UniFFI's
 * RustBuffer, 24 bytes, passed as a pointer to a copy) no longer fit in the eight argument
 * registers: the Rust side then reads another argument's buffer ("RustBuffer length exceeds
 * capacity") and the JVM aborts. Found by running the aarch64 jar under qemu (RELEASING.md);
 * reproduced there with a plain C function of that shape, which a C caller gets right (JNA
 * issues 1259 and 1736 describe the same on Android and macOS). So no native function may take
 * more than eight arguments: none of them is then passed on the stack, on any platform.
 */
class FfiTest {
    private val natives =
        Class.forName("dev.redelay.UniffiLib").declaredMethods.filter { Modifier.isNative(it.modifiers) }

    /** The `callback` of each generated callback interface (Rust calls these through JNA). */
    private val callbacks = run {
        val lib = Class.forName("dev.redelay.UniffiLib")
        val dir = File(lib.protectionDomain.codeSource.location.toURI()).resolve("dev/redelay")
        dir.list()!!.filter { it.startsWith("UniffiCallbackInterface") && it.endsWith(".class") }
            .map { Class.forName("dev.redelay." + it.removeSuffix(".class")) }
            .flatMap { c -> c.declaredMethods.filter { it.name == "callback" } }
    }

    @Test
    fun `the native functions were found`() {
        assertTrue(natives.size > 50, "expected the generated UniffiLib's native functions, found ${natives.size}")
        assertTrue(natives.any { it.name.endsWith("_fn_method_nativequeue_publish") })
    }

    @Test
    fun `every callback passes its arguments in registers on aarch64`() {
        assertTrue(callbacks.size >= 3, "expected the callbacks of LogSink and Waker, found ${callbacks.size}")
        val tooMany = callbacks.filter {
            it.parameterCount > 8
        }.map { "${it.declaringClass.name} (${it.parameterCount})" }
        assertEquals(emptyList(), tooMany, "take a record instead of separate arguments")
    }

    @Test
    fun `every native function passes its arguments in registers on aarch64`() {
        val tooMany = natives.filter { it.parameterCount > 8 }.map { "${it.name} (${it.parameterCount} arguments)" }
        assertEquals(emptyList(), tooMany, "take a record instead of separate arguments")
    }
}
