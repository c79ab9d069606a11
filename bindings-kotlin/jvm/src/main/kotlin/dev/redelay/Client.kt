package dev.redelay

import dev.redelay.ffi.NativeClient
import kotlinx.coroutines.runBlocking
import java.util.concurrent.ConcurrentHashMap
import kotlin.time.Duration
import dev.redelay.ffi.ClientOptions as NativeClientOptions
import dev.redelay.ffi.connect as nativeConnect

/**
 * Options of [Client.connect]; `null` keeps the default.
 *
 * @property prefix key prefix of every queue (default `redelay`).
 * @property maxBodyBytes largest body accepted by publish (default 8 MiB).
 * @property connectTimeout how long to try to reach Redis (default 5 s).
 * @property responseTimeout how long to wait for any one answer (default 10 s).
 * @property defaultMaxAttempts max attempts of messages that do not set their own (default 10).
 * @property defaultTtr lease of messages that do not set their own (default 30 s).
 * @property defaultBackoff retry backoff of messages that do not set their own (default 1 s .. 1 h).
 * @property waitForReplicas durability across failovers: every publish waits until this many
 *   replicas have it (Redis `WAIT`, also in a cluster) and throws [RedelayException.Redis] when
 *   they do not confirm in time; the message is then on the master only, so publish it again
 *   with the same id.
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

/**
 * A connection to one Redis, shared by every [Queue] made from it.
 *
 * ```
 * Client.connect("redis://127.0.0.1:6379").use { client ->
 *     val orders = client.queue("orders")
 *     orders.publish("close order 42".encodeToByteArray(), delay = 30.minutes)
 * }
 * ```
 *
 * [close] closes the subscriptions made through it (gracefully: running handlers finish), then
 * the connection. Nothing of redelay keeps the JVM alive after that.
 */
class Client private constructor(private val native: NativeClient) : AutoCloseable {
    private val subscriptions = ConcurrentHashMap.newKeySet<Subscription>()
    private val queues = ConcurrentHashMap.newKeySet<Queue>()

    @Volatile
    private var closed = false

    companion object {
        /** Connects to `redis://[user:password@]host[:port][/db]`, `rediss://…` (TLS) or `unix:///path`. */
        suspend fun connect(url: String, options: ClientOptions = ClientOptions()): Client {
            NativeThreads.ensure()
            val o = NativeClientOptions(
                prefix = options.prefix,
                maxBodyBytes = options.maxBodyBytes,
                connectTimeoutMs = options.connectTimeout?.ms(),
                responseTimeoutMs = options.responseTimeout?.ms(),
                defaultMaxAttempts = options.defaultMaxAttempts,
                defaultTtrMs = options.defaultTtr?.ms(),
                defaultBackoffBaseMs = options.defaultBackoff?.base?.ms(),
                defaultBackoffMaxMs = options.defaultBackoff?.max?.ms(),
                waitForReplicas = options.waitForReplicas?.replicas,
                waitForReplicasTimeoutMs = options.waitForReplicas?.timeout?.ms(),
            )
            return Client(native { nativeConnect(url, o) })
        }

        /** [connect] for callers outside coroutines (Java, scripts): blocks the calling thread. */
        @JvmStatic
        @JvmOverloads
        fun connectBlocking(url: String, options: ClientOptions = ClientOptions()): Client =
            runBlocking { connect(url, options) }
    }

    /** The key prefix. */
    val prefix: String get() = native { this.native.prefix() }

    /** True once [close] was called. */
    val isClosed: Boolean get() = closed

    /** A handle to the queue [name] (1 to 128 bytes of `A-Z a-z 0-9 _ - . :`). */
    fun queue(name: String): Queue {
        val q = Queue(this, native { native.queue(name) })
        queues.add(q)
        if (closed) {
            queues.remove(q)
            q.closeNative()
            throw RedelayException.Connection("client is closed")
        }
        return q
    }

    /** Names of the queues published to under this prefix (best effort). */
    suspend fun queues(): List<String> = native { native.queues() }

    /** One round trip to Redis. */
    suspend fun ping() = native { native.ping() }

    internal fun register(s: Subscription) {
        subscriptions.add(s)
        if (closed) {
            s.closeInBackground()
        }
    }

    internal fun unregister(s: Subscription) {
        subscriptions.remove(s)
    }

    /**
     * Closes every subscription made through this client (each waits for its running handlers,
     * up to its drain timeout), then the queues and the connection. Calls made afterwards fail
     * with [RedelayException.Connection]. Calling it again does nothing.
     */
    suspend fun shutdown() {
        closed = true
        for (s in subscriptions.toList()) s.shutdown()
        for (q in queues.toList()) q.closeNative()
        queues.clear()
        native.disconnect()
    }

    /** [shutdown], blocking the calling thread. */
    override fun close() = runBlocking { shutdown() }
}

/** Retry backoff: [base] doubled at each failed attempt, capped at [max], with jitter. */
data class Backoff(val base: Duration, val max: Duration)

/** Publishes wait until [replicas] replicas have them, for at most [timeout] (1 ms to 60 s). */
data class WaitForReplicas(val replicas: Int, val timeout: Duration)
