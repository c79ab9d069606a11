package dev.redelay

import com.sun.jna.Callback
import com.sun.jna.CallbackThreadInitializer
import com.sun.jna.Native
import dev.redelay.ffi.ClientConfig
import dev.redelay.ffi.LogSink
import dev.redelay.ffi.NativeClient
import dev.redelay.ffi.setLogSink
import dev.redelay.ffi.uniffiCallbackInterfaceLogSink
import dev.redelay.ffi.uniffiCallbackInterfaceWaker
import dev.redelay.ffi.uniffiRustFutureContinuationCallbackImpl
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import org.slf4j.LoggerFactory
import kotlin.time.Duration
import dev.redelay.ffi.connect as nativeConnect

/**
 * Options of [Client.connect], one to one with the core's `ClientOptions`; `null` keeps the
 * core's default (prefix `redelay`, 8 MiB bodies, 5 s connect and 10 s response timeouts,
 * 10 attempts, 30 s ttr, backoff 1 s .. 1 h).
 *
 * @property waitForReplicas durability across failovers: every publish waits until this many
 *   replicas have it (Redis `WAIT`) and throws [RedelayException.Redis] when they do not
 *   confirm in time; the message is then on the master only, so publish it again with its id.
 */
data class ClientOptions(
    val prefix: String? = null,
    val maxBodyBytes: Long? = null,
    val connectTimeout: Duration? = null,
    val responseTimeout: Duration? = null,
    val defaultMaxAttempts: Int? = null,
    val defaultTtr: Duration? = null,
    val defaultBackoff: Backoff? = null,
    val waitForReplicas: WaitForReplicas? = null,
)

/** Retry backoff: [base] doubled at each failed attempt, capped at [max], with jitter. */
data class Backoff(val base: Duration, val max: Duration)

/** Publishes wait until [replicas] replicas have them, for at most [timeout] (1 ms to 60 s). */
data class WaitForReplicas(val replicas: Int, val timeout: Duration)

/**
 * A connection to one Redis, shared by every [Queue] made from it.
 * `Client.connect("redis://127.0.0.1:6379").use { it.queue("orders").publish("hi".encodeToByteArray()) }`
 */
class Client private constructor(private val native: NativeClient) : AutoCloseable {
    /** Parent of every subscription's coroutines; cancelled once the client is closed. */
    internal val job = SupervisorJob()

    companion object {
        /** Connects to `redis://[user:password@]host[:port][/db]`, `rediss://…` (TLS) or `unix:///path`. */
        suspend fun connect(url: String, options: ClientOptions = ClientOptions()): Client {
            Setup.ensure()
            val o = options
            val config =
                ClientConfig(
                    o.prefix,
                    o.maxBodyBytes,
                    o.connectTimeout?.ms(),
                    o.responseTimeout?.ms(),
                    o.defaultMaxAttempts?.toLong(),
                    o.defaultTtr?.ms(),
                    o.defaultBackoff?.base?.ms(),
                    o.defaultBackoff?.max?.ms(),
                    o.waitForReplicas?.replicas?.toLong(),
                    o.waitForReplicas?.timeout?.ms(),
                )
            return Client(native { nativeConnect(url, config) })
        }

        /** [connect] for callers outside coroutines (Java, scripts): blocks the calling thread. */
        @JvmStatic @JvmOverloads
        fun connectBlocking(url: String, options: ClientOptions = ClientOptions()): Client =
            runBlocking { connect(url, options) }
    }

    /** The key prefix. */
    val prefix: String get() = native.prefix()

    /** True once [close] was called. */
    val isClosed: Boolean get() = native.isClosed()

    /** A handle to the queue [name] (1 to 128 bytes of `A-Z a-z 0-9 _ - . :`). */
    fun queue(name: String): Queue = Queue(this, native { native.queue(name) })

    /** Names of the queues published to under this prefix (best effort). */
    suspend fun queues(): List<String> = native { native.queues() }

    /** One round trip to Redis. */
    suspend fun ping() = native { native.ping() }

    /**
     * Closes every subscription made through this client (each waits for its running handlers,
     * up to its drain timeout), then the connections. Later calls fail with
     * [RedelayException.Connection] "client is closed". Calling it again does nothing.
     */
    suspend fun shutdown() {
        withContext(NonCancellable) { native.shutdown() }
        job.cancel() // handlers abandoned by the drain timeout
    }

    /** [shutdown], blocking the calling thread. */
    override fun close() = runBlocking { shutdown() }

    /**
     * Set up once, before the generated code first loads the library:
     * - the native library calls into the JVM from its tokio threads (a wake, a future becoming
     *   ready, a log record). JNA attaches such a thread for one call and detaches it after,
     *   which costs more than the call; these stay attached, as daemon threads.
     * - the core's log records go to the SLF4J logger `redelay`: warnings and errors by default,
     *   more with `-Dredelay.log=info|debug|trace` (if that level is enabled in SLF4J too).
     */
    private object Setup : LogSink {
        private val log = LoggerFactory.getLogger("redelay")

        init {
            val keepAttached = CallbackThreadInitializer(true, false, "redelay-tokio")
            val callbacks =
                listOf<Callback>(
                    uniffiCallbackInterfaceWaker.wake,
                    uniffiCallbackInterfaceWaker.uniffiFree,
                    uniffiCallbackInterfaceWaker.uniffiClone,
                    uniffiCallbackInterfaceLogSink.log,
                    uniffiRustFutureContinuationCallbackImpl,
                )
            for (cb in callbacks) Native.setCallbackThreadInitializer(cb, keepAttached)
            val wanted = listOf(
                "off",
                "error",
                "warn",
                "info",
                "debug",
                "trace",
            ).indexOf(System.getProperty("redelay.log", "warn"))
            val enabled =
                listOf(log.isErrorEnabled, log.isWarnEnabled, log.isInfoEnabled, log.isDebugEnabled, log.isTraceEnabled)
            setLogSink(this, minOf(wanted, enabled.takeWhile { it }.size).coerceAtLeast(0).toUByte())
        }

        override fun log(level: UByte, target: String, message: String) = when (level.toInt()) {
            1 -> log.error("{}: {}", target, message)
            2 -> log.warn("{}: {}", target, message)
            3 -> log.info("{}: {}", target, message)
            4 -> log.debug("{}: {}", target, message)
            else -> log.trace("{}: {}", target, message)
        }

        fun ensure() = Unit
    }
}
