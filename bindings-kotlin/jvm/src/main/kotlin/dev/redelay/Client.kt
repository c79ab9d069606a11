package dev.redelay

import com.sun.jna.Callback
import com.sun.jna.CallbackThreadInitializer
import com.sun.jna.Native
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import org.slf4j.LoggerFactory
import org.slf4j.event.Level
import kotlin.coroutines.CoroutineContext
import kotlin.time.Duration
import dev.redelay.connect as nativeConnect

/**
 * A connection to one Redis, shared by every [Queue] made from it.
 * `Client.connect("redis://127.0.0.1:6379").use { it.queue("orders").publish("hi".encodeToByteArray()) }`
 */
class Client private constructor(private val native: NativeClient) : AutoCloseable {
    companion object {
        /** Connects to `redis://[user:password@]host[:port][/db]`, `rediss://…` (TLS) or `unix:///path`. */
        suspend fun connect(url: String, options: ClientOptions = ClientOptions()): Client {
            Setup.ensure()
            wellFormed("prefix", options.prefix)
            return Client(nativeConnect(wellFormed("url", url), options))
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

    /**
     * A handle to the queue [name] (1 to 128 bytes of `A-Z a-z 0-9 _ - . :`), spread over
     * [shards] hash tags (1 to 256; with more than 1, one queue uses many Redis Cluster masters;
     * every client must open it with the same count).
     */
    fun queue(name: String, shards: Int = 1): Queue = Queue(this, native.queue(wellFormed("queue name", name), shards))

    /** Names of the queues published to under this prefix (best effort). */
    suspend fun queues(): List<String> = native.queues()

    /** One round trip to Redis. */
    suspend fun ping() = native.ping()

    /**
     * Pulls from several queues at once: up to [max] (1 to 1000; null, the default: the core's
     * default, 1) due messages of the first of [queues] that has any. [queues] are queue names
     * (1 to 100, no name twice) in priority order, each opened with the shard count stored in
     * Redis (a queue not yet stored opens as a plain one). Waits up to [wait] for the first
     * message, woken by a publish to any of the queues. All the deliveries of one call come from
     * one queue, which [Delivery.queue] names. Each is leased for its ttr (or [ttr]): ack, nack or
     * extend it before then, or it is delivered again. As with [Queue.fetch], cancelling the
     * coroutine releases what the call leased (due now, no attempt counted). A bad argument is a
     * [RedelayException.InvalidArgument] naming it (`queues`, `max`, `wait`, `ttr`, `queue name`).
     */
    suspend fun fetch(
        queues: List<String>,
        max: Int? = null,
        wait: Duration = Duration.ZERO,
        ttr: Duration? = null,
    ): List<Delivery> =
        native.fetchRaw(wellFormedAll("queues", queues), max, wait, ttr).use { it.take() }.map { Delivery(it, null) }

    /**
     * One subscription over several [queues] of this client: in strict priority order (always the
     * first queue that has a due message), or by [weights] (one per queue, 1 to 1000). One
     * concurrency limit for all; [Delivery.queue] says where each delivery came from. Otherwise
     * as [Queue.subscribe].
     */
    suspend fun subscribe(
        queues: List<Queue>,
        weights: List<Int>? = null,
        options: SubscribeOptions = SubscribeOptions(),
        context: CoroutineContext = Dispatchers.Default,
        handler: suspend (Delivery) -> Unit,
    ): Subscription {
        val sub = Subscription(queues.map { it.name }, context, handler)
        sub.start(startSubscription(queues.map { it.native }, weights, sub.waker, options), currentCoroutineContext())
        return sub
    }

    /**
     * Closes every subscription made through this client (each waits for its running handlers,
     * up to its drain timeout), then the connections. Later calls fail with
     * [RedelayException.Connection] "client is closed". Calling it again does nothing.
     */
    suspend fun shutdown() = withContext(NonCancellable) { native.shutdown() }

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
                    uniffiCallbackInterfaceWaker.closed,
                    uniffiCallbackInterfaceWaker.uniffiFree,
                    uniffiCallbackInterfaceWaker.uniffiClone,
                    uniffiCallbackInterfaceLogSink.log,
                    uniffiRustFutureContinuationCallbackImpl,
                )
            for (cb in callbacks) Native.setCallbackThreadInitializer(cb, keepAttached)
            // Levels ERROR..TRACE are 1..5 on both sides; 0 is off.
            val wanted = Level.entries.indexOfFirst { it.name.equals(System.getProperty("redelay.log", "warn"), true) }
            setLogSink(this, minOf(wanted + 1, Level.entries.takeWhile { log.isEnabledForLevel(it) }.size).toUByte())
        }

        override fun log(level: UByte, target: String, message: String) =
            log.atLevel(Level.entries[level.toInt() - 1]).log("{}: {}", target, message)

        fun ensure() = Unit
    }
}
