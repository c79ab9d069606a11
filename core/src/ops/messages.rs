//! A queue's messages as a pull stream: fetches a batch at a time, hands them out one by one,
//! and gives back what it fetched and did not hand out.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{Mutex, Notify};

use crate::base::error::{ErrorKind, Result};
use crate::base::options::MessagesOptions;
use crate::ops::delivery::Delivery;
use crate::ops::handover::Handover;
use crate::ops::queue::Queue;
use crate::storage::ctx::Closes;
use futures_util::future::BoxFuture;

/// The messages of one queue, pulled one at a time with [`next`](Messages::next): each fetch
/// leases up to `batch` due messages (waiting up to `wait` for the first, woken by a publish,
/// and fetching again while nothing is due), and the stream hands them out in their order.
/// Settle every message it hands out. A message that waited in the stream while the ones
/// before it were worked on comes with its lease renewed to its ttr when less than half of it
/// was left, and not at all when its lease ran out meanwhile (another consumer may have it).
///
/// [`close`](Messages::close) ends it from anywhere, also while a `next()` waits (that one
/// then ends with `None`), and releases what was fetched and not handed out (due again at
/// once, no attempt counted); so does dropping the last clone. Clones share one stream, and
/// `next()` calls take turns. Cancel-safe: a `next()` future dropped while it fetches leaves
/// nothing leased (as [`Queue::fetch`]), and one dropped after its fetch finished leaves the
/// messages in the stream, for the next call or the release.
#[derive(Clone)]
pub struct Messages {
    inner: Arc<Inner>,
}

struct Inner {
    queue: Queue,
    opts: MessagesOptions,
    /// Its lock makes `next()` calls take turns.
    buffer: Mutex<Buffer>,
    closed: AtomicBool,
    /// Wakes the `next()` that waits when `close` comes.
    closing: Notify,
}

/// What the last fetch brought and the stream has not handed out yet.
struct Buffer {
    /// Released when dropped.
    fetched: Handover,
    /// When that fetch came back: with each delivery's Redis time of delivery, an estimate of
    /// the Redis clock now.
    at: Instant,
}

impl Buffer {
    /// The first message, ready to hand out. It may have waited in the buffer while the earlier
    /// ones were worked on, and its lease ran on meanwhile: with less than half of its ttr left
    /// it is extended to its ttr first (as a subscription's keeper extends prefetched leases);
    /// one whose lease ran out is dropped, not handed out (another consumer may have the
    /// message by now; it counts as a failed attempt, as for any lease that ran out).
    async fn take_first(&mut self, opts: &MessagesOptions) -> Result<Option<Delivery>> {
        while let Some(d) = self.fetched.first().cloned() {
            let now_ms = d.inner.delivered_at_us / 1000 + self.at.elapsed().as_millis() as i64;
            let left = d.inner.lease_deadline_ms.load(Ordering::Relaxed) - now_ms;
            let ttr = opts.ttr.unwrap_or(Duration::from_millis(d.inner.record.ttr_ms));
            let lost = if left <= 0 {
                true
            } else if left < (ttr.as_millis() / 2) as i64 {
                // Left in the buffer while it is extended: a next() dropped meanwhile (closed,
                // cancelled) leaves it to the release.
                match d.extend(ttr).await {
                    Err(e) if e.kind() == ErrorKind::LeaseLost => true,
                    r => r.map(|()| false)?,
                }
            } else {
                false
            };
            let d = self.fetched.take_first();
            if !lost {
                return Ok(d);
            }
            tracing::warn!(
                queue = d.as_ref().map(Delivery::queue),
                id = d.as_ref().map(Delivery::id),
                "lease ran out while the message waited in the stream; not handed out"
            );
        }
        Ok(None)
    }
}

impl Queue {
    /// This queue's messages as a pull stream ([`Messages`]). Refuses bad options
    /// (`InvalidArgument` naming the field and its limit) before anything is fetched.
    pub fn messages(&self, opts: MessagesOptions) -> Result<Messages> {
        opts.validate()?;
        let buffer = Mutex::new(Buffer { fetched: Handover::new(Vec::new()), at: Instant::now() });
        let inner = Inner { queue: self.clone(), opts, buffer, closed: AtomicBool::new(false), closing: Notify::new() };
        let inner = Arc::new(inner);
        // `Client::close` closes it first, as it does subscriptions: what it fetched goes back.
        let weak: std::sync::Weak<dyn Closes> = Arc::downgrade(&inner) as _;
        self.inner.ctx.register(weak);
        Ok(Messages { inner })
    }
}

impl Messages {
    /// The next message: the first one fetched and not handed out yet, or, when there is none,
    /// the first of the next fetch that leases any. Waits as long as nothing is due. `None`
    /// once the stream is closed (also when `close` comes while it waits). An error of a fetch
    /// is returned as it is; the stream can go on after it.
    pub async fn next(&self) -> Result<Option<Delivery>> {
        let s = &*self.inner;
        // Registered before the flag is read: a close after the read still wakes it.
        let closing = s.closing.notified();
        tokio::pin!(closing);
        closing.as_mut().enable();
        if self.is_closed() {
            return Ok(None);
        }
        let mut buffer = tokio::select! {
            biased;
            _ = &mut closing => return Ok(None),
            b = s.buffer.lock() => b,
        };
        loop {
            if self.is_closed() {
                return Ok(None);
            }
            let first = tokio::select! {
                biased;
                _ = &mut closing => return Ok(None),
                d = buffer.take_first(&s.opts) => d?,
            };
            if first.is_some() {
                return Ok(first);
            }
            let got = tokio::select! {
                biased;
                _ = &mut closing => return Ok(None),
                got = s.queue.fetch_leasing(s.opts.batch(), s.opts.wait(), s.opts.ttr) => got?,
            };
            // No await from here on: the fetched messages are in the buffer before the future
            // can be dropped.
            *buffer = Buffer { fetched: Handover::new(got), at: Instant::now() };
        }
    }

    /// True once [`close`](Messages::close) was called.
    pub fn is_closed(&self) -> bool {
        self.inner.closed.load(Ordering::SeqCst)
    }

    /// How many fetched messages wait to be handed out (0 while a `next()` holds the buffer).
    pub fn buffered(&self) -> usize {
        self.inner.buffer.try_lock().map_or(0, |b| b.fetched.len())
    }

    /// Ends the stream, at once (before the returned future is polled): a `next()` that waits
    /// ends with `None`, as every later one does. The future releases what was fetched and not
    /// handed out (due again at once, no attempt counted) and ends when Redis has it back.
    /// Calling it again does nothing.
    pub fn close(&self) -> impl Future<Output = ()> + Send + 'static {
        let inner = self.inner.clone();
        inner.end();
        async move { inner.buffer.lock().await.fetched.release().await }
    }

    /// [`close`](Messages::close) for a caller that is gone for good (a Node worker thread torn
    /// down, a JS stream collected) and cannot wait: the stream ends at once (a `next()` that
    /// waits, holding a clone, stops fetching), and what was fetched and not handed out
    /// is released in the background on the client's runtime (due again at once, no attempt
    /// counted) instead of staying leased until its lease runs out. Callable from any thread,
    /// also outside a tokio runtime. What was handed out is the caller's still: its lease runs
    /// out unless settled.
    pub fn abandon(&self) {
        let rt = self.inner.queue.inner.ctx.rt.clone();
        rt.spawn(self.close());
    }

    /// The queue streamed.
    pub fn queue(&self) -> &Queue {
        &self.inner.queue
    }
}

impl Inner {
    /// Marks the stream closed and wakes a `next()` that waits.
    fn end(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.closing.notify_waiters();
    }
}

impl Closes for Inner {
    fn close_and_drain(&self) -> BoxFuture<'_, ()> {
        self.end();
        Box::pin(async move { self.buffer.lock().await.fetched.release().await })
    }
}

impl std::fmt::Debug for Messages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Messages")
            .field("queue", &self.inner.queue.name())
            .field("opts", &self.inner.opts)
            .field("buffered", &self.buffered())
            .field("closed", &self.is_closed())
            .finish()
    }
}
