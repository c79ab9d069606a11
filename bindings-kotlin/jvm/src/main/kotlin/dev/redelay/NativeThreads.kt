package dev.redelay

import com.sun.jna.Callback
import com.sun.jna.CallbackThreadInitializer
import com.sun.jna.Native
import dev.redelay.ffi.uniffiCallbackInterfaceDeliveryListener
import dev.redelay.ffi.uniffiRustFutureContinuationCallbackImpl

/**
 * The native library calls back into the JVM from its tokio threads (a batch of deliveries, a
 * future becoming ready). By default JNA attaches such a thread to the JVM for one callback and detaches
 * it after, which costs more than the callback itself. These callbacks keep their threads
 * attached, as daemon threads, so they never keep the JVM alive.
 *
 * Must run before the generated code first loads the library (the vtable is registered then);
 * [Client.connect] calls [ensure] first.
 */
internal object NativeThreads {
    init {
        val keepAttached = CallbackThreadInitializer(true, false, "redelay-tokio")
        val callbacks: List<Callback> = listOf(
            uniffiCallbackInterfaceDeliveryListener.onDeliveries,
            uniffiCallbackInterfaceDeliveryListener.uniffiFree,
            uniffiCallbackInterfaceDeliveryListener.uniffiClone,
            uniffiRustFutureContinuationCallbackImpl,
        )
        for (cb in callbacks) Native.setCallbackThreadInitializer(cb, keepAttached)
    }

    fun ensure() = Unit
}
