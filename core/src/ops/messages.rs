//! A queue's messages as a pull stream: fetches a batch at a time, hands them out one by one,
//! and gives back what it fetched and did not hand out.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::sync::{Mutex, Notify};

use crate::base::error::Result;
use crate::base::options::MessagesOptions;
use crate::ops::delivery::Delivery;
use crate::ops::handover::Handover;
use crate::ops::queue::Queue;

/// The messages of one queue, pulled one at a time with [`next`](Messages::next): each fetch
/// leases up to `batch` due messages (waiting up to `wait` for the first, woken by a publish,
/// and fetching again while nothing is due), and the stream hands them out in their order.
/// Settle every message it hands out.
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
    /// Fetched, not handed out yet (released when dropped); its lock makes `next()` calls
    /// take turns.
    buffer: Mutex<Handover>,
    closed: AtomicBool,
    /// Wakes the `next()` that waits when `close` comes.
    closing: Notify,
}

impl Queue {
    /// This queue's messages as a pull stream ([`Messages`]). Refuses bad options
    /// (`InvalidArgument` naming the field and its limit) before anything is fetched.
    pub fn messages(&self, opts: MessagesOptions) -> Result<Messages> {
        opts.validate()?;
        let buffer = Mutex::new(Handover::new(Vec::new()));
        let inner = Inner { queue: self.clone(), opts, buffer, closed: AtomicBool::new(false), closing: Notify::new() };
        Ok(Messages { inner: Arc::new(inner) })
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
            if let Some(d) = buffer.take_first() {
                return Ok(Some(d));
            }
            let got = tokio::select! {
                biased;
                _ = &mut closing => return Ok(None),
                got = s.queue.fetch_leasing(s.opts.batch(), s.opts.wait(), s.opts.ttr) => got?,
            };
            // No await from here on: the fetched messages are in the buffer before the future
            // can be dropped.
            *buffer = Handover::new(got);
        }
    }

    /// True once [`close`](Messages::close) was called.
    pub fn is_closed(&self) -> bool {
        self.inner.closed.load(Ordering::SeqCst)
    }

    /// How many fetched messages wait to be handed out (0 while a `next()` holds the buffer).
    pub fn buffered(&self) -> usize {
        self.inner.buffer.try_lock().map_or(0, |b| b.len())
    }

    /// Ends the stream, at once (before the returned future is polled): a `next()` that waits
    /// ends with `None`, as every later one does. The future releases what was fetched and not
    /// handed out (due again at once, no attempt counted) and ends when Redis has it back.
    /// Calling it again does nothing.
    pub fn close(&self) -> impl Future<Output = ()> + Send + 'static {
        self.inner.closed.store(true, Ordering::SeqCst);
        self.inner.closing.notify_waiters();
        let inner = self.inner.clone();
        async move { inner.buffer.lock().await.release().await }
    }

    /// The queue streamed.
    pub fn queue(&self) -> &Queue {
        &self.inner.queue
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
