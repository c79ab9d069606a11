//! The types a subscription is made of: handlers (one per delivery, or batches), outcomes,
//! counters, and the state shared by the fetch loop, the handler tasks, the lease keeper and a
//! batch handler's [`Completer`].

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use tokio::sync::{watch, Semaphore};

use crate::base::error::{Error, Result};
use crate::base::limits;
use crate::base::options::SubscribeOptions;
use crate::ops::delivery::Delivery;
use crate::ops::queue::Queue;

/// A failed handler outcome: the message is nacked with `reason`, and retried after
/// `retry_in` or the message's backoff. Any `std::error::Error` converts into it, so `?` works.
/// A handler's outcome has no caller to refuse a delay to, so one beyond the longest
/// ([`MAX_DELAY`](limits::MAX_DELAY), 3650 days) is cut to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    reason: String,
    retry_in: Option<Duration>,
}

impl Failure {
    /// Retry after the message's exponential backoff.
    pub fn new(reason: impl Into<String>) -> Self {
        Failure { reason: reason.into(), retry_in: None }
    }
    /// "Retry later": retry after `delay`.
    pub fn retry_in(reason: impl Into<String>, delay: Duration) -> Self {
        Failure { reason: reason.into(), retry_in: Some(delay) }
    }
    /// Retry after `retry_in` when given, else after the message's backoff (a binding's
    /// outcome, whose delay is optional).
    pub fn with_retry(reason: impl Into<String>, retry_in: Option<Duration>) -> Self {
        Failure { reason: reason.into(), retry_in }
    }
    /// A foreign handler's outcome with its retry delay in milliseconds, as every binding
    /// reads it: none or NaN is the message's backoff, a negative delay is now, an infinite
    /// one the longest. Every binding's `RetryLater` refuses such a delay when it is made
    /// ([`limits::retry_delay`], the rule of a nack's delay too); an outcome has no caller left
    /// to refuse one to, so a value that gets here all the same is read, never refused.
    pub fn with_retry_ms(reason: impl Into<String>, retry_in_ms: Option<f64>) -> Self {
        let delay = retry_in_ms
            .filter(|ms| !ms.is_nan())
            .map(|ms| Duration::try_from_secs_f64(ms.max(0.0) / 1000.0).unwrap_or(limits::MAX_DELAY));
        Failure::with_retry(reason, delay)
    }
    /// The reason of a foreign handler's thrown error, worded alike in every language:
    /// `"Name: message"` from the error's type name and its text, the name alone when the text
    /// is empty (Python `"ValueError: boom"`, Node `"TypeError: boom"`, Kotlin
    /// `"IllegalStateException: boom"`). Each binding takes the two from its own error object.
    pub fn thrown(name: &str, message: &str) -> String {
        if message.is_empty() {
            name.to_string()
        } else {
            format!("{name}: {message}")
        }
    }
    /// The reason stored with the message.
    pub fn reason(&self) -> &str {
        &self.reason
    }
    /// The explicit retry delay, if any (at most [`MAX_DELAY`](limits::MAX_DELAY)).
    pub fn retry_after(&self) -> Option<Duration> {
        self.retry_in.map(|d| d.min(limits::MAX_DELAY))
    }
}

impl<E: std::error::Error> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure::new(e.to_string())
    }
}

/// The future a handler returns.
pub type HandlerFuture = Pin<Box<dyn Future<Output = Result<(), Failure>> + Send + 'static>>;

/// Processes one delivery. Returning `Ok` acks it, `Err` nacks it (unless the handler settled
/// it itself); a panic nacks it too. Closures `Fn(Delivery) -> impl Future<Output =
/// Result<(), E>>` with `E: Into<Failure>` are handlers; bindings implement this trait.
pub trait Handler: Send + Sync + 'static {
    fn handle(&self, delivery: Delivery) -> HandlerFuture;
}

impl<F, Fut, E> Handler for F
where
    F: Fn(Delivery) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), E>> + Send + 'static,
    E: Into<Failure>,
{
    fn handle(&self, delivery: Delivery) -> HandlerFuture {
        let fut = self(delivery);
        Box::pin(async move { fut.await.map_err(Into::into) })
    }
}

/// Counts kept by a subscription; its wire form is an object of the six counts by name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Counters {
    /// Messages leased by this subscription.
    pub delivered: u64,
    /// Handler runs that finished (returned, failed or panicked).
    pub handled: u64,
    /// Acknowledged by the subscription after the handler returned Ok. A handler that settles
    /// a delivery itself (`Delivery::ack`/`nack`) is counted in neither `acked` nor `nacked`.
    pub acked: u64,
    /// Nacked by the subscription after the handler failed or panicked (retries and dead letters).
    pub nacked: u64,
    /// Settles refused because the lease had been lost.
    pub lease_lost: u64,
    /// Fetch or settle calls that failed (connection, timeout ...); the loop retries.
    pub errors: u64,
}

#[derive(Default)]
pub(crate) struct AtomicCounters {
    pub delivered: AtomicU64,
    pub handled: AtomicU64,
    pub acked: AtomicU64,
    pub nacked: AtomicU64,
    pub lease_lost: AtomicU64,
    pub errors: AtomicU64,
}

/// What a settle request was, for the counters.
pub(crate) enum Settle {
    Ack,
    Nack,
    /// Handed back unprocessed: not counted.
    Release,
}

/// How a subscription runs its handler.
pub(crate) enum Mode {
    /// One task per delivery, awaiting the handler's future.
    Each(Arc<dyn Handler>),
    /// Batches handed over and reported back (see `batch.rs`).
    Batch(Arc<dyn BatchHandler>),
}

pub(crate) struct Shared {
    /// The first queue consumed (its client context serves all of them).
    pub queue: Queue,
    /// Every queue consumed, with its weight, in priority order.
    pub sources: Vec<(Queue, u32)>,
    pub order: Order,
    pub mode: Mode,
    pub opts: SubscribeOptions,
    pub closing: watch::Sender<bool>,
    /// Handler slots (per-delivery mode).
    pub running: Arc<Semaphore>,
    /// Leases held, running or waiting: `concurrency + prefetch` slots.
    pub inflight: Arc<Semaphore>,
    /// Leases held (running or waiting), by lease token.
    pub held: Mutex<HashMap<String, Delivery>>,
    /// Latest (local instant, Redis µs) pair, to estimate the Redis clock.
    pub clock: Mutex<(Instant, i64)>,
    pub counters: AtomicCounters,
    /// Tells the lease keeper that new leases are held.
    pub keeper_wake: tokio::sync::Notify,
    pub last_error: Mutex<Option<Error>>,
    /// Batch mode: waiting deliveries and slot counts.
    pub batch: Mutex<BatchState>,
    /// Batch mode: notified when reports or settles finish (close waits on it).
    pub idle: tokio::sync::Notify,
    /// The fetch loop, until close awaits it.
    pub fetcher: tokio::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl crate::storage::ctx::Closes for Shared {
    fn close_and_drain(&self) -> futures_util::future::BoxFuture<'_, ()> {
        Box::pin(async move {
            self.closing.send_replace(true);
            // The handle stays until the fetch loop has ended: a close given up on (dropped, a
            // binding's `close(timeout)`) leaves it for the next close to wait on.
            let mut fetcher = self.fetcher.lock().await;
            if let Some(h) = fetcher.as_mut() {
                let _ = h.await;
                *fetcher = None;
            }
        })
    }
}

impl Shared {
    pub async fn closed(&self) {
        let mut rx = self.closing.subscribe();
        let _ = rx.wait_for(|c| *c).await;
    }
    pub fn is_closing(&self) -> bool {
        *self.closing.borrow()
    }
    /// Stops fetching; the loop then closes the subscription (drain included).
    pub fn stop(&self) {
        self.closing.send_replace(true);
    }
    pub fn redis_now_ms(&self) -> i64 {
        let (at, us) = *self.clock.lock().unwrap();
        us / 1000 + at.elapsed().as_millis() as i64
    }
    /// True when `d`'s lease has run out by the estimate of the Redis clock: the subscription
    /// sat on it (its process paused, Redis unreachable so the keeper could not extend it) and
    /// another consumer may have the message by now, so its handler must not start.
    pub fn lease_lapsed(&self, d: &Delivery) -> bool {
        lapsed_by(d, self.redis_now_ms())
    }
    pub fn lease_ttr(&self, d: &Delivery) -> Duration {
        self.opts.ttr.unwrap_or(Duration::from_millis(d.inner.record.ttr_ms))
    }
    /// Counts one settle request's result.
    pub fn count_settle(&self, kind: Settle, r: Result<()>) {
        let c = &self.counters;
        match (r, kind) {
            (Ok(()), Settle::Ack) => c.acked.fetch_add(1, Ordering::Relaxed),
            (Ok(()), Settle::Nack) => c.nacked.fetch_add(1, Ordering::Relaxed),
            (Ok(()), Settle::Release) => 0,
            (Err(e), _) if e.kind() == crate::ErrorKind::LeaseLost => c.lease_lost.fetch_add(1, Ordering::Relaxed),
            (Err(e), _) => {
                self.record_error(e);
                0
            }
        };
    }
    pub fn record_error(&self, e: Error) {
        tracing::debug!(queue = self.queue.name(), error = %e, "subscription error");
        self.counters.errors.fetch_add(1, Ordering::Relaxed);
        *self.last_error.lock().unwrap() = Some(e);
    }
    pub fn batch_handler(&self) -> Option<&Arc<dyn BatchHandler>> {
        match &self.mode {
            Mode::Batch(h) => Some(h),
            Mode::Each(_) => None,
        }
    }
}

/// How a subscription over several queues picks the queue to fetch from next, among those
/// with a message due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Always the first queue (in the order given) that has a due message.
    Priority,
    /// In proportion to each queue's weight (smooth weighted round robin).
    Weighted,
}

/// Runs deliveries handed over in batches. Each delivery comes with a key; report every one
/// exactly once through the [`Completer`], by key ([`complete`](Completer::complete), or
/// [`give_back`](Completer::give_back) when it was not started). Until then it holds its
/// handler slot, its lease is kept alive, and [`Completer::delivery`] finds it by key — so a
/// binding hands its foreign runtime plain numbers, not objects.
///
/// `dispatch` is called from the consumer's runtime or from the thread that calls `complete`,
/// with no lock held; it must not block (queue the batch for the handler's own thread).
pub trait BatchHandler: Send + Sync + 'static {
    fn dispatch(&self, batch: Vec<(u64, Delivery)>, completer: &Completer);

    /// The subscription is closing: nothing more is dispatched. Give back (through
    /// `completer`) what was dispatched and will never start.
    fn closing(&self, _completer: &Completer) {}
}

/// Takes a batch handler's outcomes back. Cheap to clone; it does not keep the subscription
/// alive, and reports that arrive after close's drain timeout ran out are ignored (those
/// messages come back when their leases run out; the handler's own settles still reach their
/// deliveries meanwhile). Its methods are in `batch.rs`.
#[derive(Clone)]
pub struct Completer {
    pub(crate) shared: Weak<Shared>,
}

/// Batch-mode bookkeeping of a subscription.
#[derive(Default)]
pub(crate) struct BatchState {
    /// Leased, waiting for a free handler slot, in lease order.
    pub waiting: VecDeque<Delivery>,
    /// Dispatched and not yet reported, by key.
    pub live: HashMap<u64, Delivery>,
    /// Still running when close's drain timeout ran out: their reports are ignored (the lease
    /// is no longer kept; the message comes back when it runs out), but the handler's own
    /// settles still reach its delivery, as they do where a binding holds the delivery itself.
    /// Dropped when reported.
    pub abandoned: HashMap<u64, Delivery>,
    pub next_key: u64,
    /// Free handler slots.
    pub free: usize,
    /// Settle submissions whose results are not yet counted.
    pub settling: usize,
    /// No more dispatches: the subscription is closing.
    pub closed: bool,
}

impl BatchState {
    pub fn new(concurrency: usize) -> Self {
        BatchState { free: concurrency, ..Default::default() }
    }
}

pub(crate) fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    let what = p
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string());
    format!("handler panicked: {what}")
}

/// True when `d`'s lease deadline is at or before `now_ms` (Redis ms): one clock reading for a
/// whole batch of checks.
pub(crate) fn lapsed_by(d: &Delivery, now_ms: i64) -> bool {
    d.inner.lease_deadline_ms.load(Ordering::Relaxed) <= now_ms
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_foreign_retry_delay_means_the_same_in_every_binding() {
        let after = |ms: Option<f64>| Failure::with_retry_ms("r", ms).retry_after();
        let table = [
            (None, None),
            (Some(f64::NAN), None),
            (Some(-5.0), Some(Duration::ZERO)),
            (Some(0.0), Some(Duration::ZERO)),
            (Some(1500.5), Some(Duration::from_micros(1_500_500))),
            (Some(f64::INFINITY), Some(limits::MAX_DELAY)),
            (Some(1e300), Some(limits::MAX_DELAY)),
        ];
        for (ms, want) in table {
            assert_eq!(after(ms), want, "{ms:?}");
        }
        let long = Failure::retry_in("r", limits::MAX_DELAY * 2);
        assert_eq!(long.retry_after(), Some(limits::MAX_DELAY), "cut to the longest delay");
    }

    #[test]
    fn a_thrown_error_is_worded_alike_in_every_binding() {
        for (name, message, want) in [
            ("ValueError", "boom", "ValueError: boom"),
            ("RangeError", "", "RangeError"),
            ("IllegalStateException", "a: b", "IllegalStateException: a: b"),
        ] {
            assert_eq!(Failure::thrown(name, message), want);
        }
    }
}
