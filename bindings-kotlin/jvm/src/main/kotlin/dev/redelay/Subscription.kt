package dev.redelay

import dev.redelay.ffi.DeliveryListener
import dev.redelay.ffi.DeliverySink
import dev.redelay.ffi.InDelivery
import dev.redelay.ffi.NativeSubscription
import dev.redelay.ffi.Outcome
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.DelicateCoroutinesApi
import kotlinx.coroutines.DisposableHandle
import kotlinx.coroutines.GlobalScope
import kotlinx.coroutines.Job
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.cancel
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.yield
import java.util.concurrent.ConcurrentLinkedQueue
import kotlin.coroutines.CoroutineContext

/**
 * A running subscription (see [Queue.subscribe]).
 *
 * [close] (or the suspending [shutdown]) stops fetching, hands back prefetched messages that did
 * not start, waits for running handlers up to the drain timeout, and returns; what did not
 * finish is delivered again after its lease runs out.
 */
class Subscription internal constructor(
    private val client: Client,
    /** The queue this subscription consumes. */
    val queue: String,
    private val native: NativeSubscription,
    /** Where the handlers run; cancelled after closing (handlers past the drain timeout). */
    private val scope: CoroutineScope,
) : AutoCloseable {
    @Volatile
    private var parentHandle: DisposableHandle? = null

    /** True once close was called. */
    val isClosed: Boolean get() = native.isClosed()

    /** Counts so far. */
    val counters: Counters
        get() {
            val c = native.counters()
            return Counters(
                c.delivered.toLong(),
                c.acked.toLong(),
                c.nacked.toLong(),
                c.leaseLost.toLong(),
                c.errors.toLong(),
            )
        }

    /** Closes the subscription when the job of [context] is cancelled (not when it completes). */
    internal fun bindTo(context: CoroutineContext) {
        val job = context[Job] ?: return
        parentHandle = job.invokeOnCompletion { cause -> if (cause != null) closeInBackground() }
    }

    @OptIn(DelicateCoroutinesApi::class)
    internal fun closeInBackground() {
        GlobalScope.launch { shutdown() }
    }

    /**
     * Closes gracefully, suspending until running handlers finished (up to the drain timeout).
     * Idempotent. Once started, the close completes even if the calling coroutine is cancelled.
     */
    suspend fun shutdown() {
        parentHandle?.dispose()
        parentHandle = null
        try {
            withContext(NonCancellable) { native.stop() }
        } finally {
            // Handlers still running now were abandoned by the drain timeout: their messages are
            // delivered again when their leases run out.
            scope.cancel()
            client.unregister(this)
        }
    }

    /** [shutdown], blocking the calling thread. */
    override fun close() = runBlocking { shutdown() }

    override fun toString(): String = "Subscription(queue=$queue, closed=$isClosed, $counters)"
}

/**
 * Receives a subscription's deliveries in batches from the core's consumer runtime, runs the
 * user's handler in one coroutine per delivery, and reports outcomes in batches: returning
 * normally acks, [RetryLater] nacks with its delay, any other Throwable nacks with its message.
 */
internal class Listener(private val scope: CoroutineScope, private val handler: suspend (Delivery) -> Unit) :
    DeliveryListener {
    private val done = ConcurrentLinkedQueue<Outcome>()
    private val wake = Channel<Unit>(Channel.CONFLATED)

    @Volatile
    private var sink: DeliverySink? = null

    init {
        // One coroutine reports outcomes: it takes everything finished since its last call, so
        // one FFI call carries many outcomes under load (each FFI call allocates native memory).
        scope.launch {
            for (signal in wake) {
                yield() // let handlers that are about to finish add their outcomes first
                val batch = ArrayList<Outcome>()
                while (true) batch.add(done.poll() ?: break)
                if (batch.isNotEmpty()) {
                    try {
                        sink?.complete(batch)
                    } catch (e: Exception) {
                        // Not expected (complete has no error path); the core's lease expiry
                        // redelivers these messages. Keep reporting the next ones.
                        System.err.println("redelay: reporting ${batch.size} handler outcomes failed: $e")
                    }
                }
            }
        }
    }

    override fun onDeliveries(sink: DeliverySink, batch: List<InDelivery>) {
        if (this.sink == null) this.sink = sink
        for (d in batch) {
            scope.launch { run(sink, d) }
        }
    }

    private suspend fun run(sink: DeliverySink, d: InDelivery) {
        val outcome = try {
            handler(Delivery(d, sink))
            Outcome(d.key, null, null)
        } catch (e: RetryLater) {
            Outcome(d.key, e.reason, e.delay.ms())
        } catch (e: Throwable) {
            Outcome(d.key, reasonOf(e), null)
        }
        done.add(outcome)
        wake.trySend(Unit)
    }

    private fun reasonOf(e: Throwable): String {
        val m = e.message
        return if (m.isNullOrEmpty()) e.javaClass.name else m
    }
}
